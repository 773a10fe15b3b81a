"""The per-book half of `bookdup index`: what runs in the worker processes.

Reading, parsing, hashing and feature extraction of one work item. Everything here returns an
`Outcome` rather than raising, because an exception crossing the process pool would stop the
whole job for one bad book; the main process (`indexer.index_job`) settles the outcomes.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any

from bookdup.cluster import cluster_id
from bookdup.features import FEATURES_VERSION, FeatureParams, extract_features, features_to_doc
from bookdup.model import Book
from bookdup.pivot import PivotLexicons
from bookdup.titles import title_from_text
from readers import DEFAULT_MAX_BOOK_BYTES, ReadError, Source, read_source
from readers.common import decoding_warning
from readers.dictionaries import Dictionaries
from store.bulk import add_fields, encode_source
from store.keys import document_keys, pivot_document_keys
from store.shown import shown_fields

#: Pages searched for a title the text names (bookdup.titles reads their first characters).
TITLE_PAGES = 3
EXCERPT_WORDS = 300  # enough text for catalog search snippets without storing whole books
MAX_ID_BYTES = 512  # Elasticsearch refuses a longer _id, and with it the whole bulk request
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """Pool initializer: the kernel kills this worker when the job's process dies.

    A job killed with SIGKILL cannot stop its pool, and idle workers would wait on their queue
    forever (seen: alive 17 minutes later). ``parent`` is the job's pid. Linux only; elsewhere
    a no-op.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


def raw_hash(book: Book) -> str:
    """Hash of everything that goes into a book's document, to skip unchanged books on re-runs."""
    h = hashlib.sha1()
    meta = (book.id, book.title, book.author, book.language, book.year)
    h.update(repr(meta).encode("utf-8"))
    for page in book.pages:
        h.update(page.encode("utf-8", "surrogatepass"))
        h.update(b"\f")
    return h.hexdigest()


def _excerpt(book: Book) -> str:
    """The first words of the book, read page by page so a huge book is never split whole."""
    words: list[str] = []
    for page in book.pages:
        words.extend(page.split())
        if len(words) >= EXCERPT_WORDS:
            break
    return " ".join(words[:EXCERPT_WORDS])


def found_title(book: Book) -> str | None:
    """The title the book's opening pages name (``bookdup.titles``), kept beside the reader's
    title: the read side shows it, in brackets, when the reader gave none."""
    return title_from_text("\n".join(book.pages[:TITLE_PAGES]))


@functools.cache
def pivot_lexicons() -> PivotLexicons:
    """The installed lexicons into English, loaded once per worker process on first need: a
    pivot key or a noisy book's stems (issue 27)."""
    return PivotLexicons.from_lexicons(Dictionaries(True))


def build_document(
    book: Book, uniq_modulus: int, params: FeatureParams, pivots: PivotLexicons | None = None
) -> dict[str, Any]:
    """The books-index document for one book (runs in worker processes); with ``pivots``, its
    pivot pair keys too (``store.keys.PIVOTS``)."""
    features = extract_features(book, params)
    own_cluster = cluster_id([book.id])
    optional = pivot_document_keys(features, pivots) if pivots is not None else {}
    shown = shown_fields(book.title, book.author, found_title(book), _excerpt(book))
    return {
        "book_id": book.id,
        "author": book.author,
        "year": book.year,
        "language": features.language,
        "declared_language": book.language,
        "language_confidence": features.language_confidence,
        "source": book.source,
        "raw_hash": raw_hash(book),
        "content_hash": features.content_hash,
        "n_words": features.n_words,
        "n_pages": features.n_pages,
        # len(unique) counts the hashes, one per unique word: the same number as the words,
        # which are always present in freshly extracted features
        "n_unique": len(features.unique),
        "flags": list(features.flags),
        **shown,
        # every candidate-key field (bands, uniq, stems, winnows): the registry in store.keys
        **document_keys(features, uniq_modulus, pivot_lexicons),
        **optional,
        "features": features_to_doc(features),
        "features_version": FEATURES_VERSION,
        "extra": book.extra,
        "edition_cluster": own_cluster,
        "work_cluster": own_cluster,
        # a singleton until the next dedup run's cluster stage (indexer.clustering)
        "edition_rank": 0,
        "partial": False,
    }


def stored_verdict(
    book_id: str, source: str | None, digest: str, stored: dict[str, Any] | None
) -> str | None:
    """What the stored document with the book's id says: None (index the book), "unchanged", or
    the reason it is refused (another file's book holds the id)."""
    if stored is None:
        return None
    if stored.get("raw_hash") == digest:
        # Same id, same content: unchanged even if its file moved or, in JSONL, its line
        # number shifted (both are part of ``source``) — unless its features were extracted
        # by an older version, which lacks what the classifier now reads.
        if stored.get("features_version", 1) >= FEATURES_VERSION:
            return "unchanged"
        return None
    if stored.get("source") and source and stored["source"] != source:
        return f"duplicate id {book_id!r}: already indexed from {stored['source']}"
    return None


