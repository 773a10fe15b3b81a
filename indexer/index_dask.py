"""Feature extraction on a Dask cluster (`bookdup index --scheduler`): the process pool's work
items as Dask tasks.

``--scheduler`` is `indexer.dask_cluster`'s: ``local`` starts a `LocalCluster` of ``workers``
processes for the job, any other value is a running scheduler's address, whose workers must
read the input files at the same paths. Each book file (or JSONL record read by the job) goes
to a worker through the same worker functions as with the process pool
(`indexer.index_worker.read_and_build` and `build`), which never raise; the job keeps the hash
lookups, the reading order and the bulk writes. A task that fails anyway (its worker killed
more than `distributed.scheduler.allowed-failures` times, a worker that cannot import bookdup)
is that item's failure, reported with its file like any other: the job goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bookdup.model import Book
from indexer.dask_cluster import DaskCluster
from indexer.index_worker import Outcome
from readers import Source

__all__ = ["DaskExtractor"]


class _Pending:
    """A Dask future whose ``result()`` is the item's `Outcome`, a failure included."""

    def __init__(self, future: Any, where: str) -> None:
        self._future = future
        self._where = where

    def result(self) -> Outcome:
        try:
            outcome: Outcome = self._future.result()
        except Exception as exc:  # noqa: BLE001 - KilledWorker, or raised where nothing should
            return Outcome(self._where, verdict=f"extraction failed on the Dask cluster: {exc!r}")
        finally:
            self._future.release()
        return outcome


def _where(item: Any) -> str:
    """The file (or record) to name when the item's task fails."""
    if isinstance(item, Source):
        return str(item.path)
    if isinstance(item, Book):
        return item.source or item.id
    return "?"


class DaskExtractor(DaskCluster):
    """``submit`` as a `ProcessPoolExecutor`'s, on a Dask cluster; ``with`` closes it."""

    def submit(self, fn: Callable[..., Outcome], /, *args: Any) -> _Pending:
        # pure=False: no hashing of the book to make a key, and no key shared with another job
        future = self.client.submit(fn, *args, pure=False)
        return _Pending(future, _where(args[0]) if args else "?")

    def __enter__(self) -> DaskExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
