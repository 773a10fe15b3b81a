"""`bookdup index`: read and extract every book on every core, stream them into the books index.

Resumable by construction: every book is written under its own id with a hash of its raw
content, and a book whose stored hash matches is skipped, so a killed job simply runs again.
Failures of single books (unreadable files, duplicate ids, extraction errors, refused documents)
are collected with the file and the reason and never stop the job.

The job runs as stages, each a function or method below: walk the inputs (`_walk`), look up
the stored hashes of a batch (`_Lookup.stored`), read and extract in the workers (`_dispatch`,
`indexer.index_worker`), settle each book in reading order (`_ReadingOrder`,
`_IndexRun.settle`), bulk-write the documents (`_IndexRun.actions`) and record the run
(`_IndexRun.finish`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from elasticsearch import Elasticsearch

from bookdup.features import FeatureParams
from bookdup.model import Book
from indexer.failpoints import failpoint
from indexer.index_dask import DaskExtractor
from indexer.index_worker import (
    EXCERPT_WORDS,
    Document,
    Outcome,
    Task,
    build,
    build_document,
    checked_book,
    die_with_parent,
    raw_hash,
    read_and_build,
    read_error,
    stored_verdict,
)
from readers import (
    ReadError,
    ReadWarning,
    Source,
    check_read_options,
    iter_sources,
    read_manifest,
    read_source,
)
from readers.common import DEFAULT_LINES_PER_PAGE, DEFAULT_MAX_BOOK_MB, MB, plain_name
from store.bulk import BulkReport, bulk_write
from store.iterate import batched
from store.retry import with_retries
from store.runs import RunRecorder, resume_after_interrupted
from store.schema import (
    IndexLayout,
    IndexNames,
    add_pivot_field,
    ensure_indices,
    merge_segments,
    refresh,
)

__all__ = [
    "EXCERPT_WORDS",
    "IndexOptions",
    "IndexSummary",
    "build_document",
    "count_inputs",
    "raw_hash",
    "run_index",
    "stored_verdict",
]

WorkItem = Source | Book | ReadError


class Pending(Protocol):
    """A work item in a worker: a process pool's `Future` or a Dask task (`DaskExtractor`)."""

    def result(self) -> Outcome: ...


#: Where the work items are read and extracted: local processes (``--workers``), or Dask.
Pool = ProcessPoolExecutor | DaskExtractor


@dataclass(frozen=True)
class IndexOptions:
    """Knobs of an index job."""

    workers: int = max(1, os.cpu_count() or 1)
    lines_per_page: int = DEFAULT_LINES_PER_PAGE
    encoding: str | None = None
    # Every unique-word hash is indexed (modulus 1): document frequencies of all of them are
    # needed to find boilerplate words; queries use a consistent 1-in-N sample of them.
    uniq_modulus: int = 1
    lookup_batch: int = 64  # books whose stored hashes are fetched in one mget
    # Books per bulk request: small enough that a killed job loses little extraction work
    # and a request stays a few MB (a 50K-word book's document is ~100-300 KB).
    bulk_chunk: int = 20
    params: FeatureParams = field(default_factory=FeatureParams)
    # The largest book read, in MB of text (readers.common.DEFAULT_MAX_BOOK_MB says why 32);
    # a larger one is refused with its file, size and this limit, and never held in memory.
    max_book_mb: float = DEFAULT_MAX_BOOK_MB
    # Shards and replicas of indices this job creates (None: BOOKDUP_SHARDS / BOOKDUP_REPLICAS,
    # else the mapping files' 1 and 0; store.schema.IndexLayout).
    layout: IndexLayout | None = None
    # Extract on Dask instead of the process pool: "local" (a LocalCluster of ``workers``
    # processes started for the job) or a running scheduler's address (indexer.dask_cluster).
    scheduler: str | None = None
    # Also index the pivot pair keys (issue 27; CandidateParams.pivot_pairs queries them): the
    # field is added to the books mapping, books already indexed and unchanged get none until
    # indexed again.
    pivot_pairs: bool = True

    @property
    def max_book_bytes(self) -> int:
        return int(self.max_book_mb * MB)


