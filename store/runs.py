"""Run records: every job stores what it did, so `bookdup status` can show the last runs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from elasticsearch import Elasticsearch

from store.retry import with_retries
from store.schema import IndexNames


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class RunRecorder:
    """Writes a run document when a job starts and completes it when the job ends."""

    def __init__(
        self, client: Elasticsearch, names: IndexNames, kind: str, params: dict[str, Any]
    ) -> None:
        self._client = client
        self._index = names.runs
        self.started_at = utc_now()
        stamp = self.started_at.replace(":", "").replace("-", "")[:15]
        self.run_id = f"{kind}-{stamp}-{uuid.uuid4().hex[:6]}"
        self._doc: dict[str, Any] = {
            "run_id": self.run_id,
            "kind": kind,
            "status": "running",
            "started_at": self.started_at,
            "params": params,
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
        status: str = "finished",
    ) -> None:
        self._doc.update(
            status=status,
            finished_at=utc_now(),
            counts=counts,
            timings=timings,
            skipped=skipped or [],
        )
        self._write()


def last_runs(client: Elasticsearch, names: IndexNames, size: int = 10) -> list[dict[str, Any]]:
    """The most recent runs, newest first."""
    response = client.search(
        index=names.runs, size=size, sort=[{"started_at": "desc"}], query={"match_all": {}}
    )
    return [hit["_source"] for hit in response["hits"]["hits"]]


def get_run(client: Elasticsearch, names: IndexNames, run_id: str) -> dict[str, Any] | None:
    """One run by id, or None."""
    response = client.options(ignore_status=404).get(index=names.runs, id=run_id)
    return response.body.get("_source") if response.body.get("found") else None
