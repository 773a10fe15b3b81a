"""Stored relations as the verification policy reads them (``bookdup.relate.Link``): the
dedup job's incremental runs and ``bookdup match`` follow found translations through them."""

from __future__ import annotations

from collections.abc import Iterator

from elasticsearch import Elasticsearch

from bookdup.relate import Link
from store.iterate import iter_documents
from store.schema import IndexNames

#: Book ids per terms query: far under Elasticsearch's 65,536-term limit, and small responses.
IDS_PER_QUERY = 1000


def stored_links(client: Elasticsearch, names: IndexNames, ids: set[str]) -> Iterator[Link]:
    """The stored relations that involve any of ``ids`` (earlier runs' findings)."""
    ordered = sorted(ids)
    for start in range(0, len(ordered), IDS_PER_QUERY):
        chunk = ordered[start : start + IDS_PER_QUERY]
        query = {"bool": {"should": [{"terms": {"a": chunk}}, {"terms": {"b": chunk}}]}}
        source = ["a", "b", "translated", "languages"]
        for hit in iter_documents(client, names.relations, query=query, source=source):
            doc = hit["_source"]
            languages = doc.get("languages")
            pair = (languages[0], languages[1]) if languages and len(languages) == 2 else None
            yield Link(doc["a"], doc["b"], bool(doc.get("translated")), pair)
