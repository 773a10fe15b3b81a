"""The one retry policy for talking to a flaky cluster.

Exponential backoff with jitter on connection errors, timeouts and 429/502/503/504, bounded in
total time so a dead cluster ends the job with a clear error instead of hanging forever. Whole
requests (`with_retries`) and documents a bulk request refused one by one with 429
(`store.bulk`) back off by the same `RetryPolicy`; the client's own transport retries (a few,
at once, for a dropped connection) are set from it too (`store.connection`).
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from elasticsearch import ApiError, ConnectionTimeout
from elasticsearch import ConnectionError as ESConnectionError
from tenacity import (
    RetryCallState,
    before_sleep_log,
    retry,
    retry_if_exception,
    stop_after_delay,
    wait_random_exponential,
)
from tenacity.stop import stop_base

from store.deadline import remaining

RETRY_STATUSES = frozenset({429, 502, 503, 504})
log = logging.getLogger("bookdup.retry")
T = TypeVar("T")


def is_transient(exc: BaseException, statuses: frozenset[int] = RETRY_STATUSES) -> bool:
    """True for failures worth retrying: the node may come back or drain its queue."""
    if isinstance(exc, ESConnectionError | ConnectionTimeout):
        return True
    return isinstance(exc, ApiError) and exc.meta.status in statuses


def is_rejection(exc: BaseException) -> bool:
    """A whole request refused with 429: the node's queue or indexing-pressure limit is full."""
    return isinstance(exc, ApiError) and exc.meta.status == 429


@dataclass(frozen=True)
class RetryPolicy:
    """How long and how often to retry a transient failure."""

    max_seconds: float = 180.0  # give up (and say so) after this long in all
    first_wait: float = 0.5  # the first backoff; each next one doubles, with full jitter
    max_wait: float = 15.0  # no single wait longer than this
    transport_retries: int = 3  # immediate retries inside the client, before any backoff

    def waits(self) -> Iterator[float]:
        """Backoff waits in seconds: exponential with full jitter, capped at ``max_wait``."""
        ceiling = self.first_wait
        while True:
            yield random.uniform(0, ceiling)
            ceiling = min(ceiling * 2, self.max_wait)


POLICY = RetryPolicy()
#: Overrides `RetryPolicy.max_seconds` for a whole process (operators; fault-injection tests).
BUDGET_VARIABLE = "BOOKDUP_RETRY_SECONDS"


def retry_budget() -> float:
    """Seconds a failing request is retried before the job gives up: ``$BOOKDUP_RETRY_SECONDS``
    or the policy's default (read at each call, so a test can set it for one job)."""
    value = os.environ.get(BUDGET_VARIABLE)
    try:
        return float(value) if value else POLICY.max_seconds
    except ValueError:
        log.warning("ignoring %s=%r: not a number of seconds", BUDGET_VARIABLE, value)
        return POLICY.max_seconds


class _PastDeadline(stop_base):
    """Stop when the backoff about to start would end after the caller's deadline
    (``store.deadline.within``): give up now, with the last failure, rather than after it."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        left = remaining()
        return left is not None and left <= (retry_state.upcoming_sleep or 0.0)


def with_retries(
    max_seconds: float | None = None, statuses: frozenset[int] = RETRY_STATUSES
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: retry transient failures (connection errors, ``statuses``) for up to
    ``max_seconds`` (default: the budget) or until the caller's deadline, then re-raise."""
    return retry(
        retry=retry_if_exception(lambda exc: is_transient(exc, statuses)),
        wait=wait_random_exponential(multiplier=POLICY.first_wait, max=POLICY.max_wait),
        stop=stop_after_delay(retry_budget() if max_seconds is None else max_seconds)
        | _PastDeadline(),
        before_sleep=before_sleep_log(log, logging.WARNING),
        reraise=True,
    )
