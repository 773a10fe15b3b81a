"""`bookdup remove`: withdraw books; their relations go and their clusters are recomputed."""

from __future__ import annotations

from dataclasses import dataclass

from elasticsearch import Elasticsearch

from indexer.clustering import CLUSTER_LOCK, write_clusters
from store.bulk import bulk_write
from store.iterate import iter_documents
from store.locks import JobLock
from store.runs import RunRecorder, new_run_id
from store.schema import IndexNames, ensure_indices, refresh


@dataclass
class RemoveSummary:
    run_id: str
    books_removed: int
    missing: list[str]
    relations_removed: int
    clusters_updated: int


@dataclass
class RemovalPlan:
    """What `run_remove` would delete: (id, title) of each present book, the ids not in the
    index, and how many relations touch the present ones."""

    books: list[tuple[str, str | None]]
    missing: list[str]
    relations: int


def _touching(book_ids: list[str]) -> dict[str, object]:
    return {"bool": {"should": [{"terms": {"a": book_ids}}, {"terms": {"b": book_ids}}]}}


def removal_plan(client: Elasticsearch, names: IndexNames, book_ids: list[str]) -> RemovalPlan:
    """Nothing deleted: what removing ``book_ids`` would delete, to show before asking."""
    ensure_indices(client, names)
    found = client.mget(index=names.books, ids=book_ids, source=["title"]).body["docs"]
    books = [(d["_id"], (d.get("_source") or {}).get("title")) for d in found if d.get("found")]
    missing = [d["_id"] for d in found if not d.get("found")]
    refresh(client, names.relations)
    relations = client.count(index=names.relations, query=_touching(book_ids))["count"]
    return RemovalPlan(books, missing, int(relations))


def run_remove(client: Elasticsearch, names: IndexNames, book_ids: list[str]) -> RemoveSummary:
    """Delete ``book_ids`` and every relation touching them, then re-cluster the rest.

    A cluster that a removed book held together splits, because clusters are recomputed from
    the relations that remain.
    """
    ensure_indices(client, names)
    run_id = new_run_id("remove")
    with JobLock(client, names, CLUSTER_LOCK, run_id):
        recorder = RunRecorder(client, names, "remove", {"books": book_ids}, run_id)
        return _remove(client, names, book_ids, recorder)


def _remove(
    client: Elasticsearch, names: IndexNames, book_ids: list[str], recorder: RunRecorder
) -> RemoveSummary:
    found = client.mget(index=names.books, ids=book_ids, source=False).body["docs"]
    present = [d["_id"] for d in found if d.get("found")]
    missing = [d["_id"] for d in found if not d.get("found")]
    query = _touching(book_ids)
    refresh(client, names.relations)
    relation_ids = [
        h["_id"] for h in iter_documents(client, names.relations, query=query, source=False)
    ]
    actions = [{"_op_type": "delete", "_index": names.relations, "_id": i} for i in relation_ids]
    actions += [{"_op_type": "delete", "_index": names.books, "_id": i} for i in present]
    bulk_write(client, actions, refresh="wait_for")
    updated, _, _ = write_clusters(client, names)
    summary = RemoveSummary(recorder.run_id, len(present), missing, len(relation_ids), updated)
    recorder.finish(
        counts={
            "books_removed": summary.books_removed,
            "relations_removed": summary.relations_removed,
            "clusters_updated": updated,
        },
        timings={},
        skipped=[{"book": m, "reason": "not in the index"} for m in missing],
    )
    return summary
