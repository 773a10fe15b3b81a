"""prefetch: results in order, the next call overlapping the caller's work."""

from __future__ import annotations

import threading
import time

from indexer.pipeline import prefetch


def test_results_come_in_order_with_their_wait() -> None:
    out = list(prefetch(range(5), lambda i: i * i))
    assert [r for r, _ in out] == [0, 1, 4, 9, 16]
    assert all(w >= 0 for _, w in out)


def test_next_call_runs_while_the_caller_works() -> None:
    started: list[float] = []

    def slow(i: int) -> int:
        started.append(time.monotonic())
        time.sleep(0.05)
        return i

    seen_at = []
    for _result, _ in prefetch(range(3), slow):
        seen_at.append(time.monotonic())
        time.sleep(0.05)  # the caller's work on this result
    # item i + 1's call began before the caller finished with item i
    assert started[1] < seen_at[0] + 0.05 and started[2] < seen_at[1] + 0.05
    assert threading.active_count() >= 1


def test_empty_input_yields_nothing() -> None:
    assert list(prefetch([], lambda i: i)) == []
