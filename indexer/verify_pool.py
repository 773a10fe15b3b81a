"""Verification on every core: a batch's planned pairs verified in worker processes.

The parent plans each pair (it holds the lexicons and the feature cache) and classifies the
results; the workers run the pure `bookdup.relate.verify_detached`. Pairs go in contiguous
chunks (several per worker, so a slow chunk of translated pairs does not leave a core idle
for long) and come back in input order, so the relations are those of the in-process path.

A chunk whose worker fails (an exception, or a crashed process) is verified again in the
parent: no pair is lost, and an error the pair itself causes is raised as in-process. A
crashed pool is replaced, a few times at most; then the job goes on in-process.

`Verifier` is the seam the dedup job holds: this process pool, or the Dask one
(`indexer.verify_dask`, `--scheduler`), which chunks, orders and falls back the same way.
`submit` hands a batch to the workers and returns at once (`Pending`), so the job can plan the
next batch, and classify and write the last one, while the workers verify.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Protocol, Self

from bookdup import bitlcs, screenkernel
from bookdup.features import BookFeatures
from bookdup.relate import PairPlan, VerifiedPair, verify_planned
from bookdup.verify import Verification
from indexer.feature_shelf import BookKey, FeatureShelf, book_key
from indexer.verify_worker import init_worker, to_task, verify_chunk
from readers.dictionaries import Dictionaries

__all__ = [
    "MAX_DEFAULT_WORKERS",
    "Closing",
    "Done",
    "Pending",
    "Planned",
    "Verifier",
    "VerifyPool",
    "chunk_pairs",
    "default_verify_workers",
    "open_verifier",
    "split_planned",
    "verify_here",
]

Planned = tuple[BookFeatures, BookFeatures, PairPlan]

#: Each worker holds its own lexicons (~100-300 MB with stems for the big FreeDict pairs) and
#: the node wants a core too: more than 4 workers cost memory for little.
MAX_DEFAULT_WORKERS = 4


def default_verify_workers() -> int:
    """Every core, at most `MAX_DEFAULT_WORKERS`; 1 (in-process) on a single core."""
    return max(1, min(MAX_DEFAULT_WORKERS, os.cpu_count() or 1))


def verify_here(planned: Sequence[Planned]) -> list[VerifiedPair | None]:
    """The in-process path: each pair verified in this process, in order."""
    return [verify_planned(a, b, plan) for a, b, plan in planned]


class Pending(Protocol):
    """A batch handed to the workers; `result` waits for it."""

    def result(self) -> list[VerifiedPair | None]:
        """Each pair's `VerifiedPair` (None below its floor), in the order submitted."""
        ...


class Done:
    """A batch already verified (in-process, or empty)."""

    def __init__(self, results: list[VerifiedPair | None]) -> None:
        self.results = results

    def result(self) -> list[VerifiedPair | None]:
        return self.results


class Verifier(Protocol):
    """What the dedup job verifies through: batches of pairs in, each batch's results in the
    same order (`submit` returns before they are ready), then closed."""

    fallbacks: int  # chunks verified again in the job's process after a worker failed

    def submit(self, planned: Sequence[Planned]) -> Pending: ...

    def verify(self, planned: Sequence[Planned]) -> list[VerifiedPair | None]: ...

    def close(self) -> None: ...


def batch_books(planned: Sequence[Planned]) -> Iterator[BookKey]:
    """The keys of the books a batch reads, once each."""
    return iter(dict.fromkeys(book_key(x) for a, b, _ in planned for x in (a, b)))


class Closing(ABC):
    """``with verifier:`` closes it on any error or interrupt; `verify` waits for a batch."""

    @abstractmethod
    def submit(self, planned: Sequence[Planned]) -> Pending:
        """The batch handed to the workers."""

    def verify(self, planned: Sequence[Planned]) -> list[VerifiedPair | None]:
        """Each pair's `VerifiedPair` (None below its floor), in the order given."""
        return self.submit(planned).result()

    @abstractmethod
    def close(self) -> None:
        """Stop the workers."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_verifier(
    workers: int, scheduler: str | None = None, lexicons: Dictionaries | None = None
) -> Verifier:
    """The job's verifier: Dask when a ``scheduler`` is named (``local``: a `LocalCluster` of
    ``workers`` processes; else the address of a running scheduler), else this process pool,
    whose forked workers share the job's ``lexicons`` (else each loads its own)."""
    if scheduler:
        from indexer.verify_dask import DaskVerifier  # distributed is an optional extra

        return DaskVerifier(scheduler, workers)
    return VerifyPool(workers, lexicons=lexicons)


