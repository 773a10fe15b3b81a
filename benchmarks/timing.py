"""Timing helpers the micro-benchmarks share."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def per_item(fn: Callable[[T], object], items: Sequence[T], repeats: int) -> float:
    """Median µs per item of ``fn`` over ``items``, over ``repeats`` passes (the median: a
    shared machine's slow passes do not move it)."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for item in items:
            fn(item)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1e6 / len(items)
