"""A process of the server's own for its CPU-bound work: explain pictures and match verification.

Drawing a picture (matplotlib) and verifying a match (feature extraction of the uploaded text,
then ``relate`` with each candidate: pure Python and numpy) hold the GIL for hundreds of
milliseconds. In a thread of the server they held it against the event loop and the cheap
reads (issue 30: under the hostile soak matplotlib took ~40% of the GIL-held time, verification
~13%). Here they run in a worker process, spawned (not forked: the server has threads) at the
first use, ending when the server does (however the server ended, even killed).

The server uses ONE worker at the lowest CPU priority (``lowest_priority``: Linux's
``SCHED_IDLE``, else ``nice`` 19): on a 2-core machine two CPU-bound workers at ``nice`` 10 beside
the node took the server's own core and made the reads slower (issue 30, branch h30c); one idle
worker leaves a core to the server and the node, and the heavy work gets what is left.

``server.admission`` bounds the heavy requests in flight to ``--max-heavy``, and each waits for
its own work here, so no more than that many tasks are ever queued; the worker bounds its cache
of prepared sequences as the server does (``--verify-cache-mb``).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from bookdup.verify import cache_limits, set_cache_limit

T = TypeVar("T")


def lowest_priority() -> str:
    """Put this process at the lowest CPU priority it can have: Linux's ``SCHED_IDLE`` (runs
    only on CPU time nothing else of normal priority wants), else ``nice`` 19. Its name."""
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return "SCHED_IDLE"
        except OSError:
            pass
    os.nice(19 - os.nice(0))
    return "nice 19"


def _init_worker(parent: int, cache_bytes: int, cache_entries: int) -> None:
    """A worker: the lowest CPU priority, the server's cache bound; it ends when the server
    does."""
    lowest_priority()
    set_cache_limit(max_bytes=cache_bytes, max_entries=cache_entries)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def worker_pid() -> int:
    """The process that runs a task (for tests: the work ran outside the server)."""
    return os.getpid()


def worker_priority() -> tuple[int, int]:
    """The scheduling policy and nice value of the process that runs a task (for tests)."""
    return os.sched_getscheduler(0), os.nice(0)


class Workers:
    """``run(fn, *args)``: ``fn(*args)`` in one of ``workers`` processes (``fn`` and its
    arguments pickled), its result or its exception back in the calling thread."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _started(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_init_worker,
                    initargs=(os.getpid(), *cache_limits()),
                )
            return self._pool

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        pool = self._started()
        try:
            return pool.submit(fn, *args).result()
        except BrokenProcessPool:
            # a worker died (killed, out of memory): this request fails (500), the next one
            # starts a new pool
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def close(self) -> None:
        """Stop the processes (at the server's shutdown)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
