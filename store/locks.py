"""One job of a kind at a time on one set of indices: a lock document with an expiry.

Two dedup runs writing relations and cluster ids at once would interleave their write-backs
(and, started apart, disagree). The lock is a document in the runs index created with
``op_type=create`` — Elasticsearch refuses a second create of the same id, so exactly one job
gets it. A job killed with SIGKILL cannot release it, so a lock is taken over when it has
expired (its holder renews it while it works) or when its holder's process is gone on this
host; the take-over is conditional on the lock's sequence number, so two jobs cannot both
take over the same stale lock.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from elasticsearch import ConflictError, Elasticsearch

from store.retry import with_retries
from store.runs import effective_status, process_identity, utc_now
from store.schema import IndexNames

#: How long a lock holds without renewal: longer than any one stage between renewals.
DEFAULT_TTL_S = 600.0


class JobLocked(RuntimeError):
    """Another job of this kind holds the lock; the message says which and what to do."""


@dataclass
class JobLock:
    """The lock of one job kind, held by one run; a context manager."""

    client: Elasticsearch
    names: IndexNames
    kind: str
    run_id: str
    ttl_s: float = DEFAULT_TTL_S
    _renewed: float = 0.0

    @property
    def lock_id(self) -> str:
        return f"lock-{self.kind}"

    def _document(self) -> dict[str, Any]:
        expires = datetime.now(UTC) + timedelta(seconds=self.ttl_s)
        return {
            "run_id": self.run_id,
            "kind": "lock",
            "status": "running",
            "started_at": utc_now(),
            "expires_at": expires.isoformat(timespec="milliseconds"),
            "params": {"job": self.kind},
            "process": process_identity(os.getpid()),
        }

    def acquire(self) -> JobLock:
        """Take the lock, or raise `JobLocked` naming the run that holds it."""
        create = with_retries()(self.client.create)
        try:
            create(index=self.names.runs, id=self.lock_id, document=self._document())
        except ConflictError:
            self._take_over_if_stale()
        self._renewed = time.monotonic()
        return self

    def _take_over_if_stale(self) -> None:
        held = self.client.options(ignore_status=404).get(index=self.names.runs, id=self.lock_id)
        if not held.body.get("found"):
            self._create_again()
            return
        holder = held["_source"]
        if not _is_stale(holder):
            raise JobLocked(
                f"another {self.kind} ({holder['run_id']}, pid {holder['process'].get('pid')} on "
                f"{holder['process'].get('host')}, since {holder['started_at']}) is running on "
                f"{self.names.prefix}-*: wait for it to finish (its lock expires at "
                f"{holder['expires_at']} if it died elsewhere)"
            )
        try:
            self.client.index(
                index=self.names.runs,
                id=self.lock_id,
                document=self._document(),
                if_seq_no=held["_seq_no"],
                if_primary_term=held["_primary_term"],
            )
        except ConflictError as exc:  # another job took the stale lock first
            raise JobLocked(f"another {self.kind} took over a stale lock just now") from exc

    def _create_again(self) -> None:
        """The lock was released between our create and our read: try once more."""
        try:
            self.client.create(index=self.names.runs, id=self.lock_id, document=self._document())
        except ConflictError as exc:
            raise JobLocked(f"another {self.kind} took the lock just now") from exc

    def renew(self) -> None:
        """Push the expiry forward; cheap to call often (writes at most every ttl/4)."""
        if time.monotonic() - self._renewed < self.ttl_s / 4:
            return
        expires = datetime.now(UTC) + timedelta(seconds=self.ttl_s)
        with_retries()(self.client.update)(
            index=self.names.runs,
            id=self.lock_id,
            doc={"expires_at": expires.isoformat(timespec="milliseconds")},
        )
        self._renewed = time.monotonic()

    def release(self) -> None:
        """Drop the lock if it is still ours."""
        held = self.client.options(ignore_status=404).get(index=self.names.runs, id=self.lock_id)
        if held.body.get("found") and held["_source"].get("run_id") == self.run_id:
            self.client.options(ignore_status=[404, 409]).delete(
                index=self.names.runs,
                id=self.lock_id,
                if_seq_no=held["_seq_no"],
                if_primary_term=held["_primary_term"],
                refresh="wait_for",
            )

    def __enter__(self) -> JobLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _is_stale(holder: dict[str, Any]) -> bool:
    """Expired, or held by a process that is gone (checkable on this host only)."""
    expires = datetime.fromisoformat(holder["expires_at"])
    return expires < datetime.now(UTC) or effective_status(holder) == "interrupted"