def split_planned(planned: Sequence[Planned], parts: int, least: int) -> list[Sequence[Planned]]:
    """Contiguous chunks of about ``parts`` equal sizes, each of ``least`` pairs at least."""
    size = max(least, -(-len(planned) // max(1, parts)))
    return [planned[i : i + size] for i in range(0, len(planned), size)]


def chunk_pairs(
    chunk: Sequence[Planned], results: Sequence[Verification | None]
) -> list[VerifiedPair | None]:
    """A chunk's worker results as `VerifiedPair`s, the plans' lexicons put back."""
    return [
        None if v is None else VerifiedPair(a, b, v, plan.dictionary)
        for (a, b, plan), v in zip(chunk, results, strict=True)
    ]


def _open_shelf() -> FeatureShelf | None:
    """The pool's feature shelf, or none where shared memory takes no folder: then the books
    go with their chunks."""
    try:
        return FeatureShelf()
    except OSError:
        return None


class VerifyPool(Closing):
    """A process pool for one job's verification; ``workers`` <= 1 verifies in-process."""

    def __init__(
        self,
        workers: int,
        chunks_per_worker: int = 8,
        min_chunk: int = 4,
        max_restarts: int = 2,
        lexicons: Dictionaries | None = None,
    ) -> None:
        self.workers = workers
        self.lexicons = lexicons
        self.chunks_per_worker = chunks_per_worker
        self.min_chunk = min_chunk
        self.restarts_left = max_restarts
        self.fallbacks = 0  # chunks verified again in-process after a worker failed
        self._pool = self._start() if workers > 1 else None
        self._shelf = _open_shelf() if self._pool is not None else None

    def _start(self) -> ProcessPoolExecutor:
        """A pool with its workers forked now: before the job's search thread starts, as the
        index job forks before its own threads (a lock held by a thread at fork time would
        stay held in the child), with the compiled kernels loaded (`bookdup.bitlcs.warm`) and
        the job's lexicons handed over, so no worker starts either again."""
        bitlcs.warm()
        screenkernel.warm()
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            initializer=init_worker,
            initargs=(os.getpid(), self.lexicons),
        )
        pool.submit(int)  # with fork, the first submit starts every worker
        return pool

    def submit(self, planned: Sequence[Planned]) -> Pending:
        """The batch's chunks queued on the workers (in-process: verified now)."""
        pool = self._pool
        if pool is None or not planned:
            return Done(verify_here(planned))
        chunks = split_planned(planned, self.workers * self.chunks_per_worker, self.min_chunk)
        ref, books = None, list(batch_books(planned))
        if self._shelf is not None:
            ref = self._shelf.ref
            self._shelf.pin(books)
        futures = [pool.submit(verify_chunk, [to_task(*p, ref) for p in c]) for c in chunks]
        return _PoolBatch(self, pool, chunks, futures, books)

    def _settle(
        self,
        pool: ProcessPoolExecutor,
        chunk: Sequence[Planned],
        future: Future[list[Verification | None]],
    ) -> list[VerifiedPair | None]:
        """The chunk's results from its worker; verified here when the worker failed."""
        try:
            results = future.result()
        except BrokenProcessPool:
            if pool is self._pool:
                self._replace()
            self.fallbacks += 1
            return verify_here(chunk)
        except Exception:  # the worker raised: the pair will raise here too, or pass
            self.fallbacks += 1
            return verify_here(chunk)
        return chunk_pairs(chunk, results)

    def _landed(self, books: list[BookKey]) -> None:
        """A batch settled: its books may leave the shelf."""
        if self._shelf is not None:
            self._shelf.unpin(books)
            self._shelf.trim()

    def _replace(self) -> None:
        """A worker died: a new pool, or none (in-process) once the restarts are used up."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._start() if self.restarts_left > 0 else None
        self.restarts_left -= 1

    def close(self) -> None:
        """Stop the workers (pending chunks cancelled, running ones finished)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._shelf is not None:
            self._shelf.close()
            self._shelf = None


class _PoolBatch:
    """A batch's chunks on the process pool."""

    def __init__(
        self,
        owner: VerifyPool,
        pool: ProcessPoolExecutor,
        chunks: list[Sequence[Planned]],
        futures: list[Future[list[Verification | None]]],
        books: list[BookKey],
    ) -> None:
        self.owner, self.pool, self.chunks, self.futures, self.books = (
            owner,
            pool,
            chunks,
            futures,
            books,
        )

    def result(self) -> list[VerifiedPair | None]:
        out: list[VerifiedPair | None] = []
        for chunk, future in zip(self.chunks, self.futures, strict=True):
            out.extend(self.owner._settle(self.pool, chunk, future))
        self.owner._landed(self.books)
        return out
