"""Batched searches: many candidate queries in one round trip."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elasticsearch import Elasticsearch

from store.retry import with_retries


class SearchFailed(RuntimeError):
    """One search of a batch failed; carries the reason the cluster gave."""


def msearch(
    client: Elasticsearch, index: str, bodies: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Run ``bodies`` against ``index`` in one ``_msearch``; responses in the same order.

    A per-search error raises ``SearchFailed`` rather than silently returning no candidates,
    because a missing candidate list would silently lower recall.
    """
    if not bodies:
        return []
    searches: list[dict[str, Any]] = []
    for body in bodies:
        searches.append({"index": index})
        searches.append(body)
    response = with_retries()(client.msearch)(searches=searches).body
    results = response["responses"]
    for result in results:
        if "error" in result:
            error = result["error"]
            reason = error.get("reason") if isinstance(error, dict) else str(error)
            raise SearchFailed(f"a candidate search failed: {reason}")
    return results
