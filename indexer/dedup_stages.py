"""The stages of `bookdup dedup`, each a function with typed inputs and outputs.

    prepare → select books → candidates → verify → classify → write relations
            → remove stale relations → cluster and write back (indexer.clustering)

A stage knows nothing of the others' internals, so it can be timed, tested or replaced alone;
`indexer.dedup_job.run_dedup` strings them together and keeps the counts and timers.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.features import BookFeatures, features_from_doc
from bookdup.pairs import pair_id, pair_key
from bookdup.relate import (
    Planner,
    VerifiedPair,
    classify_verified,
    prepare_lexicons,
)
from bookdup.result import RelationResult
from bookdup.signals import Collection
from bookdup.verify import cache_limits
from indexer.feature_shelf import BookKey
from indexer.pipeline import read_ahead
from indexer.verify_pool import (
    Done,
    Pending,
    Planned,
    Verifier,
    affinity_key,
    default_verify_workers,
    verify_here,
)
from readers.dictionaries import Dictionaries
from store.bulk import Action
from store.candidates import (
    CandidateParams,
    CandidateSearcher,
    QueryKinds,
    StopLists,
    indexed_languages,
    with_held_pivots,
)
from store.features import DEFAULT_CACHE_SIZE, FeatureCache
from store.holders import IndexedBooks
from store.iterate import batched, iter_documents
from store.keys import source_read_keys, stored_keys
from store.links import IDS_PER_QUERY
from store.schema import IndexNames

#: Query books per search page: each hit carries a book's whole stored features, its unique
#: words' strings included, so pages are kept well under iter_documents' default of 1000.
QUERY_BOOKS_PAGE = 200
#: Books that cannot take part: nothing to compare, or a word list rather than prose.
SKIP_FLAGS = frozenset({"empty", "no_unique_words", "alphabetical"})


@dataclass(frozen=True)
class DedupParams:
    """Knobs of a dedup job."""

    candidates: CandidateParams = field(default_factory=CandidateParams)
    batch_size: int = 32  # query books per _msearch round trip
    cache_size: int = DEFAULT_CACHE_SIZE
    translations: bool = True
    # Verification processes (indexer.verify_pool); 1 verifies in the job's own process.
    verify_workers: int = field(default_factory=default_verify_workers)
    # A Dask scheduler to verify on instead (indexer.verify_dask): "local" starts a
    # LocalCluster of verify_workers processes, else the address of a running one.
    verify_scheduler: str | None = None
    # Translated candidates are verified in windows of up to this many pairs, grouped by the
    # book each translates (`TranslatedWindows`); None: `DEFAULT_TRANSLATION_WINDOW`, or none
    # (each batch's own) where a worker's cache holds the whole collection (`translation_window`).
    translation_window: int | None = None
    # Search each book in its own language first, then across languages, where of a group of
    # same-text editions one asks for the translations, as deep as their lists together
    # (``bookdup.relate.translations_by_edition``); the others reach them through
    # ``pairs_through_translations``. The same relations for 0.7x the job (docs/EVALUATION.md).
    translations_by_edition: bool = True


@dataclass(frozen=True)
class DedupRun:
    """What every stage of one run shares, prepared once: where, what and with which lists."""

    client: Elasticsearch
    names: IndexNames
    params: DedupParams
    run_id: str
    selection: dict[str, Any] | None  # the query books (None: every book)
    stop: StopLists
    cache: FeatureCache
    searcher: CandidateSearcher
    lexicons: Dictionaries
    planner: Planner  # the job's plans, one object per language pair (`Planner`)
    #: the books beside each pair: which shared text at both books' edges is boilerplate
    collection: IndexedBooks


def prepare(
    client: Elasticsearch,
    names: IndexNames,
    params: DedupParams,
    run_id: str,
    since_time: str | None,
) -> DedupRun:
    """Stage 0: collection statistics (boilerplate keys), languages, lexicons, the cache.

    The stop lists are read in a thread, mostly waiting on the node (its aggregations, the
    pages of winnowed keys), while this one loads the lexicons on the driver's core, instead of
    one after the other. The pivot pair keys are left out where no book holds them
    (``with_held_pivots``)."""
    params = dataclasses.replace(
        params, candidates=with_held_pivots(client, names.books, params.candidates)
    )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="stop-lists") as pool:
        reading = pool.submit(StopLists.from_index, client, names.books, params.candidates)
        lexicons = Dictionaries(params.translations)
        languages = indexed_languages(client, names.books)
        if params.verify_workers > 1 and params.verify_scheduler is None:
            prepare_lexicons(lexicons, languages)  # forked verification workers share them
        stop = reading.result()
    searcher = CandidateSearcher(client, names.books, params.candidates, stop, lexicons, languages)
    cache = FeatureCache(client, names.books, stop, params.cache_size)
    selection = {"range": {"indexed_at": {"gte": since_time}}} if since_time else None
    return DedupRun(
        client,
        names,
        params,
        run_id,
        selection,
        stop,
        cache,
        searcher,
        lexicons,
        Planner(lexicons),
        IndexedBooks(client, names.books),
    )


@dataclass(frozen=True)
class QueryBatch:
    """Books whose candidates are searched together; flagged books are set aside with why."""

    ids: list[str]
    books: list[BookFeatures]
    skipped: list[tuple[str, str]]
    #: books asking for more than themselves (``DedupParams.translations_by_edition``): how many
    depth: dict[str, int] = field(default_factory=dict)


def select_books(run: DedupRun) -> Iterator[QueryBatch]:
    """Stage 1: the query books (all, or those indexed since), in batches, features cached.

    The next page is read in a thread (`read_ahead`) while this one is decoded and its batches
    searched and verified: the job's thread never waits on the node for it."""
    hits = iter_documents(
        run.client,
        run.names.books,
        query=run.selection,
        source=["features", "flags", *(k.field for k in source_read_keys())],
        page_size=QUERY_BOOKS_PAGE,
    )
    pages = read_ahead(batched(hits, QUERY_BOOKS_PAGE))
    for batch in batched(chain.from_iterable(pages), run.params.batch_size):
        books, skipped = [], []
        for hit in batch:
            flags = set(hit["_source"].get("flags", [])) & SKIP_FLAGS
            if flags:
                skipped.append((hit["_id"], "flagged " + ",".join(sorted(flags))))
                continue
            cached = run.cache.cached(hit["_id"])
            if cached is None:
                cached = run.cache.put(features_from_doc(hit["_source"]["features"], words=False))
            keys = stored_keys(hit["_source"])  # the winnowed keys (store.keys)
            # the cache holds the verification data only; the keys serve this query alone
            books.append(dataclasses.replace(cached, **keys))
        yield QueryBatch([hit["_id"] for hit in batch], books, skipped)