@dataclass
class IndexSummary:
    """What an index job did; ``failures`` holds (file, reason) for every skipped book, and
    ``warnings`` (file, what) for books indexed from text that may be garbled."""

    run_id: str
    read: int = 0
    indexed: int = 0
    unchanged: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    resumed_from: str | None = None  # the killed run whose work this one picked up
    resent: int = 0  # documents the node refused with 429 (back-pressure) and that were resent
    smallest_chunk: int = 0  # the fewest books per bulk request back-pressure brought us to

    @property
    def books_per_s(self) -> float:
        return self.indexed / self.seconds if self.seconds else 0.0

    @property
    def done(self) -> int:
        """Books finished one way or another, for the progress bar."""
        return self.indexed + self.unchanged + len(self.failures)

    def as_counts(self) -> dict[str, Any]:
        counts: dict[str, Any] = {
            "read": self.read,
            "indexed": self.indexed,
            "unchanged": self.unchanged,
            "failed": len(self.failures),
            "warnings": len(self.warnings),
            "resumed_from": self.resumed_from,
        }
        if self.resent:  # back-pressure, said only when the node pushed back
            counts.update(resent=self.resent, smallest_chunk=self.smallest_chunk)
        return counts


def count_inputs(paths: Iterable[Path]) -> int:
    """A cheap estimate of how many books ``paths`` hold, for the progress bar's ETA (JSONL
    lines counted in 1 MB blocks: one line may be a gigabyte)."""
    total = 0
    for path in paths:
        suffix = plain_name(path).suffix.lower()  # `.txt.gz` counts as `.txt`
        if path.is_dir():
            total += count_inputs(sorted(path.iterdir()))
        elif path.suffix.lower() == ".jsonl" and read_manifest(path) is None:
            with path.open("rb") as fh:
                total += sum(block.count(b"\n") for block in iter(lambda: fh.read(MB), b""))
        elif suffix in {".txt", ".xml", ".html", ".hocr", ".htm"}:
            total += 1
    return total


# --- stage 1: walk the inputs ---------------------------------------------------------------


def _walk(
    paths: list[Path], options: IndexOptions, warnings: list[tuple[str, str]]
) -> Iterator[WorkItem]:
    """The walk's sources, except that JSONL files are read here, record by record: parsing a
    line is cheap, and a JSONL file holds many books. What the walk skips on purpose (a
    manifest naming no book) goes to ``warnings``."""
    for source in iter_sources(paths):
        if isinstance(source, ReadWarning):
            warnings.append((source.where, source.warning))
        elif isinstance(source, Source) and source.kind == "jsonl":
            yield from read_source(
                source,
                lines_per_page=options.lines_per_page,
                encoding=options.encoding,
                max_bytes=options.max_book_bytes,
            )
        else:
            yield source


# --- stage 2: look up stored hashes; duplicate ids within the job ---------------------------


def _batch_ids(batch: list[WorkItem]) -> list[str]:
    """The ids a batch is expected to hold: a record's own id, or the id a file implies."""
    ids = {item.id for item in batch if isinstance(item, Book)}
    ids.update(i.default_id for i in batch if isinstance(i, Source) and i.default_id)
    return sorted(ids)


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
        found = mget(
            index=self._index, ids=ids, source=["raw_hash", "source", "features_version"]
        ).body["docs"]
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

    def final_verdict(self, outcome: Outcome) -> str | None:
        """None to write the book's document, "unchanged", or why the item is refused.

        Must be called in reading order: the first book read with an id is the one kept.
        """
        verdict = outcome.verdict
        if outcome.book_id is not None:  # a book was read: first of its id, then stored
            verdict = self.first_read(outcome.book_id, outcome.source) or (
                outcome.verdict
                if outcome.checked
                else self.verdict(outcome.book_id, outcome.source, outcome.digest)
            )
        if verdict is None and isinstance(outcome.result, str):
            verdict = outcome.result  # feature extraction failed
        return verdict


# --- stage 3: read and extract in the workers -----------------------------------------------


