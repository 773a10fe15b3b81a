"""prefetch: results in order, the next call overlapping the caller's work; read_ahead: items
in order, drawn in a thread, bounded, failures raised to the caller, stopped when closed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from indexer.pipeline import prefetch, read_ahead


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


def test_read_ahead_yields_every_item_once_in_order_drawn_in_another_thread() -> None:
    drawn_in: set[str] = set()

    def items() -> Iterator[int]:
        for i in range(100):
            drawn_in.add(threading.current_thread().name)
            yield i

    assert list(read_ahead(items())) == list(range(100))
    assert drawn_in == {"read-ahead"}
    assert list(read_ahead([])) == []


def test_read_ahead_draws_at_most_depth_items_ahead() -> None:
    drawn = 0

    def items() -> Iterator[int]:
        nonlocal drawn
        for i in range(50):
            drawn += 1
            yield i

    for depth in (1, 3):
        drawn = 0
        for taken, _ in enumerate(read_ahead(items(), depth), start=1):
            # queued (depth) and one waiting to be queued, whatever the threads' timing
            assert drawn <= taken + depth + 1


def test_read_ahead_raises_a_failure_after_the_items_before_it() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ConnectionError("node gone")

    seen = []
    with pytest.raises(ConnectionError, match="node gone"):
        for i in read_ahead(items()):
            seen.append(i)
    assert seen == [1, 2]


def test_read_ahead_closed_early_stops_its_thread_and_closes_the_items() -> None:
    closed_in: list[str] = []

    def endless() -> Iterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed_in.append(threading.current_thread().name)  # e.g. a point in time closed

    it = read_ahead(endless())
    assert [next(it), next(it)] == [0, 1]
    it.close()
    assert closed_in == ["read-ahead"]
    assert not any(t.name == "read-ahead" for t in threading.enumerate())
