"""A deadline for everything one caller asks of Elasticsearch, however deep the call.

The server answers a person or a program that is waiting: a request must not spend a job's
retry budget (minutes) on a slow or dead node. ``within(seconds)`` sets a deadline for the
current context (thread); while it is set,

- ``DeadlineTransport`` gives each call to the node at most the time left (and refuses a call
  once none is left, with ``DeadlineExceeded``);
- ``store.retry.with_retries`` stops retrying before a backoff would pass it.

Code outside ``within`` (every CLI job) sees no deadline and keeps its budgets.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from typing import Any

from elastic_transport import ConnectionTimeout, Transport

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "bookdup_deadline", default=None
)


class DeadlineExceeded(ConnectionTimeout):
    """The caller's deadline passed before Elasticsearch answered (a timeout, not a refusal)."""


def remaining() -> float | None:
    """Seconds left before the current deadline (negative once passed); None without one."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Calls to Elasticsearch made inside this block end within ``seconds`` from now (an
    enclosing, earlier deadline is kept)."""
    deadline = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class DeadlineTransport(Transport):
    """The transport of a client whose calls honour ``within``
    (``Elasticsearch(..., transport_class=DeadlineTransport)``)."""

    def perform_request(self, method: str, target: str, **kwargs: Any) -> Any:
        left = remaining()
        if left is not None:
            if left <= 0:
                raise DeadlineExceeded(
                    "the request's deadline passed before Elasticsearch answered"
                )
            timeout = kwargs.get("request_timeout")
            kwargs["request_timeout"] = (
                left if not isinstance(timeout, int | float) else min(float(timeout), left)
            )
        return super().perform_request(method, target, **kwargs)
