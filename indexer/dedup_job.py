"""`bookdup dedup`: candidates by term queries, verification in Python, relations and clusters out.

The job strings together the stages of `indexer.dedup_stages`:

    prepare → select books → candidates → verify → classify → write relations
            → pairs through found translations (verify, classify, write)
            → remove stale relations → cluster and write back

Candidate searches of batch i + 1 run in a thread while batch i is verified (`prefetch`), so
the node's core and the verifier's core work at the same time; and batch i + 1 is handed to the
verification workers before batch i is classified and written, so the workers do not wait for
this process between batches. Translated pairs go with later batches, in windows grouped by
the book each translates (`indexer.dedup_stages.TranslatedWindows`).

Incremental runs (``since``) query with the new books only, against the whole index: pairs
between two old books were settled by earlier runs and are kept, so the clusters equal those of
a full run. Every write is idempotent (relation ids are ``a|b``), so a killed run just runs again.
"""

from __future__ import annotations

import gc
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.pairs import pair_key
from bookdup.relate import SAME_TEXT, Link, pairs_through_translations, translations_by_edition
from indexer.clustering import CLUSTER_LOCK, write_clusters, write_display_titles
from indexer.dedup_stages import (
    CandidateBatch,
    DedupParams,
    DedupRun,
    PendingBatch,
    QueryBatch,
    TranslatedWindows,
    classify_pairs,
    find_candidates,
    plan_candidates,
    prepare,
    select_books,
    stale_relation_ids,
    submit_planned,
    translation_window,
    write_actions,
)
from indexer.failpoints import failpoint
from indexer.pipeline import prefetch
from indexer.verify_pool import Planned, Verifier, open_verifier
from store.bulk import Action, bulk_write
from store.candidates import QueryKinds, with_held_pivots
from store.iterate import batched
from store.links import stored_links
from store.locks import JobLock
from store.nodestats import cluster_cpu_seconds
from store.retry import with_retries
from store.runs import (
    RunRecorder,
    effective_status,
    get_run,
    new_run_id,
    resume_after_interrupted,
)
from store.schema import IndexNames, ensure_indices, refresh

__all__ = ["DedupParams", "DedupSummary", "resolve_since", "run_dedup", "settled_by"]

Progress = Callable[[int, int], None]


