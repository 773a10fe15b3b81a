"""`bookdup index`: read and extract every book on every core, stream them into the books index.

Resumable by construction: every book is written under its own id with a hash of its raw
content, and a book whose stored hash matches is skipped, so a killed job simply runs again.
Failures of single books (unreadable files, duplicate ids, extraction errors, refused documents)
are collected with the file and the reason and never stop the job.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.cluster import cluster_id
from bookdup.features import FeatureParams, extract_features, features_to_doc, unique_sample_terms
from bookdup.model import Book
from readers import ReadError, Source, check_read_options, iter_sources, read_source
from store.bulk import bulk_write
from store.iterate import batched
from store.retry import with_retries
from store.runs import RunRecorder
from store.schema import IndexNames, ensure_indices

EXCERPT_WORDS = 300  # enough text for catalog search snippets without storing whole books


@dataclass(frozen=True)
class IndexOptions:
    """Knobs of an index job."""

    workers: int = max(1, os.cpu_count() or 1)
    lines_per_page: int = 40
    encoding: str | None = None
    # Every unique-word hash is indexed (modulus 1): document frequencies of all of them are
    # needed to find boilerplate words; queries use a consistent 1-in-N sample of them.
    uniq_modulus: int = 1
    lookup_batch: int = 64  # books whose stored hashes are fetched in one mget
    # Books per bulk request: small enough that a killed job loses little extraction work
    # and a request stays a few MB (a 50K-word book's document is ~100-300 KB).
    bulk_chunk: int = 20
    params: FeatureParams = field(default_factory=FeatureParams)


@dataclass
class IndexSummary:
    """What an index job did; ``failures`` holds (file, reason) for every skipped book."""

    run_id: str
    read: int = 0
    indexed: int = 0
    unchanged: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def books_per_s(self) -> float:
        return self.indexed / self.seconds if self.seconds else 0.0

    def as_counts(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "indexed": self.indexed,
            "unchanged": self.unchanged,
            "failed": len(self.failures),
        }


def raw_hash(book: Book) -> str:
    """Hash of everything that goes into a book's document, to skip unchanged books on re-runs."""
    h = hashlib.sha1()
    meta = (book.id, book.title, book.author, book.language, book.year)
    h.update(repr(meta).encode("utf-8"))
    for page in book.pages:
        h.update(page.encode("utf-8", "surrogatepass"))
        h.update(b"\f")
    return h.hexdigest()


def build_document(book: Book, uniq_modulus: int, params: FeatureParams) -> dict[str, Any]:
    """The books-index document for one book (runs in worker processes)."""
    features = extract_features(book, params)
    excerpt_words: list[str] = []
    for page in book.pages:
        excerpt_words.extend(page.split())
        if len(excerpt_words) >= EXCERPT_WORDS:
            break
    own_cluster = cluster_id([book.id])
    return {
        "book_id": book.id,
        "title": book.title,
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
        "n_unique": len(features.unique.words),
        "flags": list(features.flags),
        "excerpt": " ".join(excerpt_words[:EXCERPT_WORDS]),
        "bands": list(features.bands),
        "uniq": unique_sample_terms(features, uniq_modulus),
        "features": features_to_doc(features),
        "extra": book.extra,
        "edition_cluster": own_cluster,
        "work_cluster": own_cluster,
    }


def _extract(book: Book, uniq_modulus: int, params: FeatureParams) -> dict[str, Any] | str:
    """Worker entry point: a document, or the error message (never raises across processes)."""
    try:
        return build_document(book, uniq_modulus, params)
    except Exception as exc:  # noqa: BLE001 - one bad book must not stop thousands
        return f"feature extraction failed: {type(exc).__name__}: {exc}"


def stored_verdict(
    book_id: str, source: str | None, digest: str, stored: dict[str, Any] | None
) -> str | None:
    """What the stored document with the book's id says: None (index the book), "unchanged", or
    the reason it is refused (another file's book holds the id)."""
    if stored is None:
        return None
    if stored.get("raw_hash") == digest:
        # Same id, same content: unchanged even if its file moved or, in JSONL, its line
        # number shifted (both are part of ``source``).
        return "unchanged"
    if stored.get("source") and source and stored["source"] != source:
        return f"duplicate id {book_id!r}: already indexed from {stored['source']}"
    return None


@dataclass(frozen=True)
class _Task:
    """The options a worker needs, sent with every work item."""

    lines_per_page: int
    encoding: str | None
    uniq_modulus: int
    params: FeatureParams


