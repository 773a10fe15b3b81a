"""Admission control for ``bookdup serve``: bounded work in flight, bounded waiting, deadlines.

A few heavy requests must not degrade everyone, and a slow or dead node must not pile requests
up: every endpoint that reads Elasticsearch runs through a ``Gate``.

- ``reads`` (search, related) lets ``max_inflight`` requests work at once; ``heavy`` (match,
  explain, plot: CPU-bound, one computes at a time) lets ``max_heavy`` in, so heavy requests
  never take the cheap reads' places. At most ``max_inflight + max_heavy`` requests talk to the
  node at once.
- A request beyond that waits up to ``queue_wait`` seconds for a place; at most ``2 × size``
  wait per gate. Past either bound it is refused at once with ``Busy`` (answered 429 with
  ``Retry-After``): the queue is bounded in length and in time, never unbounded.
- Admitted work runs in a worker thread under ``store.deadline.within(request_timeout)``: every
  Elasticsearch call it makes, and every retry, ends by then (answered 504 on a timeout, 503
  when the node refuses connections).
- Each gate has its own worker threads, ``size + max_waiting`` of them (the most it ever
  admits or lets wait), and a request past that is refused on the event loop, without a
  thread: 130 clients hammering the heavy endpoints take no thread, and no place in a shared
  pool, from the cheap reads (issue 30: with one shared pool of 40 threads the refusals
  themselves queued for a thread, and so did the reads behind them).

The gates are threading semaphores taken in the worker thread itself, so they hold across event
loops and a cancelled request cannot leak a place (the thread runs to its end, shielded from
the request's cancellation, and gives its place back).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from store.deadline import within

T = TypeVar("T")

#: Seconds a refused client is told to wait (``Retry-After``).
RETRY_AFTER_S = 1


class Busy(RuntimeError):
    """No place for this request in time: the server is at its in-flight limit (429)."""


@dataclass(frozen=True)
class Limits:
    """The server's admission settings (``bookdup serve`` flags).

    Defaults suit a single node with a 1-GB heap: its search pool has ~(3/2 × cores + 1)
    threads, so 8 concurrent reads keep it busy without building its own queue.
    """

    max_inflight: int = 8
    max_heavy: int = 2
    queue_wait: float = 1.0
    request_timeout: float = 8.0

    def __post_init__(self) -> None:
        if self.max_inflight < 1 or self.max_heavy < 1:
            raise ValueError("max_inflight and max_heavy must be at least 1")
        if self.queue_wait < 0 or self.request_timeout <= 0:
            raise ValueError("queue_wait must be >= 0 and request_timeout > 0")


class Gate:
    """At most ``size`` holders; at most ``max_waiting`` waiting, each up to ``wait`` seconds."""

    def __init__(self, name: str, size: int, wait: float, max_waiting: int) -> None:
        self.name = name
        self.size = size
        self.wait = wait
        self.max_waiting = max_waiting
        self._places = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._waiting = 0
        self.holding = 0  # places taken now (for tests and figures)
        self._claimed = 0  # requests given a thread and not finished (≤ size + max_waiting)
        self._threads = ThreadPoolExecutor(size + max_waiting, thread_name_prefix=f"gate-{name}")

    def _busy(self) -> Busy:
        return Busy(f"the server is busy ({self.name}): retry in {RETRY_AFTER_S} s")

    def _enter(self) -> None:
        if self._places.acquire(blocking=False):
            return
        with self._lock:
            if self._waiting >= self.max_waiting:
                raise self._busy()
            self._waiting += 1
        try:
            if not self._places.acquire(timeout=self.wait):
                raise self._busy()
        finally:
            with self._lock:
                self._waiting -= 1

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` once a place is free (``Busy`` when none frees in time)."""
        self._enter()
        with self._lock:
            self.holding += 1
        try:
            return fn(*args)
        finally:
            with self._lock:
                self.holding -= 1
            self._places.release()

    def full(self) -> bool:
        """Whether a request would be refused now (every place and waiting slot taken)."""
        return self._claimed >= self.size + self.max_waiting

    def _run_claimed(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return self.run(fn, *args)
        finally:
            with self._lock:
                self._claimed -= 1

    async def run_async(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in one of this gate's threads once a place is free; ``Busy`` at once,
        on the event loop, when every place is taken and every waiting slot too."""
        with self._lock:
            if self.full():
                raise self._busy()
            self._claimed += 1
        try:
            future = asyncio.get_running_loop().run_in_executor(
                self._threads, self._run_claimed, fn, *args
            )
        except BaseException:
            with self._lock:
                self._claimed -= 1
            raise
        # a client that goes away cancels the request, not its thread (which gives back its
        # place when done); its outcome is then nobody's, and is read here to drop it quietly
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        return await asyncio.shield(future)


class Admission:
    """The server's two gates and its request deadline."""

    #: The heavy endpoints (method, path): refused in front of the app while the heavy gate is
    #: full, before a body is read and before routing and validation.
    HEAVY = frozenset(
        {("POST", "/api/match"), ("GET", "/api/explain"), ("GET", "/api/explain/plot")}
    )

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits = limits or Limits()
        self.reads = Gate("reads", limits.max_inflight, limits.queue_wait, 2 * limits.max_inflight)
        self.heavy = Gate("heavy", limits.max_heavy, limits.queue_wait, 2 * limits.max_heavy)

    def refuse_early(self, scope: Any) -> str | None:
        """The 429 message for a heavy request while the heavy gate is full (for
        ``server.limits.Guard``: answered before the body is read and the app routes it; under
        attack the refusals are most of the requests, and the event loop serves them all);
        None otherwise."""
        if self.heavy.full() and (scope.get("method"), scope.get("path")) in self.HEAVY:
            return str(self.heavy._busy())
        return None

    def _timed(self, fn: Callable[..., T], *args: Any) -> T:
        with within(self.limits.request_timeout):
            return fn(*args)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """A cheap read (search, related), in a worker thread, admitted and with a deadline."""
        return await self.reads.run_async(self._timed, fn, *args)

    async def compute(self, fn: Callable[..., T], *args: Any) -> T:
        """Heavy work (match, explain, plot), in a worker thread, admitted and with a deadline."""
        return await self.heavy.run_async(self._timed, fn, *args)