#: Rounds of pairs through found translations: a round's new translations suggest the next.
THROUGH_TRANSLATIONS_ROUNDS = 3
#: Pairs verified and written per step of those rounds (the lock is renewed between steps).
THROUGH_TRANSLATIONS_CHUNK = 500
#: Relation documents per bulk request (small documents; 429s shrink it, ``store.bulk``).
RELATIONS_PER_BULK = 500
#: Skipped books kept in the run record (a bad corpus could skip every book of a big one).
MAX_RECORDED_SKIPPED = 1000


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
    resumed_from: str | None = None  # the killed run whose work this one picked up
    pairs_through_translations: int = 0  # verified beyond the searches' candidates
    # query books that asked no translated query: a same-text edition asked for them
    # (``DedupParams.translations_by_edition``)
    translations_by_edition: int = 0
    screened_pairs: int = 0  # candidates verified only if their order passed the screen
    screened_out: int = 0  # ... and of them, those that did not pass it (nor the floor)
    verify_fallbacks: int = 0  # chunks a verification worker failed, verified in-process
    nothing_new_since: str | None = None  # set when the job did nothing: the run that settled all
    # language pairs (e.g. "de-fr") of the index with no lexicon installed either way: their
    # translations were not searched (said, not silent: a missing package looks like no match)
    missing_lexicons: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def as_counts(self) -> dict[str, Any]:
        counts: dict[str, Any] = {
            "books": self.books,
            "query_books": self.query_books,
            "candidate_pairs": self.candidate_pairs,
            "pairs_through_translations": self.pairs_through_translations,
            "translations_by_edition": self.translations_by_edition,
            "screened_pairs": self.screened_pairs,
            "screened_out": self.screened_out,
            "verified_pairs": self.verified_pairs,
            "relations": dict(self.relations),
            "stale_relations_removed": self.stale_relations_removed,
            "clusters_updated": self.clusters_updated,
            "edition_clusters": self.edition_clusters,
            "work_clusters": self.work_clusters,
            "max_df": self.max_df,
            "stop_terms": self.stop_terms,
            "resumed_from": self.resumed_from,
            "skipped": len(self.skipped),
        }
        if self.verify_fallbacks:  # said only when a worker failed
            counts["verify_fallbacks"] = self.verify_fallbacks
        if self.missing_lexicons:
            counts["missing_lexicons"] = list(self.missing_lexicons)
        return counts

    def add_time(self, name: str, seconds: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + seconds


def resolve_since(client: Elasticsearch, names: IndexNames, since: str) -> str:
    """A run id or an ISO time → the ISO time from which books count as new."""
    run = get_run(client, names, since)
    if run is not None:
        return str(run["started_at"])
    try:
        datetime.fromisoformat(since)
    except ValueError as exc:
        raise ValueError(f"--since {since!r} is neither a run id nor an ISO date/time") from exc
    return since


def settled_by(client: Elasticsearch, names: IndexNames, params: DedupParams) -> str | None:
    """The id of the last dedup run if it completed, with the same translation and pivot-pair
    settings, and no book was indexed (added or changed) since it started; else None (there is
    work to do).

    A run killed after it (interrupted, or still running) leaves relations or clusters half
    written, so only a completed run as the latest one settles the collection.
    """
    search = with_retries()(client.search)
    hits = search(
        index=names.runs,
        size=1,
        sort=[{"started_at": "desc"}],
        query={"bool": {"filter": [{"term": {"kind": "dedup"}}]}},
    )["hits"]["hits"]
    if not hits:
        return None
    last = hits[0]["_source"]
    if effective_status(last) != "finished":
        return None
    recorded = last.get("params") or {}
    if bool(recorded.get("translations", True)) != params.translations:
        return None
    if bool(recorded.get("pivot_pairs", False)) != params.candidates.pivot_pairs:
        return None  # the flag changes the candidates: switching it is work to do
    refresh(client, names.books)
    new = with_retries()(client.count)(
        index=names.books, query={"range": {"indexed_at": {"gte": last["started_at"]}}}
    )["count"]
    return None if new else str(last["run_id"])


class _RelationStream:
    """Stages 1–5 over every batch, as one stream of bulk actions; keeps counts and timers.

    Timers are per stage and exclude each other: ``search_s`` the searches themselves,
    ``search_wait_s`` the part of them verification did not hide, ``verify_s`` verification
    and classification only (the bulk writes the stream feeds are not inside it). CPU times
    (``*_cpu_s``, `_CpuLedger`) say where the cores went while those clocks ran.
    """

    def __init__(self, run: DedupRun, summary: DedupSummary, total: int, progress: Progress | None):
        self.run = run
        self.summary = summary
        self.total = total
        self.progress = progress
        self.seen: set[tuple[str, str]] = set()
        #: screened candidates that did not pass (not seen: a later pass may verify them)
        self.screened_out: set[tuple[str, str]] = set()
        #: screened candidates handed to the verifier whose batch has not landed yet
        self.screening: set[tuple[str, str]] = set()
        #: ... of them, those a later batch offered outright (verified if they fail it)
        self.awaiting: dict[tuple[str, str], None] = {}
        #: translated pairs planned but not yet handed to the verifier
        self.windows = TranslatedWindows(translation_window(run.params, run.stop.n_books))
        self.produced: set[str] = set()
        self.queried: set[str] = set()
        self.queried_order: list[str] = []  # the query books in the order they were searched
        self.skipped_ids: set[str] = set()  # ... those set aside (flagged)
        self.same_text: list[tuple[str, str]] = []  # found relations of SAME_TEXT classes
        self.done = 0
        self.heartbeat: Callable[[], None] = lambda: None  # e.g. renew the job's lock
        self.pool: Verifier | None = None  # verification workers; None: in-process
        self.links: list[Link] = []  # the relations found so far
        self.incremental = False  # a --since run: earlier runs' relations count too

    def actions(self) -> Iterator[Action]:
        """Each batch handed to the verifier before the one before it is classified and
        written, so the workers verify while this process does the rest (`_InFlight`).

        With ``translations_by_edition`` the books are searched twice: first in their own
        language, then across languages, where a book whose same-text edition asks for the
        group's translations (``bookdup.relate.translations_by_edition``) asks nothing and
        the one asking screens as many hits as the group's lists held."""
        if not self.run.params.translations_by_edition:
            yield from self._searched(select_books(self.run), "all")
        else:
            self.total *= 2  # progress over both searches
            yield from self._searched(select_books(self.run), "same")
            yield from self._searched(self._across_batches(), "across")
        yield from self._written(self._flight(self.windows.drain()))
        self.heartbeat()
        yield from self._through_translations()

    def _searched(self, books: Iterable[QueryBatch], kinds: QueryKinds) -> Iterator[Action]:
        """The candidates of ``kinds`` of each batch of ``books``, verified and written."""
        batches = prefetch(books, lambda b: find_candidates(self.run, b, kinds))
        flying: _InFlight | None = None
        for found, waited in batches:
            self.summary.add_time("search_wait_s", waited)
            self.summary.add_time("search_s", found.seconds)
            self.summary.add_time("search_cpu_s", found.cpu_seconds)
            started = self._start(found, counted=kinds != "across")
            if flying is not None:
                yield from self._land(flying)
            flying = started
        if flying is not None:
            yield from self._land(flying)

    def _across_batches(self) -> Iterator[QueryBatch]:
        """The query books again, in their order, but those whose translations a same-text
        edition's queries stand for: batches of cached features for the searches across
        languages."""
        queried = [i for i in self.queried_order if i not in self.skipped_ids]
        grouped = {i for pair in self.same_text for i in pair} & set(queried)
        stand_in = translations_by_edition(self.same_text, self.run.cache.get_many(grouped))
        self.summary.translations_by_edition = len(stand_in)
        depth = Counter(stand_in.values())
        ids = [i for i in queried if i not in stand_in]
        self.done += len(queried) - len(ids)  # nothing to search for them
        for batch in batched(ids, self.run.params.batch_size):
            books = self.run.cache.get_many(batch)  # batch by batch: a bounded cache
            found = [i for i in batch if i in books]
            deep = {i: 1 + depth[i] for i in found if i in depth}
            yield QueryBatch(found, [books[i] for i in found], [], deep)

    def _start(self, found: CandidateBatch, counted: bool = True) -> _InFlight:
        """The batch's new pairs planned: those of one language handed to the verifier now,
        translated ones with their window (`TranslatedWindows`). A pair whose screen is
        still to come (an earlier batch's) and that this batch offers outright waits for it:
        if it fails that screen, it is verified in full when its window lands, as it would
        be here."""
        batch, summary = found.batch, self.summary
        if counted:  # a batch's second search (across languages) is not a new query book
            summary.skipped.extend(batch.skipped)
            summary.query_books += len(batch.books)
            self.queried.update(batch.ids)
            self.queried_order.extend(batch.ids)
            self.skipped_ids.update(i for i, _ in batch.skipped)
        offered = list(dict.fromkeys(found.pairs))
        fresh = [p for p in offered if p not in self.seen]
        # a pair screened out before is verified again only when offered outright
        pairs = [p for p in fresh if p not in self.screened_out or p not in found.screened]
        summary.candidate_pairs += sum(1 for p in pairs if p not in self.screened_out)
        waits = (p for p in offered if p in self.screening and p not in found.screened)
        self.awaiting.update((p, None) for p in waits)
        planned = self._plan(pairs, found.screened.intersection(pairs))
        if not self.windows.size:  # no windows: the batch as the searches ranked it
            return self._flight(planned, batch.ids)
        same = [p for p in planned if p[2].dictionary is None]
        windowed = self.windows.add([p for p in planned if p[2].dictionary is not None])
        return self._flight(same + windowed, batch.ids)

    def _flight(self, planned: list[Planned], ids: list[str] | None = None) -> _InFlight:
        """Planned pairs handed to the verifier, timed."""
        started = time.monotonic()
        keys = [pair_key(a.book_id, b.book_id) for a, b, _ in planned]
        pending = submit_planned(planned, self.pool)
        self.summary.add_time("verify_s", time.monotonic() - started)
        return _InFlight(keys, pending.screened, pending, ids or [])

    def _land(self, flying: _InFlight) -> Iterator[Action]:
        yield from self._written(flying)
        self.done += len(flying.ids)
        self.heartbeat()
        failpoint("dedup.batch")
        if self.progress:
            self.progress(self.done, self.total)

    def _verify(self, pairs: list[tuple[str, str]]) -> Iterator[Action]:
        """Verify, classify and write ``pairs`` (none verified before in this run) now."""
        yield from self._written(self._flight(self._plan(pairs)))

    def _plan(
        self, pairs: list[tuple[str, str]], screened: frozenset[tuple[str, str]] = frozenset()
    ) -> list[Planned]:
        """``pairs`` seen from now on, and planned (timed as verification)."""
        started = time.monotonic()
        self.seen.update(pairs)
        self.screening.update(screened)
        planned = plan_candidates(self.run, pairs, screened)
        self.summary.add_time("verify_s", time.monotonic() - started)
        return planned

    def _written(self, flying: _InFlight) -> Iterator[Action]:
        """A batch's verification waited for, classified and written; those of its screened
        pairs that fail the screen stay unseen: a later pass may verify them in full."""
        summary, pairs = self.summary, flying.pairs
        started = time.monotonic()
        verified = flying.pending.result()
        relations = classify_pairs(verified.pairs, self.run.collection)
        summary.add_time("verify_s", time.monotonic() - started)
        summary.verified_pairs += verified.compared
        passed = {pair_key(v.a.book_id, v.b.book_id) for v in verified.pairs}
        out = verified.screened - passed
        self.screening.difference_update(flying.screened)
        self.seen.difference_update(out)
        self.screened_out.difference_update(pairs)
        self.screened_out.update(out)
        summary.screened_pairs += len(verified.screened)
        summary.screened_out += len(out)
        for relation in relations:
            name = relation.result.relation
            summary.relations[name] = summary.relations.get(name, 0) + 1
            self.produced.add(relation.pair_id)
            a, b = relation.a, relation.b
            self.links.append(
                Link(a.book_id, b.book_id, a.language != b.language, (a.language, b.language))
            )
            if name in SAME_TEXT:
                self.same_text.append((a.book_id, b.book_id))
        yield from write_actions(self.run, relations, RunRecorder.now())
        again = [p for p in self.awaiting if p in out]
        for p in flying.screened:
            self.awaiting.pop(p, None)
        if again:
            yield from self._verify(again)

    def _through_translations(self) -> Iterator[Action]:
        """Each side of a found translation against the other side's same-language relatives
        (``bookdup.relate.pairs_through_translations``), until no new pair comes up. An
        incremental run also reads the stored relations of every book it related: a new
        edition's translations, or a new translation's editions, were found by earlier runs."""
        stored: list[Link] = []
        if self.incremental:
            hubs = {i for link in self.links for i in (link.a, link.b)}
            stored = list(stored_links(self.run.client, self.run.names, hubs))
        for _ in range(THROUGH_TRANSLATIONS_ROUNDS):
            suggested = pairs_through_translations(stored + self.links)
            related = {(min(k.a, k.b), max(k.a, k.b)) for k in stored}  # settled by earlier runs
            pairs = sorted(p for p in suggested if p not in self.seen and p not in related)
            if not pairs:
                return
            self.summary.pairs_through_translations += len(pairs)
            step = THROUGH_TRANSLATIONS_CHUNK
            for start in range(0, len(pairs), step):
                yield from self._verify(pairs[start : start + step])
                self.heartbeat()


@dataclass(frozen=True)
class _InFlight:
    """A batch's pairs handed to the verifier, and what to do when it lands."""

    pairs: list[tuple[str, str]]
    screened: frozenset[tuple[str, str]]
    pending: PendingBatch
    ids: list[str] = field(default_factory=list)  # its query books


def _write_relations(run: DedupRun, summary: DedupSummary, stream: _RelationStream) -> None:
    """Stages 1–5 through the bulk writer; refused writes are reported as skipped."""
    for timer in ("search_s", "search_cpu_s", "search_wait_s", "verify_s"):
        summary.timings.setdefault(timer, 0.0)
    started = time.monotonic()
    report = bulk_write(run.client, stream.actions(), chunk_size=RELATIONS_PER_BULK)
    for failure in report.failures:
        summary.skipped.append((failure.id, f"write refused: {failure.reason}"))
    busy = sum(summary.timings.get(k, 0.0) for k in ("verify_s", "search_wait_s"))
    summary.timings["read_write_s"] = time.monotonic() - started - busy
    refresh(run.client, run.names.relations)


def _finish_relations(run: DedupRun, stream: _RelationStream, incremental: bool) -> int:
    """Stage 6: delete the relations this run owns but no longer finds."""
    stale = stale_relation_ids(
        run.client, run.names, stream.produced, stream.queried if incremental else None
    )
    actions = ({"_op_type": "delete", "_index": run.names.relations, "_id": i} for i in stale)
    return bulk_write(run.client, actions).ok


def run_dedup(
    client: Elasticsearch,
    names: IndexNames,
    *,
    since: str | None = None,
    params: DedupParams | None = None,
    progress: Progress | None = None,
    full: bool = True,
) -> DedupSummary:
    """Find, verify, classify and cluster related books; returns (and records) the summary.

    ``progress(done, total)`` is called after each batch of query books. Raises `JobLocked`
    when another dedup (or remove) is writing to the same indices. With ``full=False`` (and no
    ``since``) a collection that nothing changed since the last completed run (`settled_by`) is
    left alone: the summary's ``nothing_new_since`` names that run and no run is recorded.
    """
    params = params or DedupParams()
    ensure_indices(client, names)
    candidates = with_held_pivots(client, names.books, params.candidates)
    params = replace(params, candidates=candidates)
    if not full and since is None:
        settled = settled_by(client, names, params)
        if settled is not None:
            write_display_titles(client, names)  # books indexed before them (store.shown)
            return DedupSummary(run_id="", nothing_new_since=settled)
    run_id = new_run_id("dedup")
    with JobLock(client, names, CLUSTER_LOCK, run_id) as lock:
        refresh(client, [names.books, names.relations])
        since_time = resolve_since(client, names, since) if since else None
        recorder = RunRecorder(
            client,
            names,
            "dedup",
            {
                "since": since,
                "since_time": since_time,
                "translations": params.translations,
                "pivot_pairs": params.candidates.pivot_pairs,
                "translations_by_edition": params.translations_by_edition,
                "verify_workers": params.verify_workers,
                "verify_scheduler": params.verify_scheduler,
            },
            run_id,
        )
        summary = _run_stages(client, names, params, since_time, recorder, lock, progress)
        failpoint("dedup.finish")
        _record(recorder, summary)
    return summary


def _run_stages(
    client: Elasticsearch,
    names: IndexNames,
    params: DedupParams,
    since_time: str | None,
    recorder: RunRecorder,
    lock: JobLock,
    progress: Progress | None,
) -> DedupSummary:
    """Stages 0–7 under the lock, timed."""
    summary = DedupSummary(run_id=recorder.run_id)
    summary.resumed_from = resume_after_interrupted(client, names, "dedup", recorder.run_id)
    started, cpu = time.monotonic(), _CpuLedger.start(client)
    run = prepare(client, names, params, recorder.run_id, since_time)
    failpoint("dedup.prepared")
    summary.timings["prepare_s"] = time.monotonic() - started
    with _frozen_heap():
        _run_prepared(run, since_time, summary, lock, progress)
    summary.timings["total_s"] = time.monotonic() - started
    summary.timings.update(cpu.spent(client))
    return summary


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """What is alive now (the lexicons: lists of millions of words) out of the cyclic garbage
    collector's reach until the block ends (`gc.freeze`).

    Every full collection walked each word of every lexicon: on the 80 real books the
    collector took ~1.9 s of the driver's CPU (a quarter of it), and the forked verification
    workers walked their copies too (touching, so copying, the shared pages); frozen, 0.4 s.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _run_prepared(
    run: DedupRun,
    since_time: str | None,
    summary: DedupSummary,
    lock: JobLock,
    progress: Progress | None,
) -> None:
    """Stages 1–7, once prepared (`_run_stages` times them)."""
    client, names, params = run.client, run.names, run.params
    summary.books, summary.max_df, summary.stop_terms = (
        run.stop.n_books,
        run.stop.max_df,
        run.stop.n_terms,
    )
    summary.missing_lexicons = [
        f"{a}-{b}" for a, b in run.lexicons.unreachable(run.searcher.languages)
    ]
    count = with_retries()(client.count)
    total = count(index=names.books, query=run.selection)["count"] if since_time else None
    stream = _RelationStream(run, summary, summary.books if total is None else total, progress)
    stream.heartbeat = lock.renew
    stream.incremental = since_time is not None
    pool = open_verifier(params.verify_workers, params.verify_scheduler, run.lexicons)
    try:
        stream.pool = pool
        _write_relations(run, summary, stream)
    finally:  # stopped on any error or interrupt
        pool.close()
    summary.verify_fallbacks = pool.fallbacks
    failpoint("dedup.written")
    lock.renew()
    summary.stale_relations_removed = _finish_relations(run, stream, since_time is not None)
    failpoint("dedup.stale")
    cluster_started = time.monotonic()
    refresh(client, [names.books, names.relations])
    summary.clusters_updated, summary.edition_clusters, summary.work_clusters = write_clusters(
        client, names
    )
    summary.timings["cluster_s"] = time.monotonic() - cluster_started


@dataclass(frozen=True)
class _CpuLedger:
    """CPU seconds at a job's start: of this process (every thread), of its finished child
    processes (the verification workers, counted once the pool is closed) and of the
    cluster's nodes (None when they do not say)."""

    driver: float
    children: float
    node: float | None

    @staticmethod
    def start(client: Elasticsearch) -> _CpuLedger:
        return _CpuLedger(time.process_time(), _children_cpu(), cluster_cpu_seconds(client))

    def spent(self, client: Elasticsearch) -> dict[str, float]:
        """``driver_cpu_s``, ``workers_cpu_s`` and ``node_cpu_s`` (the cluster's CPU during
        the run, whatever else it served meanwhile) since the start."""
        out = {
            "driver_cpu_s": time.process_time() - self.driver,
            "workers_cpu_s": _children_cpu() - self.children,
        }
        node = cluster_cpu_seconds(client)
        if node is not None and self.node is not None:
            out["node_cpu_s"] = node - self.node
        return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _record(recorder: RunRecorder, summary: DedupSummary) -> None:
    """Round the timers, add the verification rate, and complete the run record."""
    verify_s = summary.timings.get("verify_s", 0.0)
    if summary.verified_pairs and verify_s:
        summary.timings["pairs_verified_per_s"] = summary.verified_pairs / verify_s
    summary.timings = {k: round(v, 3) for k, v in summary.timings.items()}
    recorder.finish(
        counts=summary.as_counts(),
        timings=summary.timings,
        skipped=[{"book": b, "reason": r} for b, r in summary.skipped[:MAX_RECORDED_SKIPPED]],
    )
