"""The cluster stage: union-find over every stored relation, cluster ids written back.

Clusters are recomputed from all relations rather than patched, so a relation removed (a book
withdrawn, a pair no longer found) splits what it held together; only books whose ids change
are written, so a run that changes nothing writes nothing. The new ids are written with
automatic refresh paused and published by one refresh, so catalog search never collapses on a
half-applied clustering (a cluster split across its old and new id).

With the ids, each book gets its place in its edition cluster (``edition_rank``, 0 for the
book search shows for the cluster: ``bookdup.cluster.representative_ranks``) and whether it is
a part or an abridgement of another indexed book (``partial``), which search ranks lower.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.cluster import (
    assign_clusters,
    contained_books,
    edition_edges,
    representative_ranks,
    work_edges,
)
from indexer.failpoints import failpoint
from store.bulk import bulk_write, bulk_write_concurrently
from store.iterate import iter_documents
from store.schema import (
    IndexNames,
    add_display_title,
    flush,
    merge_segments,
    paused_refresh,
    refresh,
)
from store.shown import MARKER, SHOWN_FROM

#: The lock every job that writes relations or cluster ids takes (dedup, remove).
CLUSTER_LOCK = "dedup"


#: What the cluster stage writes on a book: its cluster ids, rank and partial flag.
Stored = tuple[str | None, str | None, int | None, bool | None]
STORED_FIELDS = ["edition_cluster", "work_cluster", "edition_rank", "partial"]
#: Bulk requests of cluster updates in flight at once (one write thread of the node each).
CONCURRENT_UPDATES = 2


@dataclass(frozen=True)
class Clustering:
    """Edition and work cluster id of every book, its rank in its edition cluster, whether it
    is a part or an abridgement of another book, and what the index holds today."""

    editions: dict[str, str]
    works: dict[str, str]
    current: dict[str, Stored]
    ranks: dict[str, int] = field(default_factory=dict)
    partial: frozenset[str] = frozenset()

    def computed(self, book_id: str) -> Stored:
        return (
            self.editions[book_id],
            self.works[book_id],
            self.ranks.get(book_id, 0),
            book_id in self.partial,
        )

    def changed(self) -> list[str]:
        """Books whose stored cluster ids, rank or flag differ from the computed ones."""
        return [
            book_id for book_id, stored in self.current.items() if stored != self.computed(book_id)
        ]


def compute_clusters(client: Elasticsearch, names: IndexNames) -> Clustering:
    """Union-find over the stored relations between books that are still indexed.

    Every field is read from doc values, not ``_source``: filtering a book's source still has
    the node decompress and parse all of it (~70 KB with its features)."""
    relation_fields = ["a", "b", "relation", "direction"]
    relations = [
        (_first(f, "a"), _first(f, "b"), _first(f, "relation"), _first(f, "direction"))
        for f in _doc_values(client, names.relations, relation_fields)
    ]
    current: dict[str, Stored] = {}
    stats: dict[str, tuple[int | None, int | None]] = {}
    book_fields = [*STORED_FIELDS, "n_words", "n_unique"]
    for h in iter_documents(client, names.books, source=False, doc_values=book_fields):
        f = h.get("fields", {})
        current[h["_id"]] = (
            _first(f, "edition_cluster"),
            _first(f, "work_cluster"),
            _first(f, "edition_rank"),
            _first(f, "partial"),
        )
        stats[h["_id"]] = (_first(f, "n_words"), _first(f, "n_unique"))
    known = [r for r in relations if r[0] in current and r[1] in current]
    pairs = [(a, b, rel) for a, b, rel, _ in known]
    editions = assign_clusters(current, edition_edges(pairs))
    works = assign_clusters(current, work_edges(pairs))
    contained = contained_books(known)
    ranks = representative_ranks(editions, contained, stats)
    return Clustering(editions, works, current, ranks, frozenset(contained))


def _doc_values(client: Elasticsearch, index: str, fields: list[str]) -> Iterator[dict[str, Any]]:
    """The ``fields`` of every document of ``index``, from doc values."""
    for h in iter_documents(client, index, source=False, doc_values=fields):
        yield h.get("fields", {})


def _first(fields: dict[str, Any], name: str) -> Any:
    """A single-valued field's doc value; None when the document has none."""
    values = fields.get(name)
    return values[0] if values else None


def apply_clusters(client: Elasticsearch, names: IndexNames, clustering: Clustering) -> int:
    """Write the changed cluster ids, not yet searchable (`write_clusters` publishes them).
    Each update rewrites the whole book, so they go as concurrent requests
    (`bulk_write_concurrently`), each share's updates made as they are sent."""

    def update(book_id: str) -> dict[str, Any]:
        return {
            "_op_type": "update",
            "_index": names.books,
            "_id": book_id,
            "doc": dict(zip(STORED_FIELDS, clustering.computed(book_id), strict=True)),
        }

    changed = clustering.changed()
    shares = [map(update, changed[i::CONCURRENT_UPDATES]) for i in range(CONCURRENT_UPDATES)]
    return bulk_write_concurrently(client, shares).ok


def write_display_titles(client: Elasticsearch, names: IndexNames) -> int:
    """Store the display title (``store.shown``) of every book indexed before it was stored,
    so search reads them from doc values; each only if the book is unchanged since it was read
    (an index job that rewrote it wrote its own: a version conflict). Returns the books written."""
    unshown = {"bool": {"must_not": {"exists": {"field": MARKER}}}}
    hits = iter_documents(client, names.books, query=unshown, source=SHOWN_FROM, versions=True)
    titles = (
        {
            "_op_type": "update",
            "_index": names.books,
            "_id": h["_id"],
            "if_seq_no": h["_seq_no"],
            "if_primary_term": h["_primary_term"],
            "doc": {MARKER: add_display_title(h["_source"])[MARKER]},
        }
        for h in hits
    )
    return bulk_write(client, titles).ok


def write_clusters(client: Elasticsearch, names: IndexNames) -> tuple[int, int, int]:
    """Compute the clusters and update the books whose ids changed, all visible at once.

    Returns (books updated, edition clusters, work clusters).
    """
    clustering = compute_clusters(client, names)
    failpoint("clusters.computed")
    with paused_refresh(client, names.books):
        write_display_titles(client, names)
        updated = apply_clusters(client, names, clustering)
        failpoint("clusters.applied")  # written, not yet published
        refresh(client, names.books)  # publish: every change at one refresh
    if updated:  # the rewritten books' segments merged as the index job's are, then committed
        merge_segments(client, names.books)
        flush(client, names.books)
    return updated, len(set(clustering.editions.values())), len(set(clustering.works.values()))
