""" "Other editions / translations" of an indexed book: its stored relations, from its side,
grouped by relation class, with scores, direction, languages and how the pages map."""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch

from bookdup.pairs import orient
from bookdup.vocabulary import direction_words, part_direction
from query.context import READ_RETRY_S, NotFound
from query.display import CLASS_ORDER, display_title, relation_label
from query.shown import read_body, shown_books
from store.connection import missing_ok
from store.keys import CANDIDATE_KEY_FIELDS, OPTIONAL_KEY_FIELDS
from store.retry import with_retries

#: What a book's view never shows: every candidate-key field (the registry in store.keys, so a
#: new key is hidden without being named here), the verification data and the internals.
BOOK_FIELDS_HIDDEN = [
    *CANDIDATE_KEY_FIELDS,
    *OPTIONAL_KEY_FIELDS,
    "features",
    "extra",
    "raw_hash",
    "source",
]
OTHER_BOOK_FIELDS = [
    "title",
    "author",
    "language",
    "year",
    "n_pages",
    "excerpt",
    "edition_cluster",
    "work_cluster",
]
#: What a related book is read with besides the shown fields (``store.shown``).
OTHER_DOC_VALUES = ["n_pages"]
#: A book with more stored relations than this is shown with the strongest ones only.
MAX_RELATIONS = 1000


def page_mapping(signals: dict[str, Any], this_is_x: bool) -> dict[str, Any] | None:
    """How this book's pages map onto the other's, from the stored page signals.

    The core fits page_y = slope·page_x + offset over the shared text; seen from y the line is
    inverted. None when the relation has no page evidence (pruned, or a translation without
    runs).
    """
    slope, offset = signals.get("slope"), signals.get("offset")
    if not slope or offset is None:
        return None
    if not this_is_x:
        slope, offset = 1.0 / slope, -offset / slope
    cov = ("coverage_x", "coverage_y") if this_is_x else ("coverage_y", "coverage_x")
    pages = ("n_pages_x", "n_pages_y") if this_is_x else ("n_pages_y", "n_pages_x")
    return {
        "slope": round(slope, 4),
        "offset": round(offset, 2),
        "this_pages": signals.get(pages[0]),
        "other_pages": signals.get(pages[1]),
        "this_covered": signals.get(cov[0]),
        "other_covered": signals.get(cov[1]),
        "text": f"page p of this book ≈ page {slope:.2f}·p {offset:+.1f} of the other",
    }


def _oriented(relation: dict[str, Any], book_id: str) -> dict[str, Any]:
    """A stored relation as seen from ``book_id``: the other book and the direction."""
    this_is_a = relation["a"] == book_id
    signals = relation.get("signals") or {}
    stored = part_direction(relation["relation"], relation.get("direction"), signals)
    direction = orient(stored, "side", flip=not this_is_a)
    return {
        "book_id": relation["b"] if this_is_a else relation["a"],
        "relation": relation["relation"],
        "label": relation_label(relation["relation"]),
        "direction": direction,
        "direction_text": direction_words(direction, relation["relation"]),
        "confidence": relation["confidence"],
        "cs": relation["cs"],
        "its": relation["its"],
        "lcs": relation["lcs"],
        "shared": relation["shared"],
        "translated": relation.get("translated", False),
        "languages": relation["languages"],
        "page_mapping": page_mapping(signals, this_is_a),
        "signals": signals,
    }


def _book(client: Elasticsearch, books_index: str, book_id: str) -> dict[str, Any]:
    doc = with_retries(READ_RETRY_S)(missing_ok(client).get)(
        index=books_index, id=book_id, source_excludes=BOOK_FIELDS_HIDDEN
    )
    if not doc.body.get("found"):
        raise NotFound(f"no book with id {book_id!r} in {books_index}")
    book = dict(doc["_source"])
    book["display_title"] = display_title(book)
    return book


def _relations(client: Elasticsearch, relations_index: str, book_id: str) -> list[dict]:
    query = {"bool": {"should": [{"term": {"a": book_id}}, {"term": {"b": book_id}}]}}
    response = with_retries(READ_RETRY_S)(client.search)(
        index=relations_index,
        query=query,
        size=MAX_RELATIONS,
        sort=[{"confidence": "desc"}, {"a": "asc"}, {"b": "asc"}],
        source_excludes=["evidence"],
    ).body
    return [_oriented(hit["_source"], book_id) for hit in response["hits"]["hits"]]


def add_metadata(client: Elasticsearch, books_index: str, relations: list[dict]) -> None:
    """The other book's title, author, language, pages and clusters on each relation, read from
    doc values (``query.shown``)."""
    others = sorted({r["book_id"] for r in relations})
    if not others:
        return
    hits = with_retries(READ_RETRY_S)(client.search)(
        index=books_index,
        query={"ids": {"values": others}},
        size=len(others),
        **read_body(OTHER_DOC_VALUES),
    ).body["hits"]["hits"]
    shown = shown_books(client, books_index, hits, OTHER_BOOK_FIELDS, OTHER_DOC_VALUES)
    meta = {m["book_id"]: m for m in shown}
    for r in relations:
        m = meta.get(r["book_id"])
        if m is None:
            r["display_title"] = f"[{r['book_id']}: no longer indexed]"
            continue
        r.update({k: m.get(k) for k in OTHER_BOOK_FIELDS if k != "excerpt"})
        r["display_title"] = m["display_title"]


def related_books(
    client: Elasticsearch, books_index: str, relations_index: str, book_id: str
) -> dict[str, Any]:
    """The book, its cluster ids, and every stored relation with the other book's metadata.

    Relations are oriented from ``book_id``'s side: ``direction`` is ``"this_in_other"`` or
    ``"other_in_this"`` for containment. Raises NotFound (a KeyError) for a book that is not
    indexed.
    """
    book = _book(client, books_index, book_id)
    book.pop("excerpt", None)
    relations = _relations(client, relations_index, book_id)
    add_metadata(client, books_index, relations)
    relations.sort(key=lambda r: (-r["confidence"], r["book_id"]))
    return {"book": book, "relations": relations}


def group_by_class(relations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Relations in groups of one class each, strongest class first, best first inside."""
    groups = []
    for relation in (*CLASS_ORDER, *sorted({r["relation"] for r in relations} - set(CLASS_ORDER))):
        members = [r for r in relations if r["relation"] == relation]
        if members:
            groups.append(
                {"relation": relation, "label": relation_label(relation), "books": members}
            )
    return groups


def related(
    client: Elasticsearch, books_index: str, relations_index: str, book_id: str
) -> dict[str, Any]:
    """``related_books`` plus the relations grouped by class and counted per class."""
    result = related_books(client, books_index, relations_index, book_id)
    groups = group_by_class(result["relations"])
    result["groups"] = groups
    result["counts"] = {g["relation"]: len(g["books"]) for g in groups}
    return result