def _dispatch(
    pool: Pool, task: Task, item: WorkItem, stored: dict[str, dict[str, Any]]
) -> Outcome | Pending:
    """Send a work item to a worker, or settle it here when nothing is left to read or extract."""
    if isinstance(item, ReadError):
        return read_error(item)
    if isinstance(item, Source):
        expected = stored.get(item.default_id) if item.default_id else None
        return pool.submit(read_and_build, item, expected, task)
    # a JSONL record, read here: only its extraction goes to a worker
    digest = raw_hash(item)
    outcome = checked_book(item, digest, stored.get(item.id))
    return pool.submit(build, item, digest, task) if outcome.verdict is None else outcome


def _add_time(timings: dict[str, float], name: str, seconds: float) -> None:
    timings[name] = timings.get(name, 0.0) + seconds


def _timed(items: Iterator[Any], timings: dict[str, float], outside: str) -> Iterator[Any]:
    """``items`` unchanged; the time its consumer spends between two items (the bulk writes,
    for the actions stream) is added to ``timings[outside]``."""
    timings.setdefault(outside, 0.0)
    for item in items:
        handed = time.monotonic()
        yield item
        _add_time(timings, outside, time.monotonic() - handed)


# --- stage 4: settle in reading order -------------------------------------------------------


class _ReadingOrder:
    """Work items in flight, handed back in the order they were read (so that the first book
    with an id wins whatever worker finishes first), at most ``limit`` of them held."""

    def __init__(self, limit: int, timings: dict[str, float] | None = None) -> None:
        self._limit = limit
        self._window: deque[Outcome | Pending] = deque()
        self._timings = timings if timings is not None else {}

    def add(self, entry: Outcome | Pending) -> None:
        self._window.append(entry)

    def overflow(self) -> Iterator[Outcome]:
        """The oldest outcomes, waited for, while more than ``limit`` are in flight."""
        return self._drain(self._limit)

    def rest(self) -> Iterator[Outcome]:
        """Every outcome still in flight, once the walk is done."""
        return self._drain(0)

    def _drain(self, limit: int) -> Iterator[Outcome]:
        while len(self._window) > limit:
            entry = self._window.popleft()
            if isinstance(entry, Outcome):
                yield entry
                continue
            started = time.monotonic()
            outcome = entry.result()
            _add_time(self._timings, "extract_wait_s", time.monotonic() - started)
            yield outcome


# --- the job: settle (stage 4), bulk-write (5), record the run (6) --------------------------


