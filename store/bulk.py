"""Streaming bulk writes with per-document error reporting and bounded retries.

Like ``elasticsearch.helpers.streaming_bulk``, but a whole chunk is retried on connection errors
and 502/503/504 (a node restart mid-job must not lose documents), and documents rejected with
429 are sent again after a backoff. Every write carries an explicit ``_id``, so a
retried chunk overwrites instead of duplicating.

Back-pressure: a chunk the node refused with 429, whole (its indexing-pressure limit: the
request's bytes do not fit; the chunk is split in halves and sent again) or document by document
(its write queue is full), halves the size of the chunks that follow; clean chunks grow
it back, a quarter at a time, to the size asked for — additive recovery, multiplicative
back-off, as TCP does, so a struggling node gets smaller requests instead of the same ones
again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast

from elasticsearch import ApiError, Elasticsearch
from elasticsearch.serializer import JsonSerializer

from store.retry import POLICY, RETRY_STATUSES, is_rejection, retry_budget, with_retries

Action = dict[str, Any]
#: A bulk body: a document, or one already encoded (`encode_source`) and sent as it is.
Body = dict[str, Any] | bytes
#: Bulk headers and their bodies (None for a delete), as one request sends them.
Chunk = list[tuple[dict[str, Any], Body | None]]
#: Encodes documents as the client does (UTF-8, compact separators): the same bytes either way.
_JSON = JsonSerializer()


def encode_source(doc: dict[str, Any]) -> bytes:
    """A document's ``_source`` as the bulk request carries it; a worker process can encode it
    so that the writer only streams bytes."""
    return _JSON.dumps(doc)


def add_fields(source: bytes, fields: dict[str, Any]) -> bytes:
    """An encoded ``_source`` (a JSON object) with ``fields`` added last: the bytes of
    ``encode_source({**doc, **fields})``."""
    if not fields:
        return source
    return source[:-1] + b"," + _JSON.dumps(fields)[1:]


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


#: What a helpers-style action puts in the bulk header (``if_*``: written only if unchanged).
_HEADER_KEYS = ("_index", "_id", "_routing", "if_seq_no", "if_primary_term")


def _expand(action: Action) -> tuple[dict[str, Any], Body | None]:
    """Split a helpers-style action into the bulk header and body."""
    action = dict(action)
    op = action.pop("_op_type", "index")
    header: dict[str, Any] = {op: {k: action.pop(k) for k in _HEADER_KEYS if k in action}}
    if op == "delete":
        return header, None
    if op == "update":
        body: dict[str, Any] = {
            k: action.pop(k) for k in ("doc", "doc_as_upsert", "upsert") if k in action
        }
        return header, body
    return header, action.pop("_source", action)


def _chunks(actions: Iterable[Action], chunk_size: ChunkSize, max_bytes: int) -> Iterator[Chunk]:
    """Chunks of at most ``chunk_size.current`` documents (read at each chunk) and max_bytes."""
    chunk: Chunk = []
    size = 0
    for action in actions:
        header, body = _expand(action)
        nbytes = _size(body)
        if chunk and (len(chunk) >= chunk_size.current or size + nbytes > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((header, body))
        size += nbytes
    if chunk:
        yield chunk


def _size(body: Body | None) -> int:
    """The bytes of a body in the request (those of an encoded one, without encoding it again)."""
    if body is None:
        return 0
    if isinstance(body, bytes):
        return len(body)
    return len(json.dumps(body, separators=(",", ":")))


def _operations(chunk: Chunk) -> list[Body]:
    ops: list[Body] = []
    for header, body in chunk:
        ops.append(header)
        if body is not None:
            ops.append(body)
    return ops


def _write_chunk(
    send: Callable[[list[Body]], dict[str, Any]],
    chunk: Chunk,
    report: BulkReport,
    deadline: float,
) -> bool:
    """Send one chunk until every document is written or refused for good; True when the
    node pushed back (429) on the way. Refused documents are sent again after a backoff; when
    the node refused them all (the request's bytes do not fit its indexing-pressure limit), in
    two halves, down to single documents."""
    pending, waits = chunk, POLICY.waits()
    pushed_back = False
    while pending:
        refused, status, reason = _send(send, pending, report)
        if not refused:
            break
        pushed_back = True
        report.rejected += len(refused)
        if time.monotonic() >= deadline:
            report.failures += [_refused(header, status, reason) for header, _ in refused]
            break
        time.sleep(next(waits))
        if len(refused) == len(pending) > 1:
            half = len(refused) // 2
            _write_chunk(send, refused[:half], report, deadline)
            _write_chunk(send, refused[half:], report, deadline)
            break
        pending = refused
    return pushed_back


def _send(
    send: Callable[[list[Body]], dict[str, Any]], pending: Chunk, report: BulkReport
) -> tuple[Chunk, int, str]:
    """One bulk request: count what was written and what failed for good; return the documents
    to send again (refused with 429 or a passing 5xx), with the node's status and reason."""
    try:
        result = send(_operations(pending))
    except ApiError as exc:
        if not is_rejection(exc):
            raise
        return pending, 429, _reason(exc.body) or str(exc.message)
    refused: Chunk = []
    last_status, reason = 0, ""
    for (header, body), item in zip(pending, result["items"], strict=True):
        outcome = next(iter(item.values()))
        status = int(outcome.get("status", 500))
        if status < 300 or (status == 404 and "delete" in header):
            report.ok += 1
        elif status in RETRY_STATUSES:
            refused.append((header, body))
            last_status, reason = status, _reason(outcome)
        else:
            report.failures.append(BulkFailure(str(outcome.get("_id")), status, _reason(outcome)))
    return refused, last_status, reason


def _reason(answer: object) -> str:
    """The ``error.reason`` of a bulk item or an error body."""
    error = answer.get("error") if isinstance(answer, dict) else None
    return str(error.get("reason", error)) if isinstance(error, dict) else str(error or "")


def _refused(header: dict[str, Any], status: int, reason: str) -> BulkFailure:
    """A document the node kept refusing until the retry budget ran out."""
    doc_id = str(next(iter(header.values())).get("_id"))
    return BulkFailure(doc_id, status, f"the node refused it for the whole retry budget: {reason}")


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

    @with_retries(budget, statuses=RETRY_STATUSES - {429})
    def send(ops: list[Body]) -> dict[str, Any]:
        # the client's NDJSON serializer sends bytes lines as they are; its type names mappings
        return client.bulk(operations=cast(list[dict[str, Any]], ops), refresh=refresh).body

    for chunk in _chunks(actions, size, max_chunk_bytes):
        if _write_chunk(send, chunk, report, time.monotonic() + budget):
            size.back_off()
            report.smallest_chunk = min(report.smallest_chunk, size.current)
        else:
            size.recover()
        if on_chunk:
            on_chunk(report)
    return report


def bulk_write_concurrently(
    client: Elasticsearch, shares: Sequence[Iterable[Action]], *, chunk_size: int = 500
) -> BulkReport:
    """`bulk_write` of each share of actions on its own thread, one bulk request of each in
    flight at once (shares hold no document in common; the order between them is lost).

    A shard runs one bulk request on one write thread: updates that rewrite whole documents
    (a book's ~70 KB source and its thousands of key terms) keep one core of the node busy
    while the others idle; concurrent requests to the shard are indexed side by side. Each
    share is consumed as it is written, so lazy shares keep a large job's memory flat.
    """
    if len(shares) <= 1:
        return bulk_write(client, shares[0] if shares else [], chunk_size=chunk_size)
    with ThreadPoolExecutor(max_workers=len(shares), thread_name_prefix="bulk") as pool:
        reports = list(pool.map(lambda s: bulk_write(client, s, chunk_size=chunk_size), shares))
    return BulkReport(
        ok=sum(r.ok for r in reports),
        failures=[f for r in reports for f in r.failures],
        rejected=sum(r.rejected for r in reports),
        smallest_chunk=min(r.smallest_chunk for r in reports),
    )
