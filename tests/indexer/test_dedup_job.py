"""run_dedup on a real Elasticsearch node: relations and clusters against known ground truth."""

from __future__ import annotations

import time
import uuid

import pytest

from bookdup.cluster import cluster_id
from indexer.dedup_job import DedupParams, run_dedup
from indexer.index_job import IndexOptions, run_index
from store.bulk import bulk_write
from store.candidates import CandidateParams
from store.iterate import iter_documents
from store.schema import IndexNames, drop_indices
from tests.fixtures_books import (
    ALICE_DE,
    ALICE_EN,
    ANTHOLOGY,
    FRANK,
    PRIDE,
    PRIDE_EDITIONS,
    PRIDE_EXACT,
    PRIDE_NOISY,
    PRIDE_REPAG,
    PRIDE_VOL,
    SCARLET,
    WALDEN,
    build_corpus,
)

OPTIONS = IndexOptions(workers=2)

#: Every related pair of the corpus ("a|b" with a < b) → (relation, direction).
EXPECTED = {
    f"{ALICE_DE}|{ALICE_EN}": ("TRANSLATION", None),
    f"{PRIDE}|{PRIDE_EXACT}": ("EXACT", None),  # same pages, another format (ALTO)
    f"{PRIDE}|{PRIDE_NOISY}": ("SAME_PAGINATION", None),  # 2% OCR noise
    f"{PRIDE_EXACT}|{PRIDE_NOISY}": ("SAME_PAGINATION", None),
    f"{PRIDE}|{PRIDE_REPAG}": ("DIFFERENT_PAGINATION", None),  # 27 lines a page, not 40
    f"{PRIDE_EXACT}|{PRIDE_REPAG}": ("DIFFERENT_PAGINATION", None),
    f"{PRIDE_NOISY}|{PRIDE_REPAG}": ("DIFFERENT_PAGINATION", None),
    # the first 40% of the book: contained, with the direction seen from the ids' order
    f"{PRIDE}|{PRIDE_VOL}": ("CONTIGUOUS_SUBSET", "b_in_a"),
    f"{PRIDE_VOL}|{PRIDE_EXACT}": ("CONTIGUOUS_SUBSET", "a_in_b"),
    f"{PRIDE_VOL}|{PRIDE_NOISY}": ("CONTIGUOUS_SUBSET", "a_in_b"),
    f"{PRIDE_VOL}|{PRIDE_REPAG}": ("CONTIGUOUS_SUBSET", "a_in_b"),
    # half of pride + half of frank: overlaps both (but not the volume: another half of pride)
    f"{ANTHOLOGY}|{FRANK}": ("OVERLAPPING_TEXT", None),
    f"{ANTHOLOGY}|{PRIDE}": ("OVERLAPPING_TEXT", None),
    f"{ANTHOLOGY}|{PRIDE_EXACT}": ("OVERLAPPING_TEXT", None),
    f"{ANTHOLOGY}|{PRIDE_NOISY}": ("OVERLAPPING_TEXT", None),
    f"{ANTHOLOGY}|{PRIDE_REPAG}": ("OVERLAPPING_TEXT", None),
}


def relations(client, names: IndexNames) -> dict[str, dict]:
    client.indices.refresh(index=names.relations)
    return {h["_id"]: h["_source"] for h in iter_documents(client, names.relations)}


def clusters(client, names: IndexNames) -> dict[str, tuple[str, str]]:
    client.indices.refresh(index=names.books)
    fields = ["edition_cluster", "work_cluster"]
    return {
        h["_id"]: (h["_source"]["edition_cluster"], h["_source"]["work_cluster"])
        for h in iter_documents(client, names.books, source=fields)
    }


