"""Catalog search with duplicates collapsed: one hit per edition (or work) cluster."""

from __future__ import annotations

from typing import Any

from elasticsearch import Elasticsearch

from store.retry import with_retries

CLUSTER_FIELDS = {"edition": "edition_cluster", "work": "work_cluster"}


def catalog_search(
    client: Elasticsearch,
    index: str,
    text: str,
    *,
    collapse: str | None = "edition",
    size: int = 10,
    language: str | None = None,
    editions_shown: int = 5,
) -> list[dict[str, Any]]:
    """Search title, author and opening text; collapse hits on the chosen cluster field.

    Each result carries the best-matching book and, when collapsed, the other members of its
    cluster that match (``editions``) and how many there are (``cluster_size``).
    """
    query: dict[str, Any] = {
        "bool": {
            "should": [
                {"match": {"title": {"query": text, "boost": 3}}},
                {"match": {"author": {"query": text, "boost": 2}}},
                {"match": {"excerpt": text}},
            ],
            "minimum_should_match": 1,
            "filter": [{"term": {"language": language}}] if language else [],
        }
    }
    body: dict[str, Any] = {
        "query": query,
        "size": size,
        "_source": [
            "book_id",
            "title",
            "author",
            "language",
            "year",
            "edition_cluster",
            "work_cluster",
        ],
    }
    if collapse:
        field = CLUSTER_FIELDS[collapse]
        body["collapse"] = {
            "field": field,
            "inner_hits": {
                "name": "editions",
                "size": editions_shown,
                "_source": ["book_id", "title", "language", "year"],
            },
        }
    response = with_retries()(client.search)(index=index, **body).body
    results = []
    for hit in response["hits"]["hits"]:
        item = dict(hit["_source"], score=hit["_score"])
        inner = hit.get("inner_hits", {}).get("editions")
        if inner:
            item["cluster_size"] = inner["hits"]["total"]["value"]
            item["editions"] = [h["_source"] for h in inner["hits"]["hits"]]
        results.append(item)
    return results