@dataclass(frozen=True)
class CandidateBatch:
    """A batch's candidate pairs (a < b, possibly repeated), the time the searches took and
    the CPU time of this process they took (building the queries, reading the answers)."""

    batch: QueryBatch
    pairs: list[tuple[str, str]]
    seconds: float
    cpu_seconds: float = 0.0
    #: the pairs found only as screened hits (``CandidateSearcher.screened_candidates``)
    screened: frozenset[tuple[str, str]] = frozenset()


def find_candidates(run: DedupRun, batch: QueryBatch, kinds: QueryKinds = "all") -> CandidateBatch:
    """Stage 2: one ``_msearch`` of the term queries of ``kinds`` for the whole batch."""
    started, cpu = time.monotonic(), time.thread_time()
    found = list(run.searcher.screened_candidates(batch.books, kinds, batch.depth))
    outright = {pair for pair, screened in found if not screened}
    screened = frozenset(pair for pair, _ in found) - outright
    return CandidateBatch(
        batch,
        [pair for pair, _ in found],
        time.monotonic() - started,
        time.thread_time() - cpu,
        screened,
    )


@dataclass(frozen=True)
class VerifiedBatch:
    """The pairs that passed verification, and how many pairs were compared at all."""

    pairs: list[VerifiedPair]
    compared: int
    #: the pairs that went through the order screen (``PairPlan.screened``)
    screened: frozenset[tuple[str, str]] = frozenset()