@dataclass
class _Outcome:
    """What became of one work item, handed back to the main process in reading order.

    ``book_id`` is None for input that could not be read (``verdict`` says why). ``verdict``
    is otherwise the stored-document check (`stored_verdict`) when ``checked``, i.e. when it
    was made under the book's real id; ``result`` is the document or the extraction error when
    the book was extracted.
    """

    where: str
    book_id: str | None = None
    source: str | None = None
    digest: str = ""
    verdict: str | None = None
    checked: bool = True
    result: dict[str, Any] | str | None = None


def _read_error(error: ReadError) -> _Outcome:
    where = error.path if error.line is None else f"{error.path}:{error.line}"
    return _Outcome(where, verdict=error.reason)


def _checked_book(book: Book, digest: str, stored: dict[str, Any] | None) -> _Outcome:
    """A book whose stored document was looked up under its own id; not extracted yet."""
    verdict = stored_verdict(book.id, book.source, digest, stored)
    return _Outcome(book.source or book.id, book.id, book.source, digest, verdict)


def _build(book: Book, digest: str, task: _Task) -> _Outcome:
    """Worker entry point for a book read in the main process (a JSONL record): extraction."""
    result = _extract(book, task.uniq_modulus, task.params)
    return _Outcome(book.source or book.id, book.id, book.source, digest, result=result)


def _read_and_build(source: Source, stored: dict[str, Any] | None, task: _Task) -> _Outcome:
    """Worker entry point for a book file or page folder: read and parse it, hash it, and unless
    ``stored`` (the stored document under the id the file implies) shows it unchanged or
    refused, extract it. Never raises across processes."""
    try:
        (item,) = read_source(source, lines_per_page=task.lines_per_page, encoding=task.encoding)
    except Exception as exc:  # noqa: BLE001 - a reader bug must not stop the job either
        return _Outcome(str(source.path), verdict=f"read failed: {type(exc).__name__}: {exc}")
    if isinstance(item, ReadError):
        return _read_error(item)
    digest = raw_hash(item)
    if item.id != source.default_id:  # metadata named another id: checked in the main process
        outcome = _Outcome(item.source or item.id, item.id, item.source, digest, checked=False)
    else:
        outcome = _checked_book(item, digest, stored)
        if outcome.verdict is not None:
            return outcome
    outcome.result = _extract(item, task.uniq_modulus, task.params)
    return outcome


def _work_items(
    paths: list[Path], lines_per_page: int, encoding: str | None
) -> Iterator[Source | Book | ReadError]:
    """The walk's sources, except that JSONL files are read here, record by record: parsing a
    line is cheap, and a JSONL file holds many books."""
    for source in iter_sources(paths):
        if isinstance(source, Source) and source.kind == "jsonl":
            yield from read_source(source, lines_per_page=lines_per_page, encoding=encoding)
        else:
            yield source


def count_inputs(paths: Iterable[Path]) -> int:
    """A cheap estimate of how many books ``paths`` hold, for the progress bar's ETA."""
    total = 0
    for path in paths:
        if path.is_dir():
            total += count_inputs(sorted(path.iterdir()))
        elif path.suffix.lower() == ".jsonl":
            with path.open("rb") as fh:
                total += sum(1 for line in fh if line.strip())
        elif path.suffix.lower() in {".txt", ".xml", ".html", ".hocr", ".htm"}:
            total += 1
    return total


