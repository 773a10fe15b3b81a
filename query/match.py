"""Relations of a text that is not in the index: features on the fly, the dedup job's candidate
queries and verification policy, nothing written.

The text is searched under a name of its own (``MATCH_PREFIX`` + its id); an indexed copy of
it (the same content hash, whatever its id) is reported as ``indexed_as`` and left out of the
related books.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.cluster import EDITION_RELATIONS, WORK_RELATIONS
from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.pairs import orient
from bookdup.relate import (
    Lexicons,
    Link,
    VerifiedPair,
    classify_verified,
    pairs_through_translations,
    plan_candidate,
    verify_detached,
)
from bookdup.vocabulary import direction_words, part_direction
from query.context import READ_RETRY_S, BadRequest, ReadSide
from query.display import display_title, relation_label
from query.related import add_metadata, group_by_class
from readers import iter_books
from readers.common import DEFAULT_LINES_PER_PAGE, split_pages
from readers.dictionaries import Dictionaries
from store.features import prepare_features
from store.holders import IndexedBooks
from store.links import stored_links
from store.retry import with_retries
from store.schema import IndexNames

MATCH_PREFIX = "match:"
#: A text longer than this is refused (a 1M-word book is ~6 MB of text).
MAX_TEXT_CHARS = 20_000_000
MIN_TEXT_WORDS = 50


#: Runs ``fn(*args)`` and answers its result. The server runs verification in processes of its
#: own (``server.workers``: ``fn`` and its arguments are pickled); None runs it in the caller's
#: thread, under ``ReadSide.compute_lock`` (the CLI).
Compute = Callable[..., Any]

#: Each process's lexicons by whether translations are on (``verify_candidates`` in a worker).
_LEXICONS: dict[bool, Dictionaries] = {}


def find_related(
    rs: ReadSide, features: BookFeatures, compute: Compute | None = None
) -> list[dict[str, Any]]:
    """Relations of an unindexed book against every indexed book, best first.

    Each result is ``bookdup.relate.relate``'s dict (x = the unindexed book) plus ``book_id``.
    The candidates and their features are read here; ``compute`` verifies them.
    """
    state = rs.state()
    query = prepare_features(
        dataclasses.replace(features, book_id=MATCH_PREFIX + features.book_id), state.stop
    )
    with rs.compute_lock:  # the searcher and the feature cache are not thread-safe
        found = list(state.searcher.screened_candidates([query]))
        ids = {_other(query, pair) for pair, _ in found} - {query.book_id}
        screened = ids - {_other(query, pair) for pair, screened in found if not screened}
        others = _features(rs, ids)
    out = _verified(rs, query, others, screened, compute)
    # as the dedup job does: the found translations' same-language relatives too
    languages = {f.book_id: f.language for f in others}
    translated = {r["book_id"] for r in out if r["relation"] == "TRANSLATION"}
    links = [
        Link(query.book_id, t, True, (query.language, languages[t])) for t in sorted(translated)
    ]
    links += stored_links(rs.client, rs.names, translated) if translated else []
    suggested = {
        a if b == query.book_id else b
        for a, b in pairs_through_translations(links)
        if query.book_id in (a, b)
    }
    # a screened-out book is verified in full when a found translation suggests it
    settled = (ids - screened) | {r["book_id"] for r in out} | {query.book_id}
    if suggested - settled:
        with rs.compute_lock:
            others = _features(rs, suggested - settled)
        out += _verified(rs, query, others, frozenset(), compute)
    out.sort(key=lambda r: (-r["confidence"], r["book_id"]))
    return out


def _other(query: BookFeatures, pair: tuple[str, str]) -> str:
    a, b = pair
    return b if a == query.book_id else a


def _features(rs: ReadSide, ids: set[str]) -> list[BookFeatures]:
    return list(rs.state().cache.get_many(sorted(ids)).values())


def _verified(
    rs: ReadSide,
    query: BookFeatures,
    others: list[BookFeatures],
    screened: AbstractSet[str],
    compute: Compute | None,
) -> list[dict[str, Any]]:
    """The related ones of ``others``: verified here or by ``compute``, classified here, where
    the index answers for the books beside each pair (``store.holders``), as in the dedup job."""
    if not others:
        return []
    if compute is None:
        with rs.compute_lock:  # the core's cache of prepared sequences is not thread-safe
            verified = verified_among(query, others, rs.lexicons, screened)
    else:
        verified = compute(verify_candidates, query, others, rs.lexicons.enabled, screened)
    collection = IndexedBooks(rs.client, rs.names.books)
    with rs.compute_lock:  # milliseconds a pair: the signals, and a count for a frame
        results = [(pair.b.book_id, classify_verified(pair, collection)) for pair in verified]
    return [{"book_id": i, **r.to_dict()} for i, r in results if r.relation != "UNRELATED"]


def verified_among(
    query: BookFeatures,
    others: list[BookFeatures],
    lexicons: Lexicons,
    screened: AbstractSet[str] = frozenset(),
) -> list[VerifiedPair]:
    """``query`` verified against each of ``others`` under the job's plans (those of
    ``screened`` are screened candidates): the pairs that pass, ready to pickle."""
    out = []
    for other in others:
        plan = plan_candidate(query, other, lexicons, screened=other.book_id in screened)
        verified = verify_detached(query, other, plan) if plan is not None else None
        if verified is not None:
            out.append(verified)
    return out


def verify_candidates(
    query: BookFeatures,
    others: list[BookFeatures],
    translations: bool,
    screened: AbstractSet[str] = frozenset(),
) -> list[VerifiedPair]:
    """``verified_among`` in a worker process: its lexicons are loaded there once and kept."""
    if translations not in _LEXICONS:
        _LEXICONS[translations] = Dictionaries(enabled=translations)
    return verified_among(query, others, _LEXICONS[translations], screened)


def match_features(book: Book) -> BookFeatures:
    """The features of a text to match (BadRequest when there are too few words)."""
    features = extract_features(book)
    if features.n_words < MIN_TEXT_WORDS or "empty" in features.flags:
        raise BadRequest(f"{book.id}: too little text to match ({features.n_words} words)")
    return features


def read_one_book(path: Path) -> Book:
    """The first book in ``path`` (any reader format); BadRequest naming the problem if none."""
    items = list(iter_books([path]))
    books = [b for b in items if isinstance(b, Book)]
    if not books:
        raise BadRequest(str(items[0]) if items else f"{path}: no book found")
    return books[0]


def book_from_text(text: str, *, book_id: str = "text", title: str | None = None) -> Book:
    """A book from pasted text: pages at form feeds, else every ``DEFAULT_LINES_PER_PAGE``
    lines (as the readers page a text file)."""
    if len(text) > MAX_TEXT_CHARS:
        raise BadRequest(f"the text is too long ({len(text):,} > {MAX_TEXT_CHARS:,} characters)")
    if len(text.split()) < MIN_TEXT_WORDS:
        raise BadRequest(f"the text is too short to match (fewer than {MIN_TEXT_WORDS} words)")
    return Book(id=book_id, pages=split_pages(text, DEFAULT_LINES_PER_PAGE), title=title)


def _relation_row(r: dict[str, Any]) -> dict[str, Any]:
    stored = part_direction(r["relation"], r.get("direction"), r.get("signals"))
    direction = orient(stored, "side")
    return {
        "book_id": r["book_id"],
        "relation": r["relation"],
        "label": relation_label(r["relation"]),
        "direction": direction,
        "direction_text": direction_words(direction, r["relation"]),
        "confidence": r["confidence"],
        "cs": r["cs"],
        "its": r["its"],
        "lcs": r["lcs"],
        "shared": r["shared"],
        "translated": r.get("dictionary") is not None,
        "languages": r["languages"],
        "signals": r.get("signals", {}),
    }


def _would_join(relations: list[dict[str, Any]]) -> dict[str, str | None]:
    """The clusters the text would join if indexed: those of its best edition / work match."""
    edition = next((r for r in relations if r["relation"] in EDITION_RELATIONS), None)
    work = next((r for r in relations if r["relation"] in WORK_RELATIONS), None)
    return {
        "edition_cluster": edition.get("edition_cluster") if edition else None,
        "work_cluster": work.get("work_cluster") if work else None,
    }


#: At most this many indexed copies of one text are named.
MAX_COPIES = 20


def indexed_copies(rs: ReadSide, features: BookFeatures, book_id: str) -> list[dict[str, Any]]:
    """The indexed books with the same content hash as ``features`` (the same words in the
    same order), the one with ``book_id`` first, then by id."""
    response = with_retries(READ_RETRY_S)(rs.client.search)(
        index=rs.names.books,
        query={"term": {"content_hash": features.content_hash}},
        size=MAX_COPIES,
        source=["edition_cluster", "work_cluster"],
    ).body
    copies = [{"book_id": h["_id"], **h["_source"]} for h in response["hits"]["hits"]]
    copies.sort(key=lambda c: (c["book_id"] != book_id, c["book_id"]))
    return copies


def match(rs: ReadSide, book: Book, compute: Compute | None = None) -> dict[str, Any]:
    """Relations of ``book`` against the index; nothing is written. ``compute`` runs the
    CPU-bound part, feature extraction and verification (see ``Compute``).

    A text already indexed (the same content hash) is said to be (``indexed_as``: the copy's
    id, the one with the text's own id if there are several) and that copy is not listed
    among its related books: they are the copy's.
    """
    rs.state()  # the index first: a node that is down answers before any extraction is spent
    features = compute(match_features, book) if compute else match_features(book)
    copies = indexed_copies(rs, features, book.id) if features.content_hash else []
    copy = copies[0] if copies else None  # the copy with the same id, else the first
    relations = [
        _relation_row(r)
        for r in find_related(rs, features, compute)
        if copy is None or r["book_id"] != copy["book_id"]
    ]
    add_metadata(rs.client, rs.names.books, relations)
    book_info = {
        "book_id": book.id,
        "title": book.title,
        "display_title": display_title({"title": book.title, "excerpt": _opening(book)}),
        "language": features.language,
        "n_words": features.n_words,
        "n_pages": features.n_pages,
        "n_unique": len(features.unique.hashes),
        "indexed": copy is not None,
        "indexed_as": copy["book_id"] if copy else None,
        **(
            {k: copy.get(k) for k in ("edition_cluster", "work_cluster")}
            if copy
            else _would_join(relations)
        ),
    }
    groups = group_by_class(relations)
    return {
        "book": book_info,
        "relations": relations,
        "groups": groups,
        "counts": {g["relation"]: len(g["books"]) for g in groups},
    }


def _opening(book: Book) -> str:
    return " ".join(" ".join(book.pages[:3]).split()[:300])


def lookup_book(client: Elasticsearch, names: IndexNames, path: Path) -> dict[str, Any]:
    """Relations of the book in ``path`` (any format) against the index, without indexing it."""
    return match(ReadSide(client, names), read_one_book(path))
