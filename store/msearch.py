"""Batched searches: many candidate queries in one round trip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elasticsearch import Elasticsearch

from store.retry import with_retries


class SearchFailed(RuntimeError):
    """One search of a batch failed; carries the reason the cluster gave."""


#: The search type of a search scored by term statistics (idf): with several shards each shard
#: would score by its own statistics, so the ranking (and a capped candidate list) would depend
#: on how books fall into shards; a first round collects the statistics of the whole index.
#: On a one-shard index Elasticsearch skips that round.
DFS = "dfs_query_then_fetch"


def msearch(
    client: Elasticsearch,
    index: str,
    bodies: Sequence[dict[str, Any] | str],
    search_types: Sequence[str | None] | None = None,
    max_concurrent: int | None = None,
) -> list[dict[str, Any]]:
    """Run ``bodies`` (dicts, or JSON text sent as it is) against ``index`` in one ``_msearch``;
    responses in the same order.
    ``search_types[i]`` (e.g. ``DFS``), when given and not None, is body i's search type.

    ``max_concurrent`` bounds how many of them the node runs at once (its default takes up to
    the whole search thread pool: right for a job, not beside a server's cheap reads).
    A per-search error raises ``SearchFailed`` rather than silently returning no candidates,
    because a missing candidate list would silently lower recall.
    """
    if not bodies:
        return []
    searches: list[dict[str, Any] | str] = []
    types = list(search_types) if search_types is not None else [None] * len(bodies)
    for body, search_type in zip(bodies, types, strict=True):
        header: dict[str, Any] = {"index": index}
        if search_type is not None:
            header["search_type"] = search_type
        searches.append(header)
        searches.append(body)
    options = {} if max_concurrent is None else {"max_concurrent_searches": max_concurrent}
    response = with_retries()(client.msearch)(searches=searches, **options).body
    results = response["responses"]
    for result in results:
        if "error" in result:
            error = result["error"]
            reason = error.get("reason") if isinstance(error, dict) else str(error)
            raise SearchFailed(f"a candidate search failed: {reason}")
    return results
