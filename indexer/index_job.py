"""`bookdup index`: read a corpus, extract features on every core, stream them into the books index.

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
from indexer.bulk import bulk_write
from indexer.readers import ReadError, iter_books
from indexer.retry import with_retries
from indexer.runs import RunRecorder
from indexer.schema import IndexNames, ensure_indices
from query.iterate import batched

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
    """Decides per book: new, changed, unchanged, or a duplicate id from another file."""

    def __init__(self, client: Elasticsearch, index: str) -> None:
        self._client = client
        self._index = index
        self._seen: dict[str, str] = {}  # id -> source, within this job

    def classify(self, books: list[Book]) -> list[tuple[Book, str | None]]:
        """(book, None) to index, (book, "unchanged"), or (book, <error reason>)."""
        mget = with_retries()(self._client.mget)
        found = mget(
            index=self._index,
            ids=[b.id for b in books],
            source=["raw_hash", "source"],
        ).body["docs"]
        stored = {d["_id"]: d["_source"] for d in found if d.get("found")}
        out: list[tuple[Book, str | None]] = []
        for book in books:
            earlier = self._seen.get(book.id)
            if earlier is not None:
                out.append((book, f"duplicate id {book.id!r}: already read from {earlier}"))
                continue
            self._seen[book.id] = book.source or "?"
            doc = stored.get(book.id)
            if doc is None:
                out.append((book, None))
            elif doc.get("raw_hash") == raw_hash(book):
                # Same id, same content: unchanged even if its file moved or, in JSONL, its
                # line number shifted (both are part of ``source``).
                out.append((book, "unchanged"))
            elif doc.get("source") and book.source and doc["source"] != book.source:
                out.append(
                    (book, f"duplicate id {book.id!r}: already indexed from {doc['source']}")
                )
            else:
                out.append((book, None))
        return out


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
        window: deque[tuple[Book, Future[dict[str, Any] | str]]] = deque()
        max_in_flight = options.workers * 4

        def drain(limit: int) -> Iterator[dict[str, Any]]:
            while len(window) > limit:
                book, future = window.popleft()
                result = future.result()
                if isinstance(result, str):
                    summary.failures.append((book.source or book.id, result))
                    note()
                    continue
                result["index_run"] = recorder.run_id
                result["indexed_at"] = recorder.now()
                sources[book.id] = book.source or book.id
                yield {"_index": names.books, "_id": book.id, "_source": result}

        items = iter_books(paths, lines_per_page=options.lines_per_page, encoding=options.encoding)
        for batch in batched(items, options.lookup_batch):
            books = []
            for item in batch:
                summary.read += 1
                if isinstance(item, ReadError):
                    where = item.path if item.line is None else f"{item.path}:{item.line}"
                    summary.failures.append((where, item.reason))
                    note()
                else:
                    books.append(item)
            for book, verdict in lookup.classify(books) if books else []:
                if verdict == "unchanged":
                    summary.unchanged += 1
                    note()
                elif verdict is not None:
                    summary.failures.append((book.source or book.id, verdict))
                    note()
                else:
                    window.append(
                        (book, pool.submit(_extract, book, options.uniq_modulus, options.params))
                    )
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