class _IndexRun:
    """The state of one index job in one place: counts, ids seen, the run record, and the file
    of every book sent to be written (to name it when the cluster refuses the document)."""

    def __init__(
        self,
        client: Elasticsearch,
        names: IndexNames,
        paths: list[Path],
        options: IndexOptions,
        progress: Callable[[int], None] | None,
    ) -> None:
        self._client = client
        self._names = names
        self._paths = paths
        self._options = options
        self._progress = progress
        self._recorder = RunRecorder(
            client, names, "index", params={"paths": [str(p) for p in paths]}
        )
        self.summary = IndexSummary(run_id=self._recorder.run_id)
        self.summary.resumed_from = resume_after_interrupted(
            client, names, "index", self._recorder.run_id
        )
        self._started = time.monotonic()
        self._lookup = _Lookup(client, names.books)
        self._sources: dict[str, str] = {}  # book id -> file
        # Seconds per stage: the hash lookups, waiting for the workers' reading and extraction
        # (what the pipeline did not hide), the bulk writes, the final refresh and merge.
        self.timings: dict[str, float] = {"lookup_s": 0.0, "extract_wait_s": 0.0}

    def actions(self, pool: Pool) -> Iterator[dict[str, Any]]:
        """Bulk actions of the books to write. Reading, parsing and extraction run in the
        workers; this process walks the inputs, looks up stored hashes (one mget per batch) and
        settles each book in reading order."""
        options = self._options
        check_read_options(options.lines_per_page, options.encoding, options.max_book_bytes)
        task = Task(
            options.lines_per_page,
            options.encoding,
            options.uniq_modulus,
            options.params,
            options.max_book_bytes,
            options.pivot_pairs,
        )
        workers = pool.workers if isinstance(pool, DaskExtractor) else options.workers
        # a bulk chunk's worth beyond a few per worker: while this process waits on a bulk
        # request, the workers go on with the books already handed to them
        in_flight = _ReadingOrder(limit=workers * 4 + options.bulk_chunk, timings=self.timings)
        items = _walk(self._paths, options, self.summary.warnings)
        for batch in batched(items, options.lookup_batch):
            started = time.monotonic()
            stored = self._lookup.stored(_batch_ids(batch))
            _add_time(self.timings, "lookup_s", time.monotonic() - started)
            failpoint("index.batch")
            for item in batch:
                in_flight.add(_dispatch(pool, task, item, stored))
                yield from self._to_write(in_flight.overflow())
        yield from self._to_write(in_flight.rest())

    def _to_write(self, outcomes: Iterator[Outcome]) -> Iterator[dict[str, Any]]:
        """The bulk action of each settled outcome that is a document to write."""
        for outcome in outcomes:
            doc = self.settle(outcome)
            if doc is not None:
                yield self._action(outcome, doc)

    def settle(self, outcome: Outcome) -> Document | None:
        """The document to write, or None once the book is counted as unchanged or failed."""
        self.summary.read += 1
        verdict = self._lookup.final_verdict(outcome)
        if verdict is None:
            assert isinstance(outcome.result, Document)
            return outcome.result
        if verdict == "unchanged":
            self.summary.unchanged += 1
        else:
            self.summary.failures.append((outcome.where, verdict))
        self._note()
        return None

    def _action(self, outcome: Outcome, doc: Document) -> dict[str, Any]:
        """The document's bulk action, its encoded bytes sent as they are, the run's fields
        added last."""
        book_id = outcome.book_id
        assert book_id is not None
        self._sources[book_id] = outcome.where
        if doc.warning:
            self.summary.warnings.append((outcome.where, doc.warning))
        run = {"index_run": self._recorder.run_id, "indexed_at": self._recorder.now()}
        return {"_index": self._names.books, "_id": book_id, "_source": doc.stamped(run)}

    def on_chunk(self, report: BulkReport) -> None:
        """Bulk progress: the books written so far."""
        self.summary.indexed = report.ok
        self._note()
        failpoint("index.chunk")

    def _note(self) -> None:
        if self._progress:
            self._progress(self.summary.done)

    def finish(self, report: BulkReport) -> IndexSummary:
        """Count the writes, make them searchable and complete the run record."""
        failpoint("index.finish")
        summary = self.summary
        summary.indexed = report.ok
        summary.resent, summary.smallest_chunk = report.rejected, report.smallest_chunk
        for failure in report.failures:
            summary.failures.append((self._sources.get(failure.id, failure.id), failure.reason))
        started = time.monotonic()
        refresh(self._client, self._names.books)
        self.timings["refresh_s"] = time.monotonic() - started
        if summary.indexed:
            started = time.monotonic()
            merge_segments(self._client, self._names.books)
            self.timings["merge_s"] = time.monotonic() - started
        summary.seconds = time.monotonic() - self._started
        stages = {k: round(v, 3) for k, v in self.timings.items()}
        self._recorder.finish(
            counts=summary.as_counts(),
            timings={
                **stages,
                "total_s": round(summary.seconds, 3),
                "seconds": round(summary.seconds, 3),
                "books_per_s": summary.books_per_s,
            },
            skipped=[{"file": f, "reason": r} for f, r in summary.failures[:1000]],
            warnings=[{"file": f, "warning": w} for f, w in summary.warnings[:1000]],
        )
        return summary


def _open_pool(options: IndexOptions) -> Pool:
    """The workers of the job: Dask when ``options.scheduler`` names one, else local processes
    that die with the job."""
    if options.scheduler:
        return DaskExtractor(options.scheduler, options.workers)
    return ProcessPoolExecutor(
        max_workers=options.workers, initializer=die_with_parent, initargs=(os.getpid(),)
    )


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
    ensure_indices(client, names, options.layout)
    if options.pivot_pairs:
        add_pivot_field(client, names)
    # the pool first: a Dask scheduler that does not answer fails the job before its run record
    with _open_pool(options) as pool:
        job = _IndexRun(client, names, paths, options, progress)
        actions = _timed(job.actions(pool), job.timings, "write_s")
        report = bulk_write(client, actions, chunk_size=options.bulk_chunk, on_chunk=job.on_chunk)
    return job.finish(report)
