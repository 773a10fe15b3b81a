"""Verification on a Dask cluster (`bookdup dedup --scheduler`): the process pool's chunks as
Dask tasks.

``--scheduler`` is `indexer.dask_cluster`'s: ``local`` starts a `LocalCluster` of ``workers``
processes for the job, any other value is a running scheduler's address, whose workers must read
the same FreeDict files. The pairs go in the chunks `indexer.verify_pool` makes, through the
same worker function (`indexer.verify_worker.verify_chunk`): each Dask worker loads a lexicon
once, by its (source, target) key, and keeps it for the job. Results come back in input order.

Each book goes to the cluster once a job, not with every chunk that holds it (most chunks of a
batch hold most of its books, ~250 KB each for a long one): it is the result of a `hold` task,
and the chunks take those futures as arguments, so a worker fetches a book at most once and
keeps it while the job holds the future. The futures of the books least recently sent are
released after a batch settles, beyond a byte bound (`indexer.feature_shelf.RecentBooks`). A
book is a task's result, not scattered data, so a worker lost with it costs a rerun of `hold`.

A worker lost mid-chunk is Dask's to handle: the scheduler runs the chunk again elsewhere (a
`LocalCluster`'s nanny also restarts the process). A chunk that fails anyway — it raised, or
killed `distributed.scheduler.allowed-failures` + 1 workers — is verified again in the job's
process and counted in ``fallbacks``, as with the process pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bookdup.features import BookFeatures
from bookdup.relate import VerifiedPair
from indexer.dask_cluster import LOCAL, DaskCluster, require_distributed
from indexer.feature_shelf import SHELF_MAX_BYTES, BookKey, RecentBooks, book_key
from indexer.verify_pool import (
    Closing,
    Done,
    Pending,
    Planned,
    batch_books,
    chunk_pairs,
    split_planned,
    verify_here,
)
from indexer.verify_worker import hold, to_tasks, verify_chunk

__all__ = ["LOCAL", "DaskVerifier", "require_distributed"]


def _nbytes(book: BookFeatures) -> int:
    """About the book's size in memory: its arrays, and its words when it has them."""
    u = book.unique
    arrays: list[np.ndarray | None] = [book.minhash, book.page_minhashes, book.winnows]
    arrays += [u.hashes, u.pages, u.stems, u.context]
    words = 0 if u.words is None else sum(56 + len(w) for w in u.words)
    return words + sum(0 if a is None else int(a.nbytes) for a in arrays)


class ClusterBooks(RecentBooks[Any]):
    """The job's books on the cluster: each the future of a `hold` task, submitted once."""

    def __init__(self, client: Any, max_bytes: int = SHELF_MAX_BYTES) -> None:
        super().__init__(max_bytes)
        self.client = client

    def _send(self, book: BookFeatures) -> tuple[Any, int]:
        return self.client.submit(hold, book, pure=False), _nbytes(book)

    def _drop(self, handle: Any) -> None:
        handle.release()


class DaskVerifier(DaskCluster, Closing):
    """One job's verification on a Dask cluster, with `VerifyPool`'s chunks and fallbacks.
    The cluster is started or reached, and closed, by `indexer.dask_cluster.DaskCluster`."""

    def __init__(
        self,
        scheduler: str,
        workers: int,
        chunks_per_worker: int = 8,
        min_chunk: int = 4,
        timeout: float = 60.0,
        max_bytes: int = SHELF_MAX_BYTES,
    ) -> None:
        self.chunks_per_worker = chunks_per_worker
        self.min_chunk = min_chunk
        self.fallbacks = 0  # chunks verified again in-process after a worker failed
        super().__init__(scheduler, workers, timeout)
        self.books = ClusterBooks(self.client, max_bytes)

    def submit(self, planned: Sequence[Planned]) -> Pending:
        """The batch's chunks submitted to the cluster."""
        if not planned:
            return Done([])
        chunks = split_planned(planned, self.workers * self.chunks_per_worker, self.min_chunk)
        books = list(batch_books(planned))
        self.books.pin(books)
        return _DaskBatch(self, chunks, [self._submit(c) for c in chunks], books)

    def _settle(self, chunk: Sequence[Planned], future: Any) -> list[VerifiedPair | None]:
        """The chunk's results from the cluster; verified here when it failed there."""
        try:
            results = future.result()
        except Exception:  # raised in the worker, or KilledWorker: verify it here
            self.fallbacks += 1
            return verify_here(chunk)
        finally:
            future.release()
        return chunk_pairs(chunk, results)

    def _landed(self, books: list[BookKey]) -> None:
        """A batch settled: the futures of its books may be released."""
        self.books.unpin(books)
        self.books.trim()

    def _submit(self, chunk: Sequence[Planned]) -> Any:
        """The chunk's task: its pairs with the books by key, and the books' futures, once each
        (pure=False: no chunk's key is shared with another job's)."""
        books = {book_key(x): self.books.ref(x) for a, b, _ in chunk for x in (a, b)}
        tasks = to_tasks(chunk, book_key)
        return self.client.submit(verify_chunk, tasks, *books.values(), pure=False)


class _DaskBatch:
    """A batch's chunks on the cluster."""

    def __init__(
        self,
        owner: DaskVerifier,
        chunks: list[Sequence[Planned]],
        futures: list[Any],
        books: list[BookKey],
    ) -> None:
        self.owner, self.chunks, self.futures, self.books = owner, chunks, futures, books

    def result(self) -> list[VerifiedPair | None]:
        out: list[VerifiedPair | None] = []
        for chunk, future in zip(self.chunks, self.futures, strict=True):
            out.extend(self.owner._settle(chunk, future))
        self.owner._landed(self.books)
        return out
