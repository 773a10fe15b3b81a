"""What every read-side call needs, kept between calls: the client, the index names, and the
collection-wide state the verification policy reads (boilerplate stop lists, indexed languages,
bilingual lexicons, a feature cache).

The CLI makes one ``ReadSide`` per command; the HTTP server keeps one for its lifetime, so the
stop lists (a terms aggregation over the whole books index) and the lexicons (parsed FreeDict
files) are computed once and checked after ``ttl`` seconds rather than on every request: when
no book was indexed or removed meanwhile, the state (and its warm feature cache) is kept;
otherwise it is read again. Rebuilding it every ``ttl`` regardless had the old and the new
cache alive together while requests still used the old one, and the server's memory stepped up
by ~200 MB (freed memory is not returned to the system) at the refresh in a 10-minute soak.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from elasticsearch import Elasticsearch

from readers.dictionaries import Dictionaries
from store.candidates import (
    CandidateParams,
    CandidateSearcher,
    StopLists,
    indexed_languages,
    with_held_pivots,
)
from store.features import FeatureCache
from store.retry import with_retries
from store.schema import IndexNames

#: Collection state older than this is read again (books indexed meanwhile change it).
DEFAULT_TTL_S = 300.0
#: Seconds a read (search, related, explain) retries a failing node before answering: a person
#: or a program is waiting, so far less than a job's budget (jobs retry for minutes).
READ_RETRY_S = 10.0
#: Candidate searches of one match the node runs at once: one, so that a match leaves the
#: node's other search threads (~1.5 x cores + 1) to the searches and related lookups beside it
#: (issue 30); the job's batches keep the node's default.
READ_MSEARCH_CONCURRENCY = 1
#: Books whose features the read side keeps in memory (~100 KB each, words-free).
READ_CACHE_SIZE = 2_000


class NotFound(KeyError):
    """A book id that is not in the index (the server answers 404, the CLI one line)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "not found"


class BadRequest(ValueError):
    """Input the read side refuses: empty query, page out of range, unknown option."""


@dataclass
class _State:
    stop: StopLists
    languages: set[str]
    cache: FeatureCache
    searcher: CandidateSearcher
    read_at: float
    version: tuple[int, object]  # (books, newest indexed_at) when read


def collection_version(client: Elasticsearch, books_index: str) -> tuple[int, object]:
    """What changes when a book is indexed, re-indexed or removed: the number of books and the
    newest ``indexed_at`` (dedup's cluster-id updates change neither, nor the stop lists)."""
    response = with_retries(READ_RETRY_S)(client.search)(
        index=books_index,
        size=0,
        track_total_hits=True,
        aggs={"newest": {"max": {"field": "indexed_at"}}},
    ).body
    return response["hits"]["total"]["value"], response["aggregations"]["newest"]["value"]


class ReadSide:
    """One deployment's read side: ``client`` and the indices of ``names``, nothing else."""

    def __init__(
        self,
        client: Elasticsearch,
        names: IndexNames,
        *,
        translations: bool = True,
        ttl: float = DEFAULT_TTL_S,
        params: CandidateParams | None = None,
    ) -> None:
        self.client = client
        self.names = names
        self.params = params or CandidateParams()
        self.lexicons = Dictionaries(enabled=translations)
        self._ttl = ttl
        self._lock = threading.Lock()
        self._state: _State | None = None
        #: Verification is CPU-bound and its caches (the feature LRU, the core's prepared
        #: sequences) are not thread-safe: one match or explain computes at a time.
        self.compute_lock = threading.Lock()

    def _read_state(self, version: tuple[int, object]) -> _State:
        params = with_held_pivots(self.client, self.names.books, self.params)
        stop = StopLists.from_index(self.client, self.names.books, params, winnows=False)
        languages = indexed_languages(self.client, self.names.books)
        cache = FeatureCache(self.client, self.names.books, stop, size=READ_CACHE_SIZE)
        searcher = CandidateSearcher(
            self.client, self.names.books, params, stop, self.lexicons, languages
        )
        searcher.max_concurrent = READ_MSEARCH_CONCURRENCY
        return _State(stop, languages, cache, searcher, time.monotonic(), version)

    def state(self) -> _State:
        """Stop lists, languages, feature cache and candidate searcher, checked against the
        collection at most ``ttl`` ago."""
        with self._lock:
            old = self._state
            if old is not None and time.monotonic() - old.read_at <= self._ttl:
                return old
            version = collection_version(self.client, self.names.books)
            if old is not None and version == old.version:
                old.read_at = time.monotonic()
                return old
            self._state = self._read_state(version)
            return self._state
