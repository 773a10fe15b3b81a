"""run_remove on a real Elasticsearch node: relations go, clusters held together by a book split."""

from __future__ import annotations

from pathlib import Path

from bookdup.cluster import cluster_id
from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from indexer.remove_job import run_remove
from store.iterate import iter_documents
from store.runs import get_run
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt

WHOLE, FIRST, LAST, OTHER = "whole", "part-first", "part-last", "other"


def _clusters(client, names) -> dict[str, tuple[str, str]]:
    client.indices.refresh(index=names.books)
    fields = ["edition_cluster", "work_cluster"]
    return {
        h["_id"]: (h["_source"]["edition_cluster"], h["_source"]["work_cluster"])
        for h in iter_documents(client, names.books, source=fields)
    }


def _relations(client, names) -> dict[str, tuple[str, str | None]]:
    client.indices.refresh(index=names.relations)
    return {
        h["_id"]: (h["_source"]["relation"], h["_source"]["direction"])
        for h in iter_documents(client, names.relations)
    }


def _ranks(client, names) -> dict[str, tuple[int, bool]]:
    """Each book's place in its edition cluster and whether it is a part of another book."""
    return {
        h["_id"]: (h["_source"]["edition_rank"], h["_source"]["partial"])
        for h in iter_documents(client, names.books, source=["edition_rank", "partial"])
    }


def test_removing_the_linking_book_splits_its_cluster(
    es_client, index_names, tmp_path: Path
) -> None:
    # "whole" contains its first and its last 40%; the two parts share no text, so only the
    # whole book links them.
    pages = paginate(word_slice(gutenberg_body("sherlock-en-pg1661"), 9000, 2000), 40)
    n = int(len(pages) * 0.4)
    write_txt(tmp_path / f"{WHOLE}.txt", pages)
    write_txt(tmp_path / f"{FIRST}.txt", pages[:n])
    write_txt(tmp_path / f"{LAST}.txt", pages[-n:])
    other = word_slice(gutenberg_body("wuthering-en-pg768"), 6000, 3000)
    write_txt(tmp_path / f"{OTHER}.txt", paginate(other, 40))
    summary = run_index(es_client, index_names, [tmp_path], IndexOptions(workers=2))
    assert summary.indexed == 4
    run_dedup(es_client, index_names)
    assert _relations(es_client, index_names) == {
        f"{FIRST}|{WHOLE}": ("CONTIGUOUS_SUBSET", "a_in_b"),
        f"{LAST}|{WHOLE}": ("CONTIGUOUS_SUBSET", "a_in_b"),
    }
    joined = cluster_id([WHOLE, FIRST, LAST])
    before = _clusters(es_client, index_names)
    assert {before[b] for b in (WHOLE, FIRST, LAST)} == {(joined, joined)}
    ranks = _ranks(es_client, index_names)
    assert ranks[WHOLE] == (0, False)  # the whole shown for its parts
    assert {ranks[FIRST], ranks[LAST]} == {(1, True), (2, True)}

    removed = run_remove(es_client, index_names, [WHOLE, "never-indexed"])
    assert (removed.books_removed, removed.relations_removed) == (1, 2)
    assert removed.missing == ["never-indexed"]
    assert _relations(es_client, index_names) == {}
    after = _clusters(es_client, index_names)
    assert WHOLE not in after
    for book in (FIRST, LAST, OTHER):
        assert after[book] == (cluster_id([book]), cluster_id([book]))
    # "part-first" was the cluster's smallest id, so only "part-last" had to change its ids;
    # both parts lose their place behind the whole (rank, partial flag): two books rewritten
    assert removed.clusters_updated == 2
    assert _ranks(es_client, index_names) == {
        FIRST: (0, False),
        LAST: (0, False),
        OTHER: (0, False),
    }
    run = get_run(es_client, index_names, removed.run_id)
    assert run["status"] == "finished"
    assert run["skipped"] == [{"book": "never-indexed", "reason": "not in the index"}]

    # a later full dedup agrees: the parts stay apart
    again = run_dedup(es_client, index_names)
    assert (again.relations, again.clusters_updated) == ({}, 0)
