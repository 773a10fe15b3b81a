"""Each stage of the dedup job alone, on a real node: what goes in, what comes out.

The same corpus as test_dedup_job (real Gutenberg text: editions, a volume, an anthology, a
translation, unrelated books), indexed once; the stages are then called one by one, as a
replacement stage would be.
"""

from __future__ import annotations

import dataclasses
import uuid

import numpy as np
import pytest
from elasticsearch import NotFoundError

from bookdup.boilerplate import common_df, frequent_df
from indexer.dedup_stages import (
    DedupParams,
    classify_pairs,
    find_candidates,
    prepare,
    select_books,
    stale_relation_ids,
    submit_candidates,
    write_actions,
)
from indexer.index_job import IndexOptions, run_index
from store.candidates import high_df_terms, winnow_frequencies
from store.iterate import iter_documents
from store.keys import BANDS, STEMS, UNIQ
from store.schema import IndexNames, drop_indices
from tests.fixtures_books import (
    ALICE_DE,
    ALICE_EN,
    PRIDE,
    PRIDE_EDITIONS,
    PRIDE_VOL,
    SCARLET,
    WALDEN,
    build_corpus,
)


@pytest.fixture(scope="module")
def run(es_client, tmp_path_factory):
    """The corpus indexed (no dedup yet) and the run's shared state prepared."""
    corpus = build_corpus(tmp_path_factory.mktemp("corpus"))
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    run_index(es_client, names, corpus.paths, IndexOptions(workers=2))
    yield prepare(es_client, names, DedupParams(batch_size=4), "dedup-test", None)
    drop_indices(es_client, names)


def test_select_books_batches_every_book_with_its_features(run) -> None:
    batches = list(select_books(run))
    ids = [i for b in batches for i in b.ids]
    assert len(ids) == len(set(ids)) == run.stop.n_books == 11
    assert all(len(b.ids) <= 4 for b in batches)
    assert all(not b.skipped for b in batches)
    books = {f.book_id: f for b in batches for f in b.books}
    assert set(books) == set(ids)
    assert books[PRIDE].unique.hashes.size > 500  # features decoded (a 9K-word book), hashes kept


def test_select_books_keeps_the_index_order_across_pages(run, monkeypatch) -> None:
    """Pages read ahead in a thread (pages of 3 here: several per batch and batches across
    pages) come out as the index walk gives them, cut into the same batches."""
    monkeypatch.setattr("indexer.dedup_stages.QUERY_BOOKS_PAGE", 3)
    walked = [h["_id"] for h in iter_documents(run.client, run.names.books, source=False)]
    batches = [b.ids for b in select_books(run)]
    assert batches == [walked[i : i + 4] for i in range(0, len(walked), 4)]


def test_select_books_raises_what_the_page_read_raises(run) -> None:
    """A failed page read (in the read-ahead thread) fails the stage, in the job's thread."""
    gone = dataclasses.replace(run, names=IndexNames(prefix=f"test-gone-{uuid.uuid4().hex[:8]}"))
    with pytest.raises(NotFoundError):
        list(select_books(gone))


def test_prepare_reads_the_stop_lists_each_aggregation_gives_alone(run) -> None:
    """The stop lists, read in a thread beside the lexicons with their aggregations sent at
    once, are those of each aggregation and of the winnowed keys' count, one after the other."""
    client, books, stop = run.client, run.names.books, run.stop
    assert stop.n_books == 11
    assert stop.max_df == run.params.candidates.max_df(11)

    def above(field: str, df: int) -> np.ndarray:
        return np.array(sorted(int(t, 16) for t in high_df_terms(client, books, field, df)))

    assert stop.bands == frozenset(high_df_terms(client, books, BANDS.field, stop.max_df))
    assert np.array_equal(stop.uniq, above(UNIQ.field, stop.max_df))
    assert np.array_equal(stop.stems, above(STEMS.field, stop.max_df))
    assert np.array_equal(stop.frequent, above(UNIQ.field, frequent_df(11) - 1))
    assert np.array_equal(stop.common, above(UNIQ.field, common_df(11)))
    alone = winnow_frequencies(client, books)
    assert stop.winnows is not None and alone is not None
    assert np.array_equal(stop.winnows.keys, alone.keys)
    assert np.array_equal(stop.winnows.counts, alone.counts)


def test_candidates_hold_every_related_pair_and_no_self_pair(run) -> None:
    pairs = {p for b in select_books(run) for p in find_candidates(run, b).pairs}
    assert all(a < b for a, b in pairs)
    editions = sorted(PRIDE_EDITIONS)
    for i, a in enumerate(editions):
        for b in editions[i + 1 :]:
            assert (a, b) in pairs
    assert (ALICE_DE, ALICE_EN) in pairs  # through the translated unique-word query


def test_verify_keeps_related_pairs_and_drops_unrelated_ones(run) -> None:
    pairs = [(PRIDE, PRIDE_VOL), (ALICE_DE, ALICE_EN), (SCARLET, WALDEN)]
    verified = submit_candidates(run, pairs).result()
    assert verified.compared == 3
    kept = {(v.a.book_id, v.b.book_id) for v in verified.pairs}
    assert kept == {(PRIDE, PRIDE_VOL), (ALICE_DE, ALICE_EN)}
    translated = next(v for v in verified.pairs if v.a.book_id == ALICE_DE)
    assert translated.dictionary is not None and translated.verification.its > 0.58


def test_classify_names_the_relation_with_its_direction(run) -> None:
    verified = submit_candidates(run, [(PRIDE, PRIDE_VOL), (ALICE_DE, ALICE_EN)]).result().pairs
    found = {f.pair_id: f for f in classify_pairs(verified)}
    volume = found[f"{PRIDE}|{PRIDE_VOL}"]
    assert (volume.result.relation, volume.result.direction) == (
        "CONTIGUOUS_SUBSET",
        "y_in_x",
    )
    assert found[f"{ALICE_DE}|{ALICE_EN}"].result.relation == "TRANSLATION"
    actions = list(write_actions(run, list(found.values()), "2026-01-01T00:00:00"))
    docs = {a["_id"]: a for a in actions}
    assert set(docs) == set(found)  # relations only: book documents are left alone
    assert docs[f"{PRIDE}|{PRIDE_VOL}"]["_source"]["direction"] == "b_in_a"  # stored wording
    assert docs[f"{PRIDE}|{PRIDE_VOL}"]["_source"]["run_id"] == "dedup-test"


def test_stale_relations_are_those_not_found_again(run, es_client) -> None:
    names = run.names
    for pair_id in ("x|y", "x|z"):
        es_client.index(index=names.relations, id=pair_id, document={"a": "x", "b": pair_id[2]})
    es_client.indices.refresh(index=names.relations)
    assert set(stale_relation_ids(es_client, names, {"x|y"}, None)) == {"x|z"}
    assert set(stale_relation_ids(es_client, names, set(), {"z"})) == {"x|z"}
