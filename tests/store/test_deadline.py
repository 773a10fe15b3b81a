"""``store.deadline``: a caller's deadline bounds every call to the node and every retry, and
code outside ``within`` (the CLI's jobs) keeps its own budgets."""

from __future__ import annotations

import time

import pytest
from elastic_transport import ConnectionError as TransportConnectionError

from store.connection import serving_client
from store.deadline import DeadlineExceeded, remaining, within
from store.retry import with_retries


def test_retries_stop_before_the_callers_deadline() -> None:
    calls = []

    def refused() -> None:
        calls.append(time.monotonic())
        raise TransportConnectionError("connection refused")

    started = time.monotonic()
    with within(1.5), pytest.raises(TransportConnectionError):
        with_retries(60.0)(refused)()  # a 60-second budget, cut to the deadline
    assert time.monotonic() - started <= 1.6
    assert len(calls) >= 2  # it did retry while there was time


def test_the_transport_refuses_a_call_once_the_deadline_has_passed(es_settings) -> None:
    client = serving_client(es_settings, request_timeout=5.0)
    assert client.cluster.health()["status"] in ("green", "yellow")  # no deadline: served
    with within(0.0), pytest.raises(DeadlineExceeded):
        client.cluster.health()


def test_within_nests_and_ends() -> None:
    assert remaining() is None  # the CLI's jobs run without a deadline
    with within(5.0):
        with within(60.0):  # an inner, later deadline does not extend the outer one
            left = remaining()
            assert left is not None and 4.0 < left <= 5.0
        with within(1.0):
            left = remaining()
            assert left is not None and left <= 1.0
    assert remaining() is None
