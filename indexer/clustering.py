"""The cluster stage: union-find over every stored relation, cluster ids written back.

Clusters are recomputed from all relations rather than patched, so a relation removed (a book
withdrawn, a pair no longer found) splits what it held together; only books whose ids change
are written, so a run that changes nothing writes nothing. The new ids are written with
automatic refresh paused and published by one refresh, so catalog search never collapses on a
half-applied clustering (a cluster split across its old and new id).
"""

from __future__ import annotations

from dataclasses import dataclass

from elasticsearch import Elasticsearch

from bookdup.cluster import assign_clusters, edition_edges, work_edges
from indexer.failpoints import failpoint
from store.bulk import bulk_write
from store.iterate import iter_documents
from store.schema import IndexNames, paused_refresh, refresh

#: The lock every job that writes relations or cluster ids takes (dedup, remove).
CLUSTER_LOCK = "dedup"


@dataclass(frozen=True)
class Clustering:
    """Edition and work cluster id of every book, and what the index holds today."""

    editions: dict[str, str]
    works: dict[str, str]
    current: dict[str, tuple[str | None, str | None]]

    def changed(self) -> list[str]:
        """Books whose stored cluster ids differ from the computed ones."""
        return [
            book_id
            for book_id, stored in self.current.items()
            if stored != (self.editions[book_id], self.works[book_id])
        ]


def compute_clusters(client: Elasticsearch, names: IndexNames) -> Clustering:
    """Union-find over the stored relations between books that are still indexed."""
    relations = [
        (h["_source"]["a"], h["_source"]["b"], h["_source"]["relation"])
        for h in iter_documents(client, names.relations, source=["a", "b", "relation"])
    ]
    current = {
        h["_id"]: (h["_source"].get("edition_cluster"), h["_source"].get("work_cluster"))
        for h in iter_documents(client, names.books, source=["edition_cluster", "work_cluster"])
    }
    known = [r for r in relations if r[0] in current and r[1] in current]
    editions = assign_clusters(current, edition_edges(known))
    works = assign_clusters(current, work_edges(known))
    return Clustering(editions, works, current)


def apply_clusters(client: Elasticsearch, names: IndexNames, clustering: Clustering) -> int:
    """Write the changed cluster ids, not yet searchable (see `publish_clusters`)."""
    updates = (
        {
            "_op_type": "update",
            "_index": names.books,
            "_id": book_id,
            "doc": {
                "edition_cluster": clustering.editions[book_id],
                "work_cluster": clustering.works[book_id],
            },
        }
        for book_id in clustering.changed()
    )
    return bulk_write(client, updates).ok


def write_clusters(client: Elasticsearch, names: IndexNames) -> tuple[int, int, int]:
    """Compute the clusters and update the books whose ids changed, all visible at once.

    Returns (books updated, edition clusters, work clusters).
    """
    clustering = compute_clusters(client, names)
    failpoint("clusters.computed")
    with paused_refresh(client, names.books):
        updated = apply_clusters(client, names, clustering)
        failpoint("clusters.applied")  # written, not yet published
        refresh(client, names.books)  # publish: every change at one refresh
    return updated, len(set(clustering.editions.values())), len(set(clustering.works.values()))
