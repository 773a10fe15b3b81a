"""Search and related read what they show from doc values (store.shown), and a book indexed
before them from its ``_source``: both give what the stored document says (issue 30).

The real-book corpus of tests/query/conftest.py, on a real node."""

from __future__ import annotations

from typing import Any

from indexer.dedup_job import run_dedup
from query.display import display_title
from query.related import OTHER_BOOK_FIELDS, related
from query.search import HIT_FIELDS, MEMBER_FIELDS, search
from store.iterate import iter_documents
from store.shown import MARKER, MAX_SHOWN_CHARS, from_doc_values, shown_fields

QUERIES = ("Project Gutenberg", "Alice", "Christmas", "Tom Sawyer")


def _stored(es_client, index: str) -> dict[str, dict[str, Any]]:
    return {h["_id"]: h["_source"] for h in iter_documents(es_client, index)}


def _pages(es_client, index: str) -> list[dict[str, Any]]:
    return [
        search(es_client, index, q, collapse=c, per_page=20)
        for q in QUERIES
        for c in ("edition", "work", "none")
    ]


def _digest(pages: list[dict[str, Any]]) -> list[list[tuple]]:
    """What each page shows, scores aside (re-written documents change the term statistics)."""
    return [
        sorted(
            (
                h["book_id"],
                h["display_title"],
                h["matching"],
                h["cluster_size"],
                tuple(sorted(m["book_id"] for m in h["members"])),
            )
            for h in page["hits"]
        )
        for page in pages
    ]


def _assert_shown_as_stored(pages: list[dict[str, Any]], stored: dict[str, dict]) -> int:
    """Every hit and member shows its stored fields; returns the number of books checked."""
    checked = 0
    for page in pages:
        for hit in page["hits"]:
            src = stored[hit["book_id"]]
            assert {k: hit[k] for k in HIT_FIELDS} == {k: src.get(k) for k in HIT_FIELDS}
            assert hit["display_title"] == display_title(src)
            for member in hit["members"] if page["collapse"] != "none" else []:
                src = stored[member["book_id"]]
                expected = {k: src.get(k) for k in MEMBER_FIELDS}
                assert {k: member[k] for k in MEMBER_FIELDS} == expected
                assert member["display_title"] == display_title(src)
                checked += 1
    return checked


def _related_as_stored(es_client, names, stored: dict[str, dict]) -> int:
    """Every related book's metadata is what its stored document says; returns how many."""
    checked = 0
    for book_id in stored:
        for r in related(es_client, names.books, names.relations, book_id)["relations"]:
            src = stored[r["book_id"]]
            shown = [k for k in OTHER_BOOK_FIELDS if k != "excerpt"]
            assert {k: r[k] for k in shown} == {k: src.get(k) for k in shown}
            assert r["display_title"] == display_title(src)
            checked += 1
    return checked


def test_hits_and_related_books_show_the_stored_fields_read_from_doc_values(
    es_client, real
) -> None:
    names = real[0]
    stored = _stored(es_client, names.books)
    assert all(MARKER in src for src in stored.values())  # written by the index job
    assert _assert_shown_as_stored(_pages(es_client, names.books), stored) >= len(stored)
    assert _related_as_stored(es_client, names, stored) == 2 * len(real[3])


def test_a_book_indexed_before_the_doc_values_is_read_from_its_source_then_upgraded(
    es_client, real
) -> None:
    """A document without the marker (indexed by an older version) shows the same hit, read
    from ``_source``; the next dedup run writes its display title, even with nothing to
    deduplicate."""
    names = real[0]
    stored = _stored(es_client, names.books)
    before = _pages(es_client, names.books)
    old = sorted(stored)[::2]
    for book_id in old:
        src = {k: v for k, v in stored[book_id].items() if k != MARKER}
        es_client.index(index=names.books, id=book_id, document=src)
    es_client.indices.refresh(index=names.books)
    assert sum(MARKER not in s for s in _stored(es_client, names.books).values()) == len(old)

    after = _pages(es_client, names.books)
    assert _digest(after) == _digest(before)
    _assert_shown_as_stored(after, stored)
    assert _related_as_stored(es_client, names, stored) == 2 * len(real[3])

    # nothing new to deduplicate: the job only writes the missing display titles
    assert run_dedup(es_client, names, full=False).nothing_new_since
    es_client.indices.refresh(index=names.books)
    upgraded = _stored(es_client, names.books)
    assert upgraded == stored  # the marker back on every book, nothing else changed
    assert _digest(_pages(es_client, names.books)) == _digest(before)


def test_a_book_whose_shown_texts_are_too_long_for_a_doc_value_has_an_empty_marker() -> None:
    long = "x" * (MAX_SHOWN_CHARS + 1)
    assert MARKER in shown_fields("Walden", "Thoreau", None, "WALDEN")
    assert shown_fields("Walden", "Thoreau", None, "")[MARKER] == "Walden"
    assert shown_fields(None, None, "Walden", "")[MARKER] == "[Walden]"
    for title, author in ((long, "Thoreau"), ("Walden", long)):
        assert shown_fields(title, author, None, "WALDEN")[MARKER] == ""
    assert from_doc_values({"book_id": ["w"], MARKER: [""]}) is None
    assert from_doc_values({"book_id": ["w"]}) is None
    assert from_doc_values({"book_id": ["w"], MARKER: ["Walden"]})["title"] is None
