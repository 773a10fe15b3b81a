"""Streaming bulk writes with per-document error reporting and bounded retries.

Like ``elasticsearch.helpers.streaming_bulk``, but a whole chunk is retried on connection errors
and 429/502/503/504 (a node restart mid-job must not lose documents), and documents rejected
one by one with 429 are retried on their own. Every write carries an explicit ``_id``, so a
retried chunk overwrites instead of duplicating.

Back-pressure: a chunk in which the node rejected documents with 429 (its write queue or its
indexing-pressure limit is full) halves the size of the chunks that follow; clean chunks grow
it back, a quarter at a time, to the size asked for — additive recovery, multiplicative
back-off, as TCP does, so a struggling node gets smaller requests instead of the same ones
again.
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
    rejected: int = 0  # documents the node refused with 429 and that were sent again
    smallest_chunk: int = 0  # the smallest chunk size back-pressure brought the writer to


@dataclass
class ChunkSize:
    """The number of documents per bulk request, adapting to the node's 429 rejections."""

    wanted: int
    current: int = 0

    def __post_init__(self) -> None:
        self.current = self.current or self.wanted

    def back_off(self) -> None:
        """The node rejected documents: halve (never below one document)."""
        self.current = max(1, self.current // 2)

    def recover(self) -> None:
        """A clean chunk: grow by a quarter of what is wanted, up to it."""
        self.current = min(self.wanted, self.current + max(1, self.wanted // 4))


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
    actions: Iterable[Action], chunk_size: ChunkSize, max_bytes: int
) -> Iterator[list[tuple[dict[str, Any], dict[str, Any] | None]]]:
    """Chunks of at most ``chunk_size.current`` documents (read at each chunk) and max_bytes."""
    chunk: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    size = 0
    for action in actions:
        header, body = _expand(action)
        nbytes = len(json.dumps(body, separators=(",", ":"))) if body is not None else 0
        if chunk and (len(chunk) >= chunk_size.current or size + nbytes > max_bytes):
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


Chunk = list[tuple[dict[str, Any], dict[str, Any] | None]]


def _write_chunk(
    send: Callable[[list[dict[str, Any]]], dict[str, Any]],
    chunk: Chunk,
    report: BulkReport,
    max_seconds: float,
) -> bool:
    """Send one chunk until every document is written or refused for good; True when the
    node rejected some of its documents with 429 on the way (back-pressure)."""
    pending, waits = chunk, POLICY.waits()
    deadline = time.monotonic() + max_seconds
    pushed_back = False
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
            pushed_back = True
            report.rejected += len(pending)
            time.sleep(next(waits))
    return pushed_back


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

    ``chunk_size`` is the most documents per request; back-pressure (429s) makes chunks
    smaller for a while. ``on_chunk`` sees the running report after each chunk (progress
    bars, checkpoints).
    """
    report = BulkReport(smallest_chunk=chunk_size)
    budget = retry_budget() if max_seconds is None else max_seconds
    size = ChunkSize(chunk_size)

    @with_retries(budget)
    def send(ops: list[dict[str, Any]]) -> dict[str, Any]:
        return client.bulk(operations=ops, refresh=refresh).body

    for chunk in _chunks(actions, size, max_chunk_bytes):
        if _write_chunk(send, chunk, report, budget):
            size.back_off()
            report.smallest_chunk = min(report.smallest_chunk, size.current)
        else:
            size.recover()
        if on_chunk:
            on_chunk(report)
    return report
