"""`bookdup dedup`: candidates by term queries, verification in Python, relations and clusters out.

Stages per batch of query books: (1) one ``_msearch`` with, per book, a band-collision query, a
shared-unique-word query and one translated-unique-word query per other language with a
dictionary; (2) each new candidate pair is verified and classified by the ``bookdup`` core; (3)
related pairs are bulk-written to the relations index. After all batches, union-find over every
stored relation gives edition and work clusters, and only books whose cluster id changed are
updated.

Incremental runs (``since``) query with the new books only, against the whole index: pairs
between two old books were settled by earlier runs and are kept, so the clusters equal those of
a full run. Every write is idempotent (relation ids are ``a|b``), so a killed run just runs again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.cluster import assign_clusters, edition_edges, work_edges
from bookdup.features import BookFeatures, features_from_doc
from query.related import RelationFinder
from store.bulk import bulk_write
from store.candidates import CandidateParams
from store.iterate import batched, iter_documents
from store.runs import RunRecorder, get_run
from store.schema import IndexNames, ensure_indices

SKIP_FLAGS = frozenset({"empty", "no_unique_words", "alphabetical"})


@dataclass(frozen=True)
class DedupParams:
    """Knobs of a dedup job."""

    candidates: CandidateParams = field(default_factory=CandidateParams)
    batch_size: int = 32  # query books per _msearch round trip
    # Book features kept in memory for verification, ~100 KB each (hashes, pages, signatures):
    # a miss costs an mget and a decode (~6 ms), and candidates point anywhere in the index.
    cache_size: int = 20000
    translations: bool = True


@dataclass
class DedupSummary:
    """Counts per stage, timings and skipped books of one dedup run."""

    run_id: str
    books: int = 0
    query_books: int = 0
    candidate_pairs: int = 0
    verified_pairs: int = 0
    relations: dict[str, int] = field(default_factory=dict)
    stale_relations_removed: int = 0
    clusters_updated: int = 0
    edition_clusters: int = 0
    work_clusters: int = 0
    max_df: int = 0
    stop_terms: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def as_counts(self) -> dict[str, Any]:
        return {
            "books": self.books,
            "query_books": self.query_books,
            "candidate_pairs": self.candidate_pairs,
            "verified_pairs": self.verified_pairs,
            "relations": dict(self.relations),
            "stale_relations_removed": self.stale_relations_removed,
            "clusters_updated": self.clusters_updated,
            "edition_clusters": self.edition_clusters,
            "work_clusters": self.work_clusters,
            "max_df": self.max_df,
            "stop_terms": self.stop_terms,
            "skipped": len(self.skipped),
        }


def resolve_since(client: Elasticsearch, names: IndexNames, since: str) -> str:
    """A run id or an ISO time → the ISO time from which books count as new."""
    run = get_run(client, names, since)
    if run is not None:
        return run["started_at"]
    try:
        datetime.fromisoformat(since)
    except ValueError as exc:
        raise ValueError(f"--since {since!r} is neither a run id nor an ISO date/time") from exc
    return since


def relation_document(
    a: BookFeatures, b: BookFeatures, result: dict[str, Any], run_id: str, now: str
) -> dict[str, Any]:
    """The relations-index document for a verified pair, with ``a`` < ``b``."""
    direction = result.get("direction")
    if direction in ("x_in_y", "y_in_x"):
        direction = "a_in_b" if direction == "x_in_y" else "b_in_a"
    return {
        "a": a.book_id,
        "b": b.book_id,
        "relation": result["relation"],
        "direction": direction,
        "confidence": round(float(result["confidence"]), 4),
        "translated": a.language != b.language,
        "languages": [a.language, b.language],
        "x": int(result["x"]),
        "y": int(result["y"]),
        "shared": int(result["shared"]),
        "lcs": int(result["lcs"]),
        "cs": round(float(result["cs"]), 4),
        "its": round(float(result["its"]), 4),
        "signals": result.get("signals", {}),
        "evidence": result.get("evidence", {}),
        "run_id": run_id,
        "created_at": now,
    }


def run_dedup(
    client: Elasticsearch,
    names: IndexNames,
    *,
    since: str | None = None,
    params: DedupParams | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DedupSummary:
    """Find, verify, classify and cluster related books; returns (and records) the summary.

    ``progress(done, total)`` is called after each batch of query books.
    """
    params = params or DedupParams()
    ensure_indices(client, names)
    client.indices.refresh(index=[names.books, names.relations])
    since_time = resolve_since(client, names, since) if since else None
    recorder = RunRecorder(
        client, names, "dedup", params={"since": since, "since_time": since_time}
    )
    summary = DedupSummary(run_id=recorder.run_id)
    t0 = time.monotonic()

    finder = RelationFinder(
        client,
        names,
        params.candidates,
        translations=params.translations,
        cache_size=params.cache_size,
    )
    summary.books, summary.max_df, summary.stop_terms = (
        finder.n_books,
        finder.max_df,
        finder.n_stop_terms,
    )
    summary.timings["prepare_s"] = round(time.monotonic() - t0, 3)

    query = {"range": {"indexed_at": {"gte": since_time}}} if since_time else None
    total = client.count(index=names.books, query=query)["count"] if query else summary.books
    seen: set[tuple[str, str]] = set()
    produced: set[str] = set()
    queried: set[str] = set()
    t_search = t_wait = t_verify = t_write = 0.0
    done = 0

    def search(queries: list[BookFeatures]) -> tuple[list[tuple[str, str]], float]:
        ts = time.monotonic()
        return list(finder.searcher.candidates(queries)), time.monotonic() - ts

    def settle(
        batch: list[dict[str, Any]], searched: Future[tuple[list[tuple[str, str]], float]]
    ) -> Iterator[dict[str, Any]]:
        """Verify one batch's new candidate pairs; yield relation and book-marker actions."""
        nonlocal t_search, t_wait, t_verify, done
        waited = time.monotonic()
        found, seconds = searched.result()
        t_wait += time.monotonic() - waited
        t_search += seconds
        pairs = [p for p in dict.fromkeys(found) if p not in seen]
        seen.update(pairs)
        summary.candidate_pairs += len(pairs)
        tv = time.monotonic()
        now = recorder.now()
        for a, b, result in finder.verify_pairs(pairs):
            if (set(a.flags) | set(b.flags)) & SKIP_FLAGS:
                continue
            summary.verified_pairs += 1
            relation = result["relation"]
            if relation == "UNRELATED":
                continue
            summary.relations[relation] = summary.relations.get(relation, 0) + 1
            pair_id = f"{a.book_id}|{b.book_id}"
            produced.add(pair_id)
            doc = relation_document(a, b, result, recorder.run_id, now)
            yield {"_index": names.relations, "_id": pair_id, "_source": doc}
        t_verify += time.monotonic() - tv
        for hit in batch:
            yield {
                "_op_type": "update",
                "_index": names.books,
                "_id": hit["_id"],
                "doc": {"dedup_run": recorder.run_id},
            }
        done += len(batch)
        if progress:
            progress(done, total)

    def relation_actions() -> Iterator[dict[str, Any]]:
        """Batches flow through a one-deep pipeline: the node answers the candidate searches of
        batch i + 1 (in a thread, waiting on HTTP) while this thread verifies batch i, so the
        node's core and the verifier's core work at the same time."""
        hits = iter_documents(
            client, names.books, query=query, source=["features", "flags"], page_size=200
        )
        pending: tuple[list[dict[str, Any]], Future[Any]] | None = None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="candidates") as pool:
            for batch in batched(hits, params.batch_size):
                queries: list[BookFeatures] = []
                for hit in batch:
                    src = hit["_source"]
                    flags = set(src.get("flags", [])) & SKIP_FLAGS
                    if flags:
                        summary.skipped.append((hit["_id"], "flagged " + ",".join(sorted(flags))))
                        continue
                    queries.append(
                        finder.cache.put(features_from_doc(src["features"], words=False))
                    )
                summary.query_books += len(queries)
                queried.update(hit["_id"] for hit in batch)
                searched = pool.submit(search, queries)
                if pending is not None:
                    yield from settle(*pending)
                pending = (batch, searched)
            if pending is not None:
                yield from settle(*pending)

    tw = time.monotonic()
    report = bulk_write(client, relation_actions(), chunk_size=500)
    t_write = time.monotonic() - tw - t_verify - t_wait
    for failure in report.failures:
        summary.skipped.append((failure.id, f"write refused: {failure.reason}"))
    summary.timings.update(
        # search_s: the searches themselves; search_wait_s: the part verification did not hide
        search_s=round(t_search, 3),
        search_wait_s=round(t_wait, 3),
        verify_s=round(t_verify, 3),
        read_write_s=round(t_write, 3),
    )
    client.indices.refresh(index=names.relations)
    summary.stale_relations_removed = remove_stale_relations(
        client, names, produced, None if since_time is None else queried
    )
    tc = time.monotonic()
    client.indices.refresh(index=[names.books, names.relations])
    updated, n_edition, n_work = write_clusters(client, names)
    summary.clusters_updated, summary.edition_clusters, summary.work_clusters = (
        updated,
        n_edition,
        n_work,
    )
    summary.timings["cluster_s"] = round(time.monotonic() - tc, 3)
    summary.timings["total_s"] = round(time.monotonic() - t0, 3)
    if summary.verified_pairs and t_verify:
        summary.timings["pairs_verified_per_s"] = round(summary.verified_pairs / t_verify, 1)
    recorder.finish(
        counts=summary.as_counts(),
        timings=summary.timings,
        skipped=[{"book": b, "reason": r} for b, r in summary.skipped[:1000]],
    )
    return summary


