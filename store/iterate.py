"""Read every document of an index with point-in-time + search_after.

PIT gives a consistent snapshot even while a job writes to the same index, and search_after
with the ``_shard_doc`` tiebreaker pages through millions of documents without deep paging.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from elasticsearch import Elasticsearch, NotFoundError

from store.retry import with_retries

#: Point-in-time contexts lost in one iteration before giving up (a node restarting in a loop).
MAX_PIT_RESTARTS = 5
log = logging.getLogger("bookdup.iterate")


def iter_documents(
    client: Elasticsearch,
    index: str,
    *,
    query: dict[str, Any] | None = None,
    source: list[str] | bool | None = None,
    page_size: int = 1000,
    keep_alive: str = "5m",
    versions: bool = False,
    doc_values: list[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield hits (``_id``, ``_source``) of ``index`` matching ``query``, each once; with
    ``versions``, their ``_seq_no`` and ``_primary_term`` (to update them only if unchanged);
    with ``doc_values``, those fields' values in ``fields`` (read from doc values: with
    ``source=False`` the node loads no stored field, where filtering ``_source`` still
    decompresses and parses all of it).

    A point in time is lost when the node restarts (its search contexts die with it) or when
    the caller dwells longer than ``keep_alive`` on one page; the walk then starts again on a
    new one and skips the ids it has already yielded, instead of failing the job.
    """
    yielded: set[str] = set()
    for attempt in range(MAX_PIT_RESTARTS + 1):
        try:
            pages = _iter_pit(
                client, index, query, source, page_size, keep_alive, versions, doc_values
            )
            for hit in pages:
                if hit["_id"] not in yielded:
                    yielded.add(hit["_id"])
                    yield hit
            return
        except NotFoundError as exc:
            if attempt == MAX_PIT_RESTARTS or "index_not_found" in str(exc):
                raise
            log.warning("point in time on %s lost (%s); walking it again", index, exc.message)


def _iter_pit(
    client: Elasticsearch,
    index: str,
    query: dict[str, Any] | None,
    source: list[str] | bool | None,
    page_size: int,
    keep_alive: str,
    versions: bool = False,
    doc_values: list[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """One point-in-time walk in index order: search_after with the ``_shard_doc`` tiebreaker."""
    pit = with_retries()(client.open_point_in_time)(index=index, keep_alive=keep_alive).body["id"]
    search = with_retries()(client.search)
    try:
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "size": page_size,
                "pit": {"id": pit, "keep_alive": keep_alive},
                "sort": [{"_shard_doc": "asc"}],
                "query": query or {"match_all": {}},
                "track_total_hits": False,
                "seq_no_primary_term": versions,
            }
            if source is not None:
                body["_source"] = source
            if doc_values:
                body["docvalue_fields"] = doc_values
            if after is not None:
                body["search_after"] = after
            response = search(**body).body
            pit = response.get("pit_id", pit)
            hits = response["hits"]["hits"]
            if not hits:
                return
            yield from hits
            after = hits[-1]["sort"]
    finally:
        with contextlib.suppress(Exception):  # the PIT expires by itself anyway
            client.close_point_in_time(id=pit)


T = TypeVar("T")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of ``size`` items (the last one shorter): msearch and mget work per batch."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