@dataclass(frozen=True)
class Task:
    """The options a worker needs, sent with every work item."""

    lines_per_page: int
    encoding: str | None
    uniq_modulus: int
    params: FeatureParams
    max_book_bytes: int | None = DEFAULT_MAX_BOOK_BYTES
    #: fill the optional pivot pair keys (``IndexOptions.pivot_pairs``)
    pivot_pairs: bool = False


@dataclass(frozen=True)
class Document:
    """A book's document, encoded in the worker as the client would encode it: the job's
    process sends these bytes as they are, instead of unpickling ~0.25 MB of features a book
    and encoding them (twice: to size the bulk request, then to send it)."""

    body: bytes  # the JSON object, without the job's own fields (`stamped`)
    warning: str | None  # readers.common.decoding_warning of the book's ``extra``

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Document:
        return cls(encode_source(doc), decoding_warning(doc.get("extra") or {}))

    def stamped(self, fields: dict[str, Any]) -> bytes:
        """The document with the job's ``fields`` added last."""
        return add_fields(self.body, fields)


@dataclass
class Outcome:
    """What became of one work item, handed back to the main process in reading order.

    ``book_id`` is None for input that could not be read (``verdict`` says why). ``verdict``
    is otherwise the stored-document check (`stored_verdict`) when ``checked``, i.e. when it
    was made under the book's real id; ``result`` is the document or the extraction error when
    the book was extracted (the document encoded, `Document`).
    """

    where: str
    book_id: str | None = None
    source: str | None = None
    digest: str = ""
    verdict: str | None = None
    checked: bool = True
    result: Document | str | None = None


def unindexable(book: Book) -> str | None:
    """Why a book read without error still cannot be indexed, before extraction: no pages, or
    an id Elasticsearch refuses (which would fail the bulk request of 20 books with it)."""
    if not book.pages:
        return "book has no pages"
    size = len(book.id.encode("utf-8", "surrogatepass"))
    if size > MAX_ID_BYTES:
        return f"id is {size} bytes long; Elasticsearch allows at most {MAX_ID_BYTES}"
    return None


def extract(
    book: Book, uniq_modulus: int, params: FeatureParams, pivot_pairs: bool = False
) -> dict[str, Any] | str:
    """A document, or the error message: one bad book must not stop thousands. A book without
    a single word (a scan whose OCR text is missing) is such an error: it has nothing to match.
    """
    refused = unindexable(book)
    if refused:
        return refused
    try:
        pivots = pivot_lexicons() if pivot_pairs else None
        doc = build_document(book, uniq_modulus, params, pivots)
    except Exception as exc:  # noqa: BLE001 - never raise across processes
        return f"feature extraction failed: {type(exc).__name__}: {exc}"
    if doc["n_words"] == 0:
        pages = len(book.pages)
        return f"book has no words: not one letter on its {pages} page(s) (OCR text missing?)"
    return doc


def encoded(result: dict[str, Any] | str) -> Document | str:
    """What `extract` gave, a document encoded for the bulk request."""
    return Document.of(result) if isinstance(result, dict) else result


def read_error(error: ReadError) -> Outcome:
    """A failure at its file, and line when the reader knows it (JSONL, XML)."""
    where = error.path if error.line is None else f"{error.path}:{error.line}"
    return Outcome(where, verdict=error.reason)


def checked_book(book: Book, digest: str, stored: dict[str, Any] | None) -> Outcome:
    """A book whose stored document was looked up under its own id; not extracted yet."""
    verdict = stored_verdict(book.id, book.source, digest, stored)
    return Outcome(book.source or book.id, book.id, book.source, digest, verdict)


def build(book: Book, digest: str, task: Task) -> Outcome:
    """Worker entry point for a book read in the main process (a JSONL record): extraction."""
    result = encoded(extract(book, task.uniq_modulus, task.params, task.pivot_pairs))
    return Outcome(book.source or book.id, book.id, book.source, digest, result=result)


def read_and_build(source: Source, stored: dict[str, Any] | None, task: Task) -> Outcome:
    """Worker entry point for a book file or page folder: read and parse it, hash it, and unless
    ``stored`` (the stored document under the id the file implies) shows it unchanged or
    refused, extract it. Never raises across processes."""
    try:
        (item,) = read_source(
            source,
            lines_per_page=task.lines_per_page,
            encoding=task.encoding,
            max_bytes=task.max_book_bytes,
        )
    except Exception as exc:  # noqa: BLE001 - a reader bug must not stop the job either
        return Outcome(str(source.path), verdict=f"read failed: {type(exc).__name__}: {exc}")
    if isinstance(item, ReadError):
        return read_error(item)
    digest = raw_hash(item)
    if item.id != source.default_id:  # metadata named another id: checked in the main process
        outcome = Outcome(item.source or item.id, item.id, item.source, digest, checked=False)
    else:
        outcome = checked_book(item, digest, stored)
        if outcome.verdict is not None:
            return outcome
    outcome.result = encoded(extract(item, task.uniq_modulus, task.params, task.pivot_pairs))
    return outcome
