""" "Other editions / translations": what the index knows about one book, or about a new text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.features import extract_features
from bookdup.model import Book
from store.iterate import iter_documents
from store.retry import with_retries


def related_books(
    client: Elasticsearch, books_index: str, relations_index: str, book_id: str
) -> dict[str, Any]:
    """The book, its cluster ids, and every stored relation with the other book's metadata.

    Relations are oriented from ``book_id``'s side: ``direction`` is ``"this_in_other"`` or
    ``"other_in_this"`` for containment.
    """
    doc = client.options(ignore_status=404).get(
        index=books_index, id=book_id, source_excludes=["features", "bands", "uniq", "excerpt"]
    )
    if not doc.body.get("found"):
        raise KeyError(f"no book with id {book_id!r} in {books_index}")
    book = doc["_source"]
    query = {"bool": {"should": [{"term": {"a": book_id}}, {"term": {"b": book_id}}]}}
    relations = []
    for hit in iter_documents(client, relations_index, query=query):
        rel = hit["_source"]
        this_is_a = rel["a"] == book_id
        other = rel["b"] if this_is_a else rel["a"]
        direction = rel.get("direction")
        if direction in ("a_in_b", "b_in_a"):
            inside_a = direction == "a_in_b"
            direction = "this_in_other" if inside_a == this_is_a else "other_in_this"
        relations.append(
            {
                "book_id": other,
                "relation": rel["relation"],
                "direction": direction,
                "confidence": rel["confidence"],
                "cs": rel["cs"],
                "its": rel["its"],
                "lcs": rel["lcs"],
                "shared": rel["shared"],
                "languages": rel["languages"],
                "signals": rel.get("signals", {}),
            }
        )
    others = {r["book_id"] for r in relations}
    if others:
        docs = with_retries()(client.mget)(
            index=books_index, ids=sorted(others), source=["title", "author", "language", "year"]
        ).body["docs"]
        meta = {d["_id"]: d["_source"] for d in docs if d.get("found")}
        for r in relations:
            r.update(meta.get(r["book_id"], {}))
    relations.sort(key=lambda r: (-r["confidence"], r["book_id"]))
    return {"book": book, "relations": relations}


def lookup_book(client: Elasticsearch, names: Any, path: Path) -> dict[str, Any]:
    """Relations of the book in ``path`` (any format) against the index, without indexing it."""
    from query.related import find_related
    from readers import iter_books

    items = list(iter_books([path]))
    books = [b for b in items if isinstance(b, Book)]
    if not books:
        reason = str(items[0]) if items else f"{path}: no book found"
        raise ValueError(reason)
    book = books[0]
    features = extract_features(book)
    relations = []
    for r in find_related(client, names, features):
        relations.append(
            {
                "book_id": r["book_id"],
                "relation": r["relation"],
                "direction": {"x_in_y": "this_in_other", "y_in_x": "other_in_this"}.get(
                    r.get("direction") or "", r.get("direction")
                ),
                "confidence": r["confidence"],
                "cs": r["cs"],
                "its": r["its"],
                "lcs": r["lcs"],
                "shared": r["shared"],
                "signals": r.get("signals", {}),
            }
        )
    book_info = {
        "book_id": book.id,
        "title": book.title,
        "language": features.language,
        "edition_cluster": None,
        "work_cluster": None,
    }
    return {"book": book_info, "relations": relations}