class _Lookup:
    """Stored documents by id, and the ids already read in this job (the first one wins)."""

    def __init__(self, client: Elasticsearch, index: str) -> None:
        self._client = client
        self._index = index
        self._seen: dict[str, str] = {}  # id -> source, within this job

    def stored(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """raw_hash and source of the stored documents among ``ids``, in one mget."""
        if not ids:
            return {}
        mget = with_retries()(self._client.mget)
        found = mget(index=self._index, ids=ids, source=["raw_hash", "source"]).body["docs"]
        return {d["_id"]: d["_source"] for d in found if d.get("found")}

    def verdict(self, book_id: str, source: str | None, digest: str) -> str | None:
        """`stored_verdict` for one book, looked up on its own (its id was not the expected one)."""
        return stored_verdict(book_id, source, digest, self.stored([book_id]).get(book_id))

    def first_read(self, book_id: str, source: str | None) -> str | None:
        """None for the first book with this id in the job, else the reason this one is refused."""
        earlier = self._seen.get(book_id)
        if earlier is not None:
            return f"duplicate id {book_id!r}: already read from {earlier}"
        self._seen[book_id] = source or "?"
        return None


def run_index(
    client: Elasticsearch,
    names: IndexNames,
    paths: list[Path],
    options: IndexOptions | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> IndexSummary:
    """Index every book under ``paths``; returns the summary (also stored as a run record).

    ``progress(done)`` is called as books finish (indexed, unchanged or failed), for a progress bar.
    """
    options = options or IndexOptions()
    ensure_indices(client, names)
    recorder = RunRecorder(client, names, "index", params={"paths": [str(p) for p in paths]})
    summary = IndexSummary(run_id=recorder.run_id)
    started = time.monotonic()
    lookup = _Lookup(client, names.books)
    sources: dict[str, str] = {}  # book id -> file, to name the file when a write is refused

    def note() -> None:
        if progress:
            progress(summary.indexed + summary.unchanged + len(summary.failures))

    def actions(pool: ProcessPoolExecutor) -> Iterator[dict[str, Any]]:
        # Reading, parsing and extraction run in the workers; this process walks the inputs,
        # looks up stored hashes (one mget per batch) and settles each book in reading order.
        task = _Task(options.lines_per_page, options.encoding, options.uniq_modulus, options.params)
        window: deque[_Outcome | Future[_Outcome]] = deque()
        max_in_flight = options.workers * 4

        def settle(outcome: _Outcome) -> dict[str, Any] | None:
            """The document to write, or None once the book is counted as unchanged or failed."""
            summary.read += 1
            verdict = outcome.verdict
            if outcome.book_id is not None:  # a book was read: first of its id, then stored
                verdict = lookup.first_read(outcome.book_id, outcome.source) or (
                    outcome.verdict
                    if outcome.checked
                    else lookup.verdict(outcome.book_id, outcome.source, outcome.digest)
                )
            if verdict is None and isinstance(outcome.result, str):
                verdict = outcome.result  # feature extraction failed
            if verdict == "unchanged":
                summary.unchanged += 1
            elif verdict is not None:
                summary.failures.append((outcome.where, verdict))
            else:
                assert isinstance(outcome.result, dict)
                return outcome.result
            note()
            return None

        def drain(limit: int) -> Iterator[dict[str, Any]]:
            while len(window) > limit:
                entry = window.popleft()
                outcome = entry if isinstance(entry, _Outcome) else entry.result()
                doc = settle(outcome)
                if doc is None:
                    continue
                book_id = outcome.book_id
                assert book_id is not None
                doc["index_run"] = recorder.run_id
                doc["indexed_at"] = recorder.now()
                sources[book_id] = outcome.where
                yield {"_index": names.books, "_id": book_id, "_source": doc}

        check_read_options(options.lines_per_page, options.encoding)
        items = _work_items(paths, options.lines_per_page, options.encoding)
        for batch in batched(items, options.lookup_batch):
            ids = {item.id for item in batch if isinstance(item, Book)}
            ids.update(i.default_id for i in batch if isinstance(i, Source) and i.default_id)
            stored = lookup.stored(sorted(ids))
            for item in batch:
                if isinstance(item, ReadError):
                    window.append(_read_error(item))
                elif isinstance(item, Source):
                    expected = stored.get(item.default_id) if item.default_id else None
                    window.append(pool.submit(_read_and_build, item, expected, task))
                else:
                    # a JSONL record, read here: only its extraction goes to a worker
                    digest = raw_hash(item)
                    outcome = _checked_book(item, digest, stored.get(item.id))
                    extract = outcome.verdict is None
                    window.append(pool.submit(_build, item, digest, task) if extract else outcome)
                yield from drain(max_in_flight)
        yield from drain(0)

    def on_chunk(report: Any) -> None:
        summary.indexed = report.ok
        note()

    with ProcessPoolExecutor(max_workers=options.workers) as pool:
        report = bulk_write(client, actions(pool), chunk_size=options.bulk_chunk, on_chunk=on_chunk)
    summary.indexed = report.ok
    for failure in report.failures:
        summary.failures.append((sources.get(failure.id, failure.id), failure.reason))
    client.indices.refresh(index=names.books)
    summary.seconds = time.monotonic() - started
    recorder.finish(
        counts=summary.as_counts(),
        timings={"seconds": round(summary.seconds, 3), "books_per_s": summary.books_per_s},
        skipped=[{"file": f, "reason": r} for f, r in summary.failures[:1000]],
    )
    return summary
