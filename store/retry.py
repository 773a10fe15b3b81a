"""The one retry policy for talking to a flaky cluster.

Exponential backoff with jitter on connection errors, timeouts and 429/502/503/504, bounded in
total time so a dead cluster ends the job with a clear error instead of hanging forever.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from elasticsearch import ApiError, ConnectionTimeout
from elasticsearch import ConnectionError as ESConnectionError
from tenacity import (
    before_sleep_log,
    retry,
    retry_if_exception,
    stop_after_delay,
    wait_random_exponential,
)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
log = logging.getLogger("bookdup.retry")
T = TypeVar("T")


def is_transient(exc: BaseException) -> bool:
    """True for failures worth retrying: the node may come back or drain its queue."""
    if isinstance(exc, ESConnectionError | ConnectionTimeout):
        return True
    return isinstance(exc, ApiError) and exc.meta.status in RETRY_STATUSES


def with_retries(max_seconds: float = 180.0) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: retry transient failures for up to ``max_seconds``, then re-raise."""
    return retry(
        retry=retry_if_exception(is_transient),
        wait=wait_random_exponential(multiplier=0.5, max=15),
        stop=stop_after_delay(max_seconds),
        before_sleep=before_sleep_log(log, logging.WARNING),
        reraise=True,
    )
