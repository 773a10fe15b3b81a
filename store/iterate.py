"""Read every document of an index with point-in-time + search_after.

PIT gives a consistent snapshot even while a job writes to the same index, and search_after
with the ``_shard_doc`` tiebreaker pages through millions of documents without deep paging.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from elasticsearch import Elasticsearch

from store.retry import with_retries


def iter_documents(
    client: Elasticsearch,
    index: str,
    *,
    query: dict[str, Any] | None = None,
    source: list[str] | bool | None = None,
    page_size: int = 1000,
    keep_alive: str = "5m",
) -> Iterator[dict[str, Any]]:
    """Yield hits (``_id``, ``_source``) of ``index`` matching ``query``, in index order."""
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
            }
            if source is not None:
                body["_source"] = source
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
