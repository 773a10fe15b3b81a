"""One-deep pipelines: the next item's slow call (`prefetch`), or the next item itself
(`read_ahead`), is made in a thread while the caller works.

The dedup job's candidate searches and its pages of query books wait on HTTP (the node's core)
while verification runs on the job's own core; overlapping the two keeps both busy.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _wait(future: Future[R]) -> tuple[R, float]:
    started = time.monotonic()
    result = future.result()
    return result, time.monotonic() - started


def prefetch(items: Iterable[T], call: Callable[[T], R]) -> Iterator[tuple[R, float]]:
    """``(call(item), seconds waited for it)`` in order; ``call`` of item i + 1 runs in a
    thread while the caller handles the result of item i. Items are drawn in this thread."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefetch") as pool:
        pending: Future[R] | None = None
        for item in items:
            future = pool.submit(call, item)
            if pending is not None:
                yield _wait(pending)
            pending = future
        if pending is not None:
            yield _wait(pending)


class _End:
    """The producer's last word: its items are exhausted, or ``error`` stopped them."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def read_ahead(items: Iterable[T], depth: int = 1) -> Generator[T, None, None]:
    """``items`` in order, drawn in a thread up to ``depth`` ahead of the caller, so the caller
    does not wait for an item made by waiting on the node (a page of a search). An error
    drawing them is raised here, after the items before it; closing this iterator early stops
    the thread and closes ``items`` there (a generator's ``finally`` runs in its own thread)."""
    slots: queue.Queue[T | _End] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        source = iter(items)
        try:
            for item in source:
                slots.put(item)  # waits while the caller is `depth` items behind
                if stop.is_set():
                    return
            slots.put(_End())
        except BaseException as exc:  # handed over to be raised in the caller's thread
            slots.put(_End(exc))
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = slots.get()
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # unblock its put until it sees the stop
            with contextlib.suppress(queue.Empty):
                slots.get(timeout=0.05)
        thread.join()