def comparable(rels: dict[str, dict]) -> dict[str, dict]:
    """Relations without what legitimately differs between runs (run id, time)."""
    return {
        k: {f: v for f, v in r.items() if f not in ("run_id", "created_at")}
        for k, r in rels.items()
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return build_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def deduped(es_client, corpus):
    """The corpus indexed and deduplicated once (a full run) in its own prefix."""
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    run_index(es_client, names, corpus.paths, OPTIONS)
    summary = run_dedup(es_client, names)
    yield names, summary, relations(es_client, names), clusters(es_client, names)
    drop_indices(es_client, names)


def test_relations_and_classes_match_the_ground_truth(deduped) -> None:
    _, summary, rels, _ = deduped
    found = {k: (r["relation"], r["direction"]) for k, r in rels.items()}
    assert found == EXPECTED  # and so every unrelated pair (walden, scarlet, ...) is absent
    counts: dict[str, int] = {}
    for relation, _ in EXPECTED.values():
        counts[relation] = counts.get(relation, 0) + 1
    assert summary.relations == counts
    assert summary.books == summary.query_books == 11
    assert summary.skipped == []
    assert summary.verified_pairs >= len(EXPECTED)
    translation = rels[f"{ALICE_DE}|{ALICE_EN}"]
    assert translation["translated"] is True and translation["languages"] == ["de", "en"]
    assert translation["its"] > 0.58  # TRANS-its well above the classifier's ramp
    exact = rels[f"{PRIDE}|{PRIDE_EXACT}"]
    assert (exact["cs"], exact["its"], exact["translated"]) == (1.0, 1.0, False)
    volume = rels[f"{PRIDE}|{PRIDE_VOL}"]
    assert volume["x"] > volume["y"] > volume["lcs"] > 100  # the whole has more unique words


def test_clusters_group_editions_and_works(deduped) -> None:
    _, summary, _, ids = deduped
    editions = {b: e for b, (e, _) in ids.items()}
    works = {b: w for b, (_, w) in ids.items()}
    pride_cluster = cluster_id(PRIDE_EDITIONS)
    # same-language editions, the volume included, share one edition (and work) cluster
    assert {editions[b] for b in PRIDE_EDITIONS} == {pride_cluster}
    assert {works[b] for b in PRIDE_EDITIONS} == {pride_cluster}
    # the anthology overlaps pride and frank but joins neither: it would chain the two works
    assert editions[ANTHOLOGY] == works[ANTHOLOGY] == cluster_id([ANTHOLOGY])
    assert editions[FRANK] == works[FRANK] == cluster_id([FRANK])
    # a translation is another edition cluster, the same work cluster
    assert editions[ALICE_EN] == cluster_id([ALICE_EN])
    assert editions[ALICE_DE] == cluster_id([ALICE_DE])
    assert works[ALICE_EN] == works[ALICE_DE] == cluster_id([ALICE_DE, ALICE_EN])
    # unrelated books are singletons under their own id
    for book in (WALDEN, SCARLET):
        assert editions[book] == works[book] == cluster_id([book])
    assert summary.edition_clusters == len(set(editions.values())) == 7
    assert summary.work_clusters == len(set(works.values())) == 6
    # only books whose ids moved away from their own singleton id were written
    assert summary.clusters_updated == len(PRIDE_EDITIONS) - 1 + 1  # 4 pride books + alice-en


def test_the_books_the_cluster_stage_rewrote_are_merged_and_committed(es_client, deduped) -> None:
    """The cluster stage rewrites books, and the job merges their segments (as the index job
    does) and commits them: a segment whose every book it rewrote is dropped at a commit, and
    left to the node's next idle flush it kept twice the index on disk (1K books: 74.3 → 37.8
    MB at the commit); a merge the node ran after the commit kept 2.5 times (40.8 → 101 MB)."""
    names, summary, _, _ = deduped
    assert summary.clusters_updated > 0
    segments = es_client.cat.segments(index=names.books, format="json").body
    assert len({(s["shard"], s["prirep"]) for s in segments}) == len(segments)  # one a shard
    assert all(s["committed"] == "true" and s["searchable"] == "true" for s in segments)


def test_the_cleanest_complete_edition_represents_its_cluster(es_client, deduped) -> None:
    """The edition cluster's rank: the clean complete editions first, the noisy scan after
    them, the first volume last (a part of the others), flagged as partial."""
    names = deduped[0]
    fields = ["edition_rank", "partial"]
    ranks = {
        h["_id"]: (h["_source"]["edition_rank"], h["_source"]["partial"])
        for h in iter_documents(es_client, names.books, source=fields)
    }
    assert sorted(ranks[b] for b in (PRIDE, PRIDE_EXACT, PRIDE_REPAG)) == [
        (0, False),
        (1, False),
        (2, False),
    ]
    assert (ranks[PRIDE_NOISY], ranks[PRIDE_VOL]) == ((3, False), (4, True))
    assert ranks[ALICE_EN] == ranks[ALICE_DE] == (0, False)  # a translation is no part


def book_versions(client, names: IndexNames) -> dict[str, int]:
    client.indices.refresh(index=names.books)
    body = client.search(index=names.books, size=100, version=True, source=False).body
    return {h["_id"]: h["_version"] for h in body["hits"]["hits"]}


def test_a_second_full_run_changes_nothing(es_client, deduped) -> None:
    names, first, rels, ids = deduped
    versions = book_versions(es_client, names)
    again = run_dedup(es_client, names)
    assert book_versions(es_client, names) == versions  # no book document rewritten
    assert again.clusters_updated == 0
    assert again.stale_relations_removed == 0
    assert again.relations == first.relations
    assert comparable(relations(es_client, names)) == comparable(rels)
    assert clusters(es_client, names) == ids


def test_the_cluster_stage_reads_what_the_books_and_relations_hold(es_client, deduped) -> None:
    """`compute_clusters` reads doc values: the same values as the stored sources."""
    from indexer.clustering import STORED_FIELDS, compute_clusters

    names = deduped[0]
    es_client.indices.refresh(index=[names.books, names.relations])
    clustering = compute_clusters(es_client, names)
    stored = {
        h["_id"]: tuple(h["_source"].get(f) for f in STORED_FIELDS)
        for h in iter_documents(es_client, names.books, source=STORED_FIELDS)
    }
    assert clustering.current == stored
    assert clustering.changed() == []  # and the clusters computed from the relations agree


def test_a_pool_of_workers_finds_what_one_process_finds(es_client, deduped) -> None:
    """Verification in worker processes (issue 28): field for field the relations, counts and
    clusters of the in-process path, on the same index."""
    names, _, rels, ids = deduped
    one = run_dedup(es_client, names, params=DedupParams(verify_workers=1))
    serial = comparable(relations(es_client, names))
    two = run_dedup(es_client, names, params=DedupParams(verify_workers=2))
    assert comparable(relations(es_client, names)) == serial == comparable(rels)
    assert (two.relations, two.verified_pairs) == (one.relations, one.verified_pairs)
    assert two.verify_fallbacks == one.verify_fallbacks == 0
    assert clusters(es_client, names) == ids
    # where the cores went: in one process the driver verified, with a pool the workers did
    t1, t2 = one.timings, two.timings
    assert t1["workers_cpu_s"] == 0 < t2["workers_cpu_s"]
    assert 0 < t1["search_cpu_s"] <= t1["driver_cpu_s"]
    # the node's figure is reported; its CPU counter is refreshed coarsely, so a run this
    # short may read 0 (a strict > 0 failed now and then)
    assert min(t1["node_cpu_s"], t2["node_cpu_s"]) >= 0


def test_screened_pairs_verified_in_windows_change_nothing(es_client, deduped) -> None:
    """Translated candidates wait and go to the workers grouped by the book they translate
    (issue 28): in a window after every one-book batch, or each batch's with it (the default
    at this size: a worker's cache holds the collection), the same relations, counts and
    clusters."""
    names, _, rels, ids = deduped
    screen_all = CandidateParams(max_translation_candidates=0)  # every translated hit screened
    at_end = run_dedup(es_client, names, params=DedupParams(candidates=screen_all))
    assert at_end.screened_pairs > 0 and at_end.relations["TRANSLATION"] == 1
    assert comparable(relations(es_client, names)) == comparable(rels)
    params = DedupParams(
        candidates=screen_all, batch_size=1, translation_window=1, verify_workers=2
    )
    windows = run_dedup(es_client, names, params=params)
    assert comparable(relations(es_client, names)) == comparable(rels)
    counted = ("relations", "candidate_pairs", "verified_pairs", "screened_pairs", "screened_out")
    assert [getattr(windows, c) for c in counted] == [getattr(at_end, c) for c in counted]
    assert clusters(es_client, names) == ids


def test_incremental_dedup_equals_a_full_run(es_client, index_names, corpus, deduped) -> None:
    _, _, full_rels, full_ids = deduped
    first_half = [p for p in corpus.paths if p.suffix in (".txt", ".jsonl")]
    second_half = [p for p in corpus.paths if p not in first_half]
    assert first_half and second_half
    first = run_index(es_client, index_names, first_half, OPTIONS)
    run_dedup(es_client, index_names)
    second = run_index(es_client, index_names, second_half, OPTIONS)
    assert first.indexed + second.indexed == len(corpus.ids)

    incremental = run_dedup(es_client, index_names, since=second.run_id)
    assert incremental.query_books == second.indexed  # only the new books were queried
    assert comparable(relations(es_client, index_names)) == comparable(full_rels)
    assert clusters(es_client, index_names) == full_ids


def searched_clusters(client, names: IndexNames) -> dict[str, str]:
    """Edition cluster ids as a search sees them now (no refresh first)."""
    body = client.search(index=names.books, size=100, source=["edition_cluster"]).body
    return {h["_id"]: h["_source"]["edition_cluster"] for h in body["hits"]["hits"]}


def refresh_interval(client, names: IndexNames) -> str | None:
    body = client.indices.get_settings(index=names.books, name="index.refresh_interval").body
    # an index whose setting is the default is left out of the answer
    values = [v["settings"].get("index", {}).get("refresh_interval") for v in body.values()]
    return values[0] if values else None


def test_new_cluster_ids_become_searchable_all_at_once(es_client, index_names, corpus) -> None:
    """Written with refresh paused, new ids stay invisible to search until one refresh
    publishes all of them; a job killed in between leaves no paused index behind."""
    from indexer.clustering import apply_clusters, compute_clusters
    from store.schema import ensure_indices, paused_refresh

    run_index(es_client, index_names, corpus.paths, OPTIONS)
    run_dedup(es_client, index_names)
    final = {b: e for b, (e, _) in clusters(es_client, index_names).items()}
    singletons = [
        {
            "_op_type": "update",
            "_index": index_names.books,
            "_id": b,
            "doc": {"edition_cluster": cluster_id([b]), "work_cluster": cluster_id([b])},
        }
        for b in final
    ]
    bulk_write(es_client, singletons, refresh="wait_for")
    clustering = compute_clusters(es_client, index_names)
    assert len(clustering.changed()) >= len(PRIDE_EDITIONS)
    with paused_refresh(es_client, index_names.books):
        assert refresh_interval(es_client, index_names) == "-1"
        assert apply_clusters(es_client, index_names, clustering) == len(clustering.changed())
        time.sleep(1.5)  # longer than the default 1 s refresh interval
        assert searched_clusters(es_client, index_names) == {b: cluster_id([b]) for b in final}
        es_client.indices.refresh(index=index_names.books)
        assert searched_clusters(es_client, index_names) == final
    assert refresh_interval(es_client, index_names) is None  # back to the default

    es_client.indices.put_settings(
        index=index_names.books, settings={"index": {"refresh_interval": "-1"}}
    )  # what a job killed inside the pause leaves
    ensure_indices(es_client, index_names)
    assert refresh_interval(es_client, index_names) is None


def test_a_dask_cluster_finds_what_one_process_finds(es_client, deduped) -> None:
    """Verification on a two-worker Dask LocalCluster (``--scheduler local``, issue 31): the
    relations, counts and clusters of the in-process path, on the same index."""
    pytest.importorskip("distributed")
    names, _, rels, ids = deduped
    one = run_dedup(es_client, names, params=DedupParams(verify_workers=1))
    params = DedupParams(verify_workers=2, verify_scheduler="local")
    dask = run_dedup(es_client, names, params=params)
    assert comparable(relations(es_client, names)) == comparable(rels)
    assert (dask.relations, dask.verified_pairs) == (one.relations, one.verified_pairs)
    assert dask.verify_fallbacks == 0
    assert clusters(es_client, names) == ids
