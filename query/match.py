"""Relations of a text that is not in the index: features on the fly, the dedup job's candidate
queries and verification policy, nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.relate import direction_from_side, relate
from readers import iter_books
from readers.dictionaries import Dictionaries
from store.candidates import CandidateParams, CandidateSearcher, StopLists, indexed_languages
from store.features import FeatureCache
from store.schema import IndexNames


def find_related(
    client: Elasticsearch, names: IndexNames, features: BookFeatures
) -> list[dict[str, Any]]:
    """Relations of an unindexed book against every indexed book, best first."""
    params = CandidateParams()
    stop = StopLists.from_index(client, names.books, params)
    lexicons = Dictionaries(enabled=True)
    languages = indexed_languages(client, names.books)
    searcher = CandidateSearcher(client, names.books, params, stop, lexicons, languages)
    cache = FeatureCache(client, names.books, stop.uniq)
    features = cache.put(features)
    pairs = searcher.candidates([features])
    others = cache.get_many(sorted({b if a == features.book_id else a for a, b in pairs}))
    out = []
    for other in others.values():
        result = relate(features, other, lexicons)
        if result is not None:
            out.append({"book_id": other.book_id, **result})
    out.sort(key=lambda r: (-r["confidence"], r["book_id"]))
    return out


def read_one_book(path: Path) -> Book:
    """The first book in ``path`` (any reader format); ValueError naming the problem if none."""
    items = list(iter_books([path]))
    books = [b for b in items if isinstance(b, Book)]
    if not books:
        raise ValueError(str(items[0]) if items else f"{path}: no book found")
    return books[0]


def lookup_book(client: Elasticsearch, names: IndexNames, path: Path) -> dict[str, Any]:
    """Relations of the book in ``path`` (any format) against the index, without indexing it."""
    book = read_one_book(path)
    features = extract_features(book)
    relations = [
        {
            "book_id": r["book_id"],
            "relation": r["relation"],
            "direction": direction_from_side(r.get("direction"), this_is_first=True),
            "confidence": r["confidence"],
            "cs": r["cs"],
            "its": r["its"],
            "lcs": r["lcs"],
            "shared": r["shared"],
            "signals": r.get("signals", {}),
        }
        for r in find_related(client, names, features)
    ]
    book_info = {
        "book_id": book.id,
        "title": book.title,
        "language": features.language,
        "edition_cluster": None,
        "work_cluster": None,
    }
    return {"book": book_info, "relations": relations}
