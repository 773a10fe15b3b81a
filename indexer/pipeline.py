"""A one-deep pipeline: the next item's slow call runs in a thread while the caller works.

The dedup job's candidate searches wait on HTTP (the node's core) while verification runs on
the job's own core; overlapping the two keeps both busy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
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
