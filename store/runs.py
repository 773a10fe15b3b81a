"""Run records: every job stores what it did, so `bookdup status` can show the last runs.

A job killed half way never writes "finished", so a record also names the process that runs
it (host, pid and the process's start time, which a reused pid does not share); a "running"
record whose process is gone on this host is reported as "interrupted".
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from store.retry import with_retries
from store.schema import IndexNames


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_run_id(kind: str) -> str:
    """``<kind>-<UTC time>-<random>``: sortable by start, unique across hosts."""
    stamp = utc_now().replace(":", "").replace("-", "")[:15]
    return f"{kind}-{stamp}-{uuid.uuid4().hex[:6]}"


class RunRecorder:
    """Writes a run document when a job starts and completes it when the job ends."""

    def __init__(
        self,
        client: Elasticsearch,
        names: IndexNames,
        kind: str,
        params: dict[str, Any],
        run_id: str | None = None,
    ) -> None:
        self._client = client
        self._index = names.runs
        self.started_at = utc_now()
        self.run_id = run_id or new_run_id(kind)
        self._doc: dict[str, Any] = {
            "run_id": self.run_id,
            "kind": kind,
            "status": "running",
            "started_at": self.started_at,
            "params": params,
            "process": process_identity(os.getpid()),
        }
        self._write()

    @staticmethod
    def now() -> str:
        return utc_now()

    def _write(self) -> None:
        with_retries()(self._client.index)(
            index=self._index, id=self.run_id, document=self._doc, refresh="wait_for"
        )

    def finish(
        self,
        *,
        counts: dict[str, Any],
        timings: dict[str, Any],
        skipped: list[dict[str, Any]] | None = None,
        warnings: list[dict[str, Any]] | None = None,
        status: str = "finished",
    ) -> None:
        self._doc.update(
            status=status,
            finished_at=utc_now(),
            counts=counts,
            timings=timings,
            skipped=skipped or [],
            warnings=warnings or [],
        )
        self._write()


def _start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux ``/proc``), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]  # field 22; the name before ")" may hold spaces


def process_identity(pid: int) -> dict[str, Any]:
    """What tells this process apart from any other, now or later, on any host."""
    return {"host": socket.gethostname(), "pid": pid, "start": _start_ticks(pid)}


def effective_status(run: dict[str, Any]) -> str:
    """The recorded status, except "interrupted" for a "running" run whose process is gone.

    Only a process on this host can be checked; elsewhere a "running" record is taken at its
    word.
    """
    status = str(run.get("status", "?"))
    process = run.get("process") or {}
    if status != "running" or process.get("host") != socket.gethostname():
        return status
    alive = _start_ticks(int(process.get("pid", 0)))
    return status if alive is not None and alive == process.get("start") else "interrupted"


def last_runs(client: Elasticsearch, names: IndexNames, size: int = 10) -> list[dict[str, Any]]:
    """The most recent runs, newest first, with their effective status."""
    response = client.search(
        index=names.runs,
        size=size,
        sort=[{"started_at": "desc"}],
        query={"bool": {"must_not": [{"term": {"kind": "lock"}}]}},
    )
    runs = [hit["_source"] for hit in response["hits"]["hits"]]
    return [dict(run, status=effective_status(run)) for run in runs]


def get_run(client: Elasticsearch, names: IndexNames, run_id: str) -> dict[str, Any] | None:
    """One run by id, or None."""
    response = client.options(ignore_status=404).get(index=names.runs, id=run_id)
    return response.body.get("_source") if response.body.get("found") else None


def resume_after_interrupted(
    client: Elasticsearch, names: IndexNames, kind: str, run_id: str
) -> str | None:
    """The id of the run of ``kind`` before ``run_id`` if it was killed, now marked so.

    A job killed half way leaves a "running" record; the next run of its kind resumes its work
    (every write is idempotent) and says so, and the old record is set to "interrupted" for
    readers on any host.
    """
    response = with_retries()(client.search)(
        index=names.runs,
        size=2,
        sort=[{"started_at": "desc"}],
        query={"bool": {"filter": [{"term": {"kind": kind}}]}},
    )
    earlier = [h["_source"] for h in response["hits"]["hits"] if h["_id"] != run_id][:1]
    if not earlier or effective_status(earlier[0]) != "interrupted":
        return None
    previous = str(earlier[0]["run_id"])
    with_retries()(client.update)(
        index=names.runs, id=previous, doc={"status": "interrupted"}, refresh="wait_for"
    )
    return previous
