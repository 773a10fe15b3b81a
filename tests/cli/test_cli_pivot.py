"""`bookdup index / dedup / match` with their pivot pair keys (issue 27, on by default) against
a real node: the flag reaches the same index and candidate paths as ``IndexOptions`` /
``CandidateParams.pivot_pairs``, says which books its keys miss, and an index whose books hold
none is searched as before the keys."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from click.testing import CliRunner

from bookdup_cli.main import cli
from indexer.dedup_job import DedupParams, run_dedup
from indexer.dedup_stages import prepare, select_books
from readers.dictionaries import available_pairs
from store.candidates import CandidateParams
from store.connection import ConnectionSettings
from store.keys import PIVOTS
from store.schema import refresh
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt

pytestmark = pytest.mark.skipif(
    ("de", "en") not in available_pairs(), reason="FreeDict deu-eng not installed"
)

ENGLISH, GERMAN_PART = "werther-en-boylan-pg2527", "werther-de-b1-pg2407"
PIVOTED = DedupParams(candidates=CandidateParams(pivot_pairs=True))


def invoke(names, *args: str):
    url = ConnectionSettings.from_env().url
    return CliRunner().invoke(cli, ["--es-url", url, "--index-prefix", names.prefix, *args])


def _relations(client, names) -> list[tuple[str, str, str, str]]:
    refresh(client, names.relations)
    hits = client.search(index=names.relations, size=100)["hits"]["hits"]
    return sorted(
        (h["_source"]["a"], h["_source"]["b"], h["_source"]["relation"], h["_source"]["direction"])
        for h in hits
    )


def _with_pivots(client, names) -> int:
    refresh(client, names.books)
    return client.count(index=names.books, query={"exists": {"field": PIVOTS.field}})["count"]


def test_pivot_pairs_from_the_command_line(es_client, index_names, gutenberg, tmp_path) -> None:
    """Werther's German book 1 is a partial translation of the English Werther: indexed with
    the flag every book gets pivot keys, the German book's own pivot search ranks the English
    first, `dedup --pivot-pairs` finds the pair as the Python API does, the keys outlive the
    dedup job's cluster updates, and a book indexed without the flag is named as one the keys
    miss."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for book in (ENGLISH, GERMAN_PART, "alice-en-pg11"):
        shutil.copy(gutenberg / f"{book}.txt", corpus / f"{book}.txt")
    pride = word_slice(gutenberg_body("pride-en-pg1342"), 9000, 2000)
    write_txt(corpus / "pride.txt", paginate(pride, 40), title="Pride and Prejudice")

    result = invoke(index_names, "index", "--workers", "2", str(corpus))
    assert result.exit_code == 0, result.output
    assert "4 indexed" in result.stdout and "no pivot pair keys" not in result.stderr
    assert _with_pivots(es_client, index_names) == 4

    # the flag's searches alone put the partner first (the last list: the summed pivot hits)
    run = prepare(es_client, index_names, PIVOTED, "pivot-test", None)
    german = next(f for b in select_books(run) for f in b.books if f.book_id == GERMAN_PART)
    assert run.searcher.pivot_queries(german)
    pivot_list = list(run.searcher.ranked([german]))[-1]
    assert (pivot_list.kind, pivot_list.hits[0][0]) == ("en", ENGLISH)
    # the job counted every stored key, and its searches ask only those another book holds
    searcher = run.searcher
    table = searcher.stop.pivots
    assert table is not None and sum(t.n_books for t in table.values()) == 4
    asked = {t for q in searcher.pivot_queries(german) for t in q.terms}
    searcher.stop = dataclasses.replace(searcher.stop, pivots=None)
    every = {t for q in searcher.pivot_queries(german) for t in q.terms}
    searcher.stop = dataclasses.replace(searcher.stop, pivots=table)
    assert asked < every and len(asked) < len(every) / 2

    result = invoke(index_names, "dedup", "--json")
    assert result.exit_code == 0, result.output
    from_cli = json.loads(result.stdout)
    cli_relations = _relations(es_client, index_names)
    translated = [r for r in cli_relations if {r[0], r[1]} == {ENGLISH, GERMAN_PART}]
    assert [r[2] for r in translated] == ["TRANSLATION"], cli_relations

    from_api = run_dedup(es_client, index_names, params=PIVOTED, full=True)
    assert from_api.candidate_pairs == from_cli["candidate_pairs"]
    assert from_api.relations == from_cli["relations"]
    assert _relations(es_client, index_names) == cli_relations

    # the last run had the keys: a run without them is work to do, the next one is not
    result = invoke(index_names, "dedup", "--no-pivot-pairs")
    assert result.exit_code == 0 and "nothing new" not in result.stdout, result.output
    assert "nothing new since" in invoke(index_names, "dedup", "--no-pivot-pairs").stdout

    later = tmp_path / "later"
    later.mkdir()
    write_txt(later / "more.txt", paginate(word_slice(pride, 3000), 40), title="Pride, part")
    assert invoke(index_names, "index", "--no-pivot-pairs", str(later)).exit_code == 0
    assert _with_pivots(es_client, index_names) == 4
    result = invoke(index_names, "dedup")
    assert result.exit_code == 0, result.output
    assert "1 of 5 books hold no pivot pair keys" in result.stderr


def test_match_with_pivot_pairs_lists_the_translation(
    es_client, index_names, gutenberg, tmp_path
) -> None:
    """`bookdup match` (pivot pair keys by default) of a text not in the index goes through the same
    candidate path: the German partial translation matches the English Werther."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for book in (ENGLISH, "alice-en-pg11"):
        shutil.copy(gutenberg / f"{book}.txt", corpus / f"{book}.txt")
    assert invoke(index_names, "index", str(corpus)).exit_code == 0

    result = invoke(index_names, "match", "--json", str(gutenberg / f"{GERMAN_PART}.txt"))
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    listed = {(r["book_id"], r["relation"]) for r in found["relations"]}
    assert (ENGLISH, "TRANSLATION") in listed, found


def test_books_without_pivot_keys_are_searched_as_before(
    es_client, index_names, gutenberg, tmp_path
) -> None:
    """An index whose books hold no pivot pair keys (built by an earlier build, or with
    `--no-pivot-pairs`): the dedup job and `match` turn the keys off rather than search an
    empty field and cut the translated lists those searches stand in for, and the job finds
    the same relations as one run without the keys."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for book in (ENGLISH, GERMAN_PART, "alice-en-pg11"):
        shutil.copy(gutenberg / f"{book}.txt", corpus / f"{book}.txt")
    result = invoke(index_names, "index", "--no-pivot-pairs", str(corpus))
    assert result.exit_code == 0, result.output
    assert _with_pivots(es_client, index_names) == 0

    run = prepare(es_client, index_names, PIVOTED, "pivot-test", None)
    assert run.searcher.params.pivot_pairs is False and run.stop.pivots is None
    default = run_dedup(es_client, index_names, full=True)
    refresh(es_client, index_names.runs)
    [record] = es_client.search(index=index_names.runs, query={"term": {"kind": "dedup"}})["hits"][
        "hits"
    ]
    assert record["_source"]["params"]["pivot_pairs"] is False
    relations = _relations(es_client, index_names)
    assert [r[2] for r in relations if {r[0], r[1]} == {ENGLISH, GERMAN_PART}] == ["TRANSLATION"]
    off = DedupParams(candidates=CandidateParams(pivot_pairs=False))
    without = run_dedup(es_client, index_names, params=off, full=True)
    assert (default.candidate_pairs, default.relations) == (
        without.candidate_pairs,
        without.relations,
    )
    assert _relations(es_client, index_names) == relations