def plan_candidates(
    run: DedupRun,
    pairs: Sequence[tuple[str, str]],
    screened: AbstractSet[tuple[str, str]] = frozenset(),
) -> list[Planned]:
    """The pairs that a lexicon makes comparable, with their plans (in the parent: the
    lexicons and the feature cache live here); those of ``screened`` are screened first."""
    features = run.cache.get_many(i for p in pairs for i in p)
    usable = {i: f for i, f in features.items() if SKIP_FLAGS.isdisjoint(f.flags)}
    plan_of = run.planner.plan
    planned: list[Planned] = []
    for pair in pairs:
        a, b = usable.get(pair[0]), usable.get(pair[1])
        if a is None or b is None:
            continue
        plan = plan_of(a, b, pair in screened)
        if plan is not None:
            planned.append((a, b, plan))
    return planned


def _group_key(planned: Planned) -> tuple[BookKey, tuple[str, str]]:
    """A pair's `affinity_key` made orderable (a same-language pair's lexicon is None)."""
    book, lexicon = affinity_key(*planned)
    return book, lexicon or ("", "")


@dataclass(frozen=True)
class PendingBatch:
    """A batch's planned pairs handed to the verifier; `result` waits for their verification."""

    planned: list[Planned]
    pending: Pending

    @cached_property
    def screened(self) -> frozenset[tuple[str, str]]:
        """The planned pairs that go through the order screen (read by the job, then by
        `result`: computed once)."""
        return frozenset(
            pair_key(a.book_id, b.book_id) for a, b, p in self.planned if p.screen_z is not None
        )

    def result(self) -> VerifiedBatch:
        results = self.pending.result()
        return VerifiedBatch(
            [v for v in results if v is not None], len(self.planned), self.screened
        )


def submit_candidates(
    run: DedupRun,
    pairs: Sequence[tuple[str, str]],
    pool: Verifier | None = None,
    screened: AbstractSet[tuple[str, str]] = frozenset(),
) -> PendingBatch:
    """Stage 3, started: the pairs that a lexicon makes comparable, planned and handed to
    ``pool``'s workers (same results, same order), else verified now in this process.

    Pairs below the classifier's floors are dropped in verification, before any page
    signal, and the pairs of ``screened`` that fail their order screen before that.
    """
    return submit_planned(plan_candidates(run, pairs, screened), pool)


def submit_planned(planned: list[Planned], pool: Verifier | None = None) -> PendingBatch:
    """Planned pairs handed to ``pool``'s workers, else verified now in this process."""
    pending = pool.submit(planned) if pool is not None else Done(verify_here(planned))
    return PendingBatch(planned, pending)


#: Translated pairs a window holds at most (`TranslatedWindows`).
DEFAULT_TRANSLATION_WINDOW = 200_000
#: Prepared sequences a book may take in a worker's cache (`translation_window`).
PREPARED_PER_BOOK = 4


def translation_window(params: DedupParams, books: int) -> int:
    """The job's window size: windows pay only when a worker cannot keep every book's prepared
    sequences (`bookdup.verify.cache_limits`; its words, its stems, a translation through each
    lexicon: up to ~4 a book); the 80 real books verified ~0.5 s slower in windows (their
    translated pairs then waited for the last search)."""
    if params.translation_window is not None:
        return params.translation_window
    return DEFAULT_TRANSLATION_WINDOW if books * PREPARED_PER_BOOK > cache_limits()[1] else 0


def group_by_affinity(planned: list[Planned]) -> list[Planned]:
    """``planned`` in the order of the book each pair prepares at most cost (`affinity_key`),
    so that its preparation is met again while still cached."""
    return sorted(planned, key=_group_key)


