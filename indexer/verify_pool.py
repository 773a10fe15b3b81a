"""Verification on every core: a batch's planned pairs verified in worker processes.

The parent plans each pair (it holds the lexicons and the feature cache) and classifies the
results; the workers run the pure `bookdup.relate.verify_detached`. Each worker is a process
of its own, and a pair goes to the worker that made its costliest preparation before (its
translated book: `AffineRouter`), so a book is translated by one worker, not by each, and
each worker's cache of prepared books holds half of them. A worker's pairs go in contiguous
chunks and come back in input order, so the relations are those of the in-process path.

A chunk whose worker fails (an exception, or a crashed process) is verified again in the
parent: no pair is lost, and an error the pair itself causes is raised as in-process. A
crashed worker is replaced, a few times at most; then the job goes on in-process.

`Verifier` is the seam the dedup job holds: this process pool, or the Dask one
(`indexer.verify_dask`, `--scheduler`), which chunks, orders and falls back the same way
(its scheduler places the chunks: no routing by book).
`submit` hands a batch to the workers and returns at once (`Pending`), so the job can plan the
next batch, and classify and write the last one, while the workers verify.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self, TypeVar

from bookdup import bitlcs, lcs, screenkernel, sortkernel, translate
from bookdup.compare import translated_first
from bookdup.features import BookFeatures
from bookdup.relate import PairPlan, VerifiedPair, verify_planned
from bookdup.verify import Verification
from indexer.feature_shelf import BookKey, FeatureShelf, book_key
from indexer.verify_worker import init_worker, to_tasks, verify_chunk
from readers.dictionaries import Dictionaries

__all__ = [
    "MAX_DEFAULT_WORKERS",
    "AffineRouter",
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
    "affinity_key",
]

Planned = tuple[BookFeatures, BookFeatures, PairPlan]
T = TypeVar("T")

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
    """The keys of the books a batch reads, once each (a book object met again is skipped
    before its key is built: a batch has thousands of pairs and a few hundred books)."""
    books = {id(x): x for a, b, _ in planned for x in (a, b)}
    return iter(dict.fromkeys(book_key(x) for x in books.values()))


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


def split_planned(planned: Sequence[T], parts: int, least: int) -> list[Sequence[T]]:
    """Contiguous chunks of about ``parts`` equal sizes, each of ``least`` pairs at least."""
    size = max(least, -(-len(planned) // max(1, parts)))
    return [planned[i : i + size] for i in range(0, len(planned), size)]


def affinity_key(
    a: BookFeatures, b: BookFeatures, plan: PairPlan
) -> tuple[BookKey, tuple[str, str] | None]:
    """The pair's costliest preparation: its translated book with the lexicon (a translation
    takes ~1.3 ms, a sort ~0.2 ms), else its first book."""
    d = plan.dictionary
    if d is None:
        return book_key(a), None
    return book_key(a if translated_first(a, b, d) else b), (d.source, d.target)


class AffineRouter:
    """Which worker verifies each pair: the one its `affinity_key` first went to, while that
    worker's share of the batch stays within ``slack`` of an even share; else the least loaded
    (a book met by most of a batch, as in an incremental run, is shared out)."""

    def __init__(self, workers: int, slack: float = 0.05) -> None:
        self.workers = workers
        self.slack = slack
        self.owner: dict[Hashable, int] = {}  # a few entries a book: kept for the whole job

    def route(self, planned: Sequence[Planned]) -> list[int]:
        """Each pair's worker; the largest groups of one key are placed first."""
        groups: dict[Hashable, list[int]] = {}  # each key's pairs, keys in first-met order
        for i, p in enumerate(planned):
            groups.setdefault(affinity_key(*p), []).append(i)
        fair = len(planned) / self.workers * (1 + self.slack)
        load, lanes = [0] * self.workers, [0] * len(planned)
        for key in sorted(groups, key=lambda k: -len(groups[k])):  # stable: ties as first met
            for i in groups[key]:
                lane = self.owner.get(key)
                if lane is None or load[lane] + 1 > fair:
                    lane = min(range(self.workers), key=load.__getitem__)
                    self.owner.setdefault(key, lane)
                lanes[i] = lane
                load[lane] += 1
        return lanes


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
    """One single-process pool a worker, for one job's verification (a shared pool cannot send
    a pair to the worker that prepared its book); ``workers`` <= 1 verifies in-process."""

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
        self._router = AffineRouter(workers)
        self._pools = [self._start() for _ in range(workers)] if workers > 1 else []
        self._shelf = _open_shelf() if self._pools else None

    def _start(self) -> ProcessPoolExecutor:
        """A worker forked now: before the job's search thread starts, as the index job forks
        before its own threads (a lock held by a thread at fork time would stay held in the
        child), with the compiled kernels loaded (`bookdup.bitlcs.warm`) and the job's lexicons
        handed over, so no worker starts either again."""
        bitlcs.warm()
        lcs.warm()
        screenkernel.warm()
        sortkernel.warm()
        translate.warm()
        pool = ProcessPoolExecutor(
            max_workers=1, initializer=init_worker, initargs=(os.getpid(), self.lexicons)
        )
        pool.submit(int)  # with fork, the first submit starts the worker
        return pool

    def submit(self, planned: Sequence[Planned]) -> Pending:
        """The batch's chunks queued on their workers (in-process: verified now)."""
        if not self._pools or not planned:
            return Done(verify_here(planned))
        ref, books = None, list(batch_books(planned))
        if self._shelf is not None:
            ref = self._shelf.ref
            self._shelf.pin(books)
        lanes = self._router.route(planned)
        chunks: list[_Chunk] = []
        for lane, pool in enumerate(self._pools):
            mine = [i for i, to in enumerate(lanes) if to == lane]
            for part in split_planned(mine, self.chunks_per_worker, self.min_chunk):
                pairs = [planned[i] for i in part]
                future = pool.submit(verify_chunk, to_tasks(pairs, ref))
                chunks.append(_Chunk(part, pairs, lane, pool, future))
        return _PoolBatch(self, len(planned), chunks, books)

    def _settle(self, chunk: _Chunk) -> list[VerifiedPair | None]:
        """The chunk's results from its worker; verified here when the worker failed."""
        try:
            results = chunk.future.result()
        except BrokenProcessPool:
            if chunk.lane < len(self._pools) and self._pools[chunk.lane] is chunk.pool:
                self._replace(chunk.lane)
            self.fallbacks += 1
            return verify_here(chunk.pairs)
        except Exception:  # the worker raised: the pair will raise here too, or pass
            self.fallbacks += 1
            return verify_here(chunk.pairs)
        return chunk_pairs(chunk.pairs, results)

    def _landed(self, books: list[BookKey]) -> None:
        """A batch settled: its books may leave the shelf."""
        if self._shelf is not None:
            self._shelf.unpin(books)
            self._shelf.trim()

    def _replace(self, lane: int) -> None:
        """A worker died: a new one, or none at all (in-process) once the restarts are used up."""
        self._pools[lane].shutdown(wait=False, cancel_futures=True)
        if self.restarts_left > 0:
            self._pools[lane] = self._start()
        else:
            for pool in self._pools:
                pool.shutdown(wait=False, cancel_futures=True)
            self._pools = []
        self.restarts_left -= 1

    def close(self) -> None:
        """Stop the workers (pending chunks cancelled, running ones finished)."""
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools = []
        if self._shelf is not None:
            self._shelf.close()
            self._shelf = None


@dataclass(frozen=True)
class _Chunk:
    """Pairs of a batch (at ``at`` in it) queued on the worker of ``lane``."""

    at: Sequence[int]
    pairs: list[Planned]
    lane: int
    pool: ProcessPoolExecutor
    future: Future[list[Verification | None]]


class _PoolBatch:
    """A batch's chunks on the workers."""

    def __init__(
        self, owner: VerifyPool, size: int, chunks: list[_Chunk], books: list[BookKey]
    ) -> None:
        self.owner, self.size, self.chunks, self.books = owner, size, chunks, books

    def result(self) -> list[VerifiedPair | None]:
        out: list[VerifiedPair | None] = [None] * self.size
        for chunk in self.chunks:
            for i, verified in zip(chunk.at, self.owner._settle(chunk), strict=True):
                out[i] = verified
        self.owner._landed(self.books)
        return out
