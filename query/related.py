""" "Other editions / translations" of an indexed book: its stored relations, from its side."""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch

from bookdup.relate import direction_from_side
from store.iterate import iter_documents
from store.retry import with_retries

BOOK_FIELDS_HIDDEN = ["features", "bands", "uniq", "excerpt"]
OTHER_BOOK_FIELDS = ["title", "author", "language", "year"]


def _oriented(relation: dict[str, Any], book_id: str) -> dict[str, Any]:
    """A stored relation as seen from ``book_id``: the other book and the direction."""
    this_is_a = relation["a"] == book_id
    return {
        "book_id": relation["b"] if this_is_a else relation["a"],
        "relation": relation["relation"],
        "direction": direction_from_side(relation.get("direction"), this_is_a),
        "confidence": relation["confidence"],
        "cs": relation["cs"],
        "its": relation["its"],
        "lcs": relation["lcs"],
        "shared": relation["shared"],
        "languages": relation["languages"],
        "signals": relation.get("signals", {}),
    }


def related_books(
    client: Elasticsearch, books_index: str, relations_index: str, book_id: str
) -> dict[str, Any]:
    """The book, its cluster ids, and every stored relation with the other book's metadata.

    Relations are oriented from ``book_id``'s side: ``direction`` is ``"this_in_other"`` or
    ``"other_in_this"`` for containment. Raises KeyError for a book that is not indexed.
    """
    doc = with_retries()(client.options(ignore_status=404).get)(
        index=books_index, id=book_id, source_excludes=BOOK_FIELDS_HIDDEN
    )
    if not doc.body.get("found"):
        raise KeyError(f"no book with id {book_id!r} in {books_index}")
    query = {"bool": {"should": [{"term": {"a": book_id}}, {"term": {"b": book_id}}]}}
    relations = [
        _oriented(hit["_source"], book_id)
        for hit in iter_documents(client, relations_index, query=query)
    ]
    others = sorted({r["book_id"] for r in relations})
    if others:
        docs = with_retries()(client.mget)(
            index=books_index, ids=others, source=OTHER_BOOK_FIELDS
        ).body["docs"]
        meta = {d["_id"]: d["_source"] for d in docs if d.get("found")}
        for r in relations:
            r.update(meta.get(r["book_id"], {}))
    relations.sort(key=lambda r: (-r["confidence"], r["book_id"]))
    return {"book": doc["_source"], "relations": relations}
