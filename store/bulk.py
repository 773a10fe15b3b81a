"""Streaming bulk writes with per-document error reporting and bounded retries.

Like ``elasticsearch.helpers.streaming_bulk``, but a whole chunk is retried on connection errors
and 429/502/503/504 (a node restart mid-job must not lose documents), and documents rejected
one by one with 429 are retried on their own. Every write carries an explicit ``_id``, so a
retried chunk overwrites instead of duplicating.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from store.retry import POLICY, RETRY_STATUSES, retry_budget, with_retries

Action = dict[str, Any]


@dataclass(frozen=True)
class BulkFailure:
    """One document the cluster refused, with its reason."""

    id: str
    status: int
    reason: str


@dataclass
class BulkReport:
    ok: int = 0
    failures: list[BulkFailure] = field(default_factory=list)


def _expand(action: Action) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Split a helpers-style action into the bulk header and body."""
    action = dict(action)
    op = action.pop("_op_type", "index")
    header: dict[str, Any] = {
        op: {k: action.pop(k) for k in ("_index", "_id", "_routing") if k in action}
    }
    if op == "delete":
        return header, None
    if op == "update":
        body: dict[str, Any] = {
            k: action.pop(k) for k in ("doc", "doc_as_upsert", "upsert") if k in action
        }
        return header, body
    return header, action.pop("_source", action)


def _chunks(
    actions: Iterable[Action], chunk_size: int, max_bytes: int
) -> Iterator[list[tuple[dict[str, Any], dict[str, Any] | None]]]:
    chunk: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    size = 0
    for action in actions:
        header, body = _expand(action)
        nbytes = len(json.dumps(body, separators=(",", ":"))) if body is not None else 0
        if chunk and (len(chunk) >= chunk_size or size + nbytes > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((header, body))
        size += nbytes
    if chunk:
        yield chunk


def _operations(chunk: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for header, body in chunk:
        ops.append(header)
        if body is not None:
            ops.append(body)
    return ops


def bulk_write(
    client: Elasticsearch,
    actions: Iterable[Action],
    *,
    chunk_size: int = 500,
    max_chunk_bytes: int = 20 * 1024 * 1024,
    refresh: bool | str = False,
    max_seconds: float | None = None,
    on_chunk: Callable[[BulkReport], None] | None = None,
) -> BulkReport:
    """Write ``actions`` in chunks; return counts and every per-document failure.

    ``on_chunk`` sees the running report after each chunk (progress bars, checkpoints).
    """
    report = BulkReport()
    max_seconds = retry_budget() if max_seconds is None else max_seconds

    @with_retries(max_seconds)
    def send(ops: list[dict[str, Any]]) -> dict[str, Any]:
        return client.bulk(operations=ops, refresh=refresh).body

    for chunk in _chunks(actions, chunk_size, max_chunk_bytes):
        pending = chunk
        waits = POLICY.waits()
        deadline = time.monotonic() + max_seconds
        while pending:
            result = send(_operations(pending))
            retry_later = []
            for (header, body), item in zip(pending, result["items"], strict=True):
                outcome = next(iter(item.values()))
                status = int(outcome.get("status", 500))
                if status < 300 or (status == 404 and "delete" in header):
                    report.ok += 1
                elif status in RETRY_STATUSES and time.monotonic() < deadline:
                    retry_later.append((header, body))
                else:
                    error = outcome.get("error", {})
                    reason = error.get("reason", str(error)) if isinstance(error, dict) else error
                    report.failures.append(BulkFailure(str(outcome.get("_id")), status, reason))
            pending = retry_later
            if pending:
                time.sleep(next(waits))
        if on_chunk:
            on_chunk(report)
    return report