class TranslatedWindows:
    """Translated pairs held back and verified in windows grouped by the book each translates.

    Batch by batch, a worker translated a book again for each query book that met it: its
    prepared copy was evicted meanwhile from 3K books on. Here the batches' translated pairs
    queue until a window's worth is held; they are then sorted (`group_by_affinity`) and go
    out in slices with the next batches, ``pace`` times as many pairs as each queues, so the
    workers keep verifying between searches, each book's pairs together. Windows start at
    ``first`` pairs and double up to ``size``: the workers need not wait long for the first.
    """

    def __init__(self, size: int, pace: float = 1.25, first: int | None = None) -> None:
        self.size = size
        self.pace = pace
        self.next_size = max(1, size // 8) if first is None else first
        self.queued: list[Planned] = []
        self.window: list[Planned] = []
        self.at = 0  # how far the window has gone out

    def add(self, planned: Sequence[Planned]) -> list[Planned]:
        """Queue a batch's translated pairs; the pairs to verify with that batch."""
        self.queued.extend(planned)
        out: list[Planned] = []
        if len(self.queued) >= self.next_size:
            out = self._rest()  # a window not yet out goes whole before the next
            self.window, self.queued = group_by_affinity(self.queued), []
            self.next_size = min(self.size, 2 * self.next_size)
        end = min(len(self.window), self.at + math.ceil(len(planned) * self.pace))
        out.extend(self.window[self.at : end])
        self.at = end
        return out

    def drain(self) -> list[Planned]:
        """Every pair still held (the last batch was added), grouped."""
        out = self._rest() + group_by_affinity(self.queued)
        self.queued = []
        return out

    def _rest(self) -> list[Planned]:
        out = self.window[self.at :]
        self.window, self.at = [], 0
        return out


@dataclass(frozen=True)
class FoundRelation:
    """A classified related pair, ready to be written."""

    a: BookFeatures
    b: BookFeatures
    result: RelationResult

    @property
    def pair_id(self) -> str:
        return pair_id(self.a.book_id, self.b.book_id)


def classify_pairs(
    verified: Sequence[VerifiedPair], collection: Collection | None = None
) -> list[FoundRelation]:
    """Stage 4: page signals and the relation class, the ``collection`` beside the pairs
    asked about their frames (``bookdup.signals.Collection``); UNRELATED pairs are dropped."""
    found = []
    for pair in verified:
        result = classify_verified(pair, collection)
        if result.relation != "UNRELATED":
            found.append(FoundRelation(pair.a, pair.b, result))
    return found


def relation_document(found: FoundRelation, run_id: str, now: str) -> dict[str, Any]:
    """The relations-index document of a found pair (``a`` < ``b``), stamped with its run."""
    doc = found.result.to_doc(found.a.book_id, found.b.book_id)
    return {**doc, "run_id": run_id, "created_at": now}


def write_actions(run: DedupRun, found: Sequence[FoundRelation], now: str) -> Iterator[Action]:
    """Stage 5: bulk actions for the found relations.

    Relation ids are ``a|b``, so a rerun overwrites instead of duplicating. Book documents are
    not touched here: what a run queried is in its run record, and rewriting every book on
    every run grew the index and reordered its documents for nothing.
    """
    for relation in found:
        yield {
            "_index": run.names.relations,
            "_id": relation.pair_id,
            "_source": relation_document(relation, run.run_id, now),
        }


def stale_relation_ids(
    client: Elasticsearch, names: IndexNames, keep: set[str], touching: set[str] | None
) -> Iterator[str]:
    """Stage 6: relations this run no longer finds (books changed, thresholds moved).

    A full run owns every relation (``touching`` None); an incremental run only those that
    involve the books it queried, so pairs of untouched books stay as earlier runs left them.
    """
    if touching is None:
        hits = iter_documents(client, names.relations, source=False)
        yield from (hit["_id"] for hit in hits if hit["_id"] not in keep)
        return
    ids = sorted(touching)
    for start in range(0, len(ids), IDS_PER_QUERY):
        chunk = ids[start : start + IDS_PER_QUERY]
        query = {"bool": {"should": [{"terms": {"a": chunk}}, {"terms": {"b": chunk}}]}}
        for hit in iter_documents(client, names.relations, query=query, source=False):
            if hit["_id"] not in keep:
                yield hit["_id"]