def remove_stale_relations(
    client: Elasticsearch, names: IndexNames, keep: set[str], touching: set[str] | None
) -> int:
    """Delete relations this run no longer finds (books changed, thresholds moved).

    A full run owns every relation (``touching`` None); an incremental run only those that
    involve the books it queried, so pairs of untouched books stay as earlier runs left them.
    """
    if touching is None:
        hits = iter_documents(client, names.relations, source=False)
    else:
        ids = sorted(touching)
        hits = (
            hit
            for start in range(0, len(ids), 1000)
            for hit in iter_documents(
                client,
                names.relations,
                query={
                    "bool": {
                        "should": [
                            {"terms": {"a": ids[start : start + 1000]}},
                            {"terms": {"b": ids[start : start + 1000]}},
                        ]
                    }
                },
                source=False,
            )
        )
    stale = (
        {"_op_type": "delete", "_index": names.relations, "_id": hit["_id"]}
        for hit in hits
        if hit["_id"] not in keep
    )
    return bulk_write(client, stale).ok


def write_clusters(client: Elasticsearch, names: IndexNames) -> tuple[int, int, int]:
    """Union-find over all stored relations; update books whose cluster ids changed.

    Returns (books updated, edition clusters, work clusters).
    """
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
    updates = (
        {
            "_op_type": "update",
            "_index": names.books,
            "_id": book_id,
            "doc": {"edition_cluster": editions[book_id], "work_cluster": works[book_id]},
        }
        for book_id, (edition, work) in current.items()
        if (edition, work) != (editions[book_id], works[book_id])
    )
    report = bulk_write(client, updates, refresh="wait_for")
    return report.ok, len(set(editions.values())), len(set(works.values()))
