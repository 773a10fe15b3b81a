"""Candidate pairs from term queries: band collisions, shared text keys, translated stems.

Same-language candidates come from winnowed word-prefix 5-gram keys (``bookdup.winnow``): each
query samples ~300 of the book's keys among those held by 2 … 20 books and ranks the books sharing
them by how many they share. Books indexed before those keys existed fall back to a query on
their unique words.

No pair of books is ever compared unless the inverted index says they share keys. Keys held by
too many books (licence boilerplate, very common band values) carry no evidence and would make
every book a candidate of every other, so they are found from their document frequency and left
out of the queries, as passim does with its max-df cut.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Literal

import numpy as np
from elasticsearch import Elasticsearch

from bookdup.arrays import distinct, isin_sorted
from bookdup.boilerplate import common_df, frequent_df
from bookdup.dictionary import Dictionary
from bookdup.features import (
    STEM_MODULUS,
    BookFeatures,
    hex_terms,
    looks_noisy,
    terms_to_hashes,
)
from bookdup.pairs import pair_key
from bookdup.pivot import (
    QUERY_GAP,
    QUERY_SENSES,
    PivotLexicons,
    held_elsewhere,
    key_terms,
    pivot_keys,
    terms_table_keys,
)
from bookdup.query_terms import WeightedLexicon, heaviest_translations, weighted_lexicon
from bookdup.relate import Lexicons
from bookdup.searchedstems import searched_stems
from bookdup.stemming import stem_lexicon
from bookdup.translate import hashed_lexicon, in_lexicon, translate_with_source
from bookdup.winnow import KeyFrequencies, consistent_sample
from store.iterate import iter_documents
from store.keys import BANDS, PIVOTS, STEMS, UNIQ, WINNOWS, aggregated_keys
from store.msearch import DFS, msearch
from store.retry import with_retries

# The candidate-key fields, named once in the registry (``store.keys``).
BANDS_FIELD = BANDS.field
UNIQ_FIELD = UNIQ.field
STEMS_FIELD = STEMS.field
WINNOWS_FIELD = WINNOWS.field
#: The kind of the same-language unique-word query of a book with winnowed keys.
SAME_UNIQ = "uniq-same"
#: ``labelled_queries`` kinds of the queries that are not translated (those are named by their
#: target language).
SAME_LANGUAGE_KINDS = frozenset({"bands", "winnows", "uniq", SAME_UNIQ})
#: Which of a book's queries to run: all; those of its own language's books ("same": bands,
#: winnowed keys, its unique words); or those of the other languages' ("across": translated,
#: pivot, and the unique words asked of other languages).
QueryKinds = Literal["all", "same", "across"]


@dataclass(frozen=True)
class CandidateParams:
    """How candidates are drawn; defaults chosen on generated corpora (see README, Evaluation)."""

    # Per book and query kind, the best-scoring candidates are kept: a work rarely has more
    # than a dozen editions in one language, and fewer translations into each other language.
    # These caps bound verification to about 0.5% of all pairs at 10K books.
    max_candidates: int = 30
    # ... but the unique-word query across languages (names, numerals, cognates), whose first
    # ``max_translation_candidates`` are verified outright and the rest screened, keeps this
    # many: at 10K no translation was reached by its ranks 21-30 alone, 12,456 pairs (stop 60).
    across_uniq_hits: int = 20
    # Translated hits verified outright: translated queries match many terms by chance, so
    # long books of the target language crowd the true translation down the list; the rest
    # are screened by their order (the measurements: docs/EVALUATION.md, "Candidate
    # parameters").
    max_translation_candidates: int = 5
    # Hits past ``max_translation_candidates``, up to this many more, verified only if their
    # order passes the screen (``bookdup.relate.SCREEN_Z``): order tells a translation apart
    # where shared stems do not, for a third of a verification's cost.
    screened_translation_candidates: int = 40
    # Each translation weighs 1/(translations of its source word): a common word with many
    # translations matches long books of the target language by chance. The count floor
    # (min_shared) still applies to the number of shared keys.
    weigh_translations: bool = True
    # A word the lexicon does not translate (a name, or an OCR-garbled word no other book
    # holds) only fills a query that runs short.
    untranslated_weight: float = 0.05
    # ... and each translated term's weight is multiplied by its idf: a stem most books of
    # the language hold is weak evidence.
    idf_translations: bool = True
    min_shared_bands: int = 1  # one LSH band collision is a candidate (that is what bands are for)
    # Unique-word queries use a consistent sample (hash % 2^j == 0) sized to about this many
    # terms: a bool query's cost grows with its clauses, and 400 words still catch a pair
    # sharing 5% of its text.
    target_query_terms: int = 400
    # A translated query asks this many of the book's heaviest translations (the fewest
    # senses, then idf): past them the terms are common enough to rank long books of the
    # target language over the partner (docs/EVALUATION.md, issue 27).
    translated_query_terms: int = 250
    # ... split over this many windows of the book (its unique words in reading order, each
    # window a search of its share of the terms): a partial translation holds one window's
    # words, not the whole book's, and tops that window's list (docs/EVALUATION.md,
    # "Translated queries by halves"). 1: the whole book in one search.
    translated_windows: int = 2
    # Hits of a window's list at depth 1 (its first ``max_translation_candidates`` /
    # ``translated_windows``, rounded up, verified outright): two lists of 25 hold ~39 books.
    translation_window_hits: int = 25
    # A candidate must hold this share of the sampled terms, and never fewer than the floor:
    # with a 400-term sample that is 8 words, i.e. about 2% of the book's unique words.
    min_shared_fraction: float = 0.02
    min_shared_floor: int = 4
    # A key in more than this share of books is boilerplate (a licence page is in nearly every
    # book of its digitiser); a rare word of a 20K-word vocabulary is in ~1% of the books.
    max_df_fraction: float = 0.05
    min_max_df: int = 50  # ... but never cut keys held by fewer books than this
    # Winnowed keys (same-language queries). A key held by one book points at no other; one
    # held by more than ``winnow_max_df`` is a common phrase ("at the same time") or
    # boilerplate; ~300 keys sampled from that band (docs/EVALUATION.md).
    winnow_min_df: int = 2
    winnow_max_df: int = 20
    winnow_query_terms: int = 300
    # A candidate shares this many sampled keys and this share of them: a noisy overlap of two
    # long books keeps 2-4 % (docs/EVALUATION.md, "Keys from word prefixes").
    winnow_min_shared: int = 2
    winnow_min_shared_fraction: float = 0.025
    # Also query the pivot pair keys (``bookdup.pivot``, indexed by an index job with
    # ``IndexOptions.pivot_pairs``); their hits join the translated ones (docs/EVALUATION.md,
    # "The pivot pair keys on by default"). Off where no book holds keys (``with_held_pivots``).
    pivot_pairs: bool = True
    # A book with winnowed keys also asks its bands: on generated books they found no true
    # pair the winnowed keys missed and cost ~1-2 % of the searches' time (docs/EVALUATION.md,
    # issue 27), but they are the only same-language query that reaches a work with more than
    # ``winnow_max_df`` copies, whose shared keys the winnowed query leaves out.
    bands_with_winnows: bool = True
    # A pivot query's keys (thousands) go in searches of at most this many clauses (under the
    # node's indices.query.bool.max_clause_count, 4,096); each asks for this many hits, and
    # the client sums each book's scores over the searches.
    pivot_query_chunk: int = 4000
    pivot_chunk_hits: int = 300
    # Summed hits kept per target language (the first ``max_translation_candidates``
    # verified, the rest screened, as a translated query's): the partner mostly ranks first.
    pivot_hits: int = 10
    # Senses a query word expands to (``bookdup.pivot.QUERY_SENSES``: the offline study's);
    # a search's cost grows with its keys, about senses² a pair.
    pivot_query_senses: int = QUERY_SENSES
    # Words a query pairs up to this many apart (``bookdup.pivot.QUERY_GAP``; the documents'
    # pairs are shorter, ``INDEX_GAP``).
    pivot_query_gap: int = QUERY_GAP
    # A query keeps one key in this many (key % n == 0; the keys are hashes, so a uniform
    # sample): a pivot search's node time grows with its keys (issue 27, stop 43).
    pivot_query_sample: int = 1
    # A pivot query asks only keys that 1 … ``pivot_max_df`` books of other languages hold
    # (the job's tables of the stored keys: a key none of them holds scores no hit; one many
    # hold is a common pair): fewer search seconds and the partner first in more lists.
    pivot_max_df: int = 5
    # A book with winnowed keys also asks its language for its sampled unique words, this many
    # hits (0: not asked): they survive noise that breaks the text keys (docs/EVALUATION.md,
    # "Noisy overlaps: a book asks its own language for its unique words"). 10 until stop 60:
    # on 50 generated sets of 300 books and at 10K, no true pair was reached by a clean book's
    # ranks 6-10 alone, and at 10K they were 20,196 pairs (docs/EVALUATION.md, stop 60).
    same_language_uniq_hits: int = 5
    # ... the best by their score per square root of their unique words among this many read
    # (0: by score alone): a long book shares many of any book's words by chance and outranked
    # a noisy excerpt's partner (ranks 10-49 of ~70); so ranked, ~10 % fewer pairs and the
    # partner kept on 4 of 6 generated sets at 10 %, lost on none (docs/EVALUATION.md).
    same_language_uniq_depth: int = 50
    # ... and a noisy book (``bookdup.features.looks_noisy``) keeps this many of this many read:
    # its text keys rarely survive noise in both books, and its excerpts' partners rank 11th-23rd
    # (held-out seeds 72-73 at 10 %, 67 at 5 %: 4 overlaps found; candidate pairs +23 % at 10 %
    # noise, 1.085 % of all pairs at 10K; docs/EVALUATION.md, stop 59). 0: as any book.
    noisy_uniq_hits: int = 25
    noisy_uniq_depth: int = 100

    def winnow_minimum(self, n_terms: int) -> int:
        """Sampled winnowed keys a candidate must share with a query of ``n_terms`` keys."""
        return max(self.winnow_min_shared, math.ceil(self.winnow_min_shared_fraction * n_terms))

    def min_shared(self, n_terms: int) -> int:
        """Sampled terms a candidate must share with a query of ``n_terms`` terms."""
        return max(self.min_shared_floor, math.ceil(self.min_shared_fraction * n_terms))

    @property
    def translation_hits(self) -> int:
        """Hits a translated query asks for: the verified ones, then the screened ones."""
        return self.translation_hits_for(1)

    def translation_hits_for(self, depth: int) -> int:
        """... of a book asking for ``depth`` books (itself and the editions it stands for:
        their lists were as deep together)."""
        return self.max_translation_candidates + depth * self.screened_translation_candidates

    @property
    def window_outright(self) -> int:
        """Hits of a window's translated list verified outright, not screened."""
        return math.ceil(self.max_translation_candidates / max(1, self.translated_windows))

    def window_hits_for(self, depth: int) -> int:
        """``translation_hits_for`` of one window's list: its outright hits alone with
        ``pivot_pairs``, whose lists hold the partners its screened tail held (at 10K, 0.998 of
        the translations among the candidates with 30 % of the candidate pairs)."""
        outright = self.window_outright
        if self.pivot_pairs:
            return outright
        return outright + depth * (self.translation_window_hits - outright)

    def max_df(self, n_books: int) -> int:
        """Document frequency above which a key is left out of candidate queries."""
        return max(self.min_max_df, math.ceil(self.max_df_fraction * n_books))


# Buckets per terms-aggregation response: under the cluster's search.max_buckets (65,536).
_AGG_BUCKETS = 50_000
#: Stop-list aggregations sent at once (`StopLists.from_index`): one per core of a 2-core node.
STOP_LIST_SEARCHES = 2


def high_df_terms(client: Elasticsearch, index: str, field: str, max_df: int) -> set[str]:
    """Every value of ``field`` held by more than ``max_df`` books (terms aggregation).

    One aggregation pass usually returns them all; when a page comes back full, the terms are
    split into 8x as many hash partitions and fetched again (each partition is a full pass over
    the field, so passes are kept few: at 1K books, 64 passes took 22 s against 0.4 s for one).
    """
    search = with_retries()(client.search)
    partitions = 1
    while True:
        stop: set[str] = set()
        for partition in range(partitions):
            response = search(
                index=index,
                size=0,
                aggs={
                    "df": {
                        "terms": {
                            "field": field,
                            "min_doc_count": max_df + 1,
                            "size": _AGG_BUCKETS,
                            "include": {"partition": partition, "num_partitions": partitions},
                        }
                    }
                },
            ).body
            buckets = response["aggregations"]["df"]["buckets"]
            if len(buckets) >= _AGG_BUCKETS:
                break
            stop.update(b["key"] for b in buckets)
        else:
            return stop
        partitions *= 8


def sample_terms(
    hashes: np.ndarray, stop: np.ndarray, target: int, min_modulus: int = 1
) -> list[str]:
    """A consistent sample of distinct word hashes (not in sorted ``stop``) as hex terms.

    Hashes are kept when divisible by the smallest power of two, at least ``min_modulus``,
    that brings their count to about ``target``; the rule depends only on the word, so the
    sampled words of a query are found in every other book that holds them. ``min_modulus``
    is the power of two the queried field was indexed with (1: all hashes indexed; stems:
    ``STEM_MODULUS``): every hash the query keeps is then one the field holds.
    """
    pool = distinct(np.asarray(hashes, dtype=np.uint32))
    pool = pool[~isin_sorted(pool, stop)]
    if min_modulus < 1 or min_modulus & (min_modulus - 1):
        raise ValueError(f"min_modulus must be a power of two, not {min_modulus}")
    modulus = min_modulus
    while pool.size > target * modulus:
        modulus *= 2
    return [f"{h:08x}" for h in pool[pool % np.uint32(modulus) == 0].tolist()]


@dataclass(frozen=True)
class TermWeights:
    """Translated hashes (distinct, ascending) and the weight of each (``translation_weights``):
    arrays, not a dict, because a translated book holds tens of thousands of them."""

    hashes: np.ndarray
    weights: np.ndarray


def _counting_query(
    field: str,
    terms: Sequence[str],
    minimum: int,
    weights: Sequence[float] | None = None,
    *,
    idf: bool = False,
) -> dict[str, Any]:
    """A bool query whose score is exactly the number of ``terms`` a book holds (or the sum of
    their ``weights``), or with ``idf`` each weight times the term's inverse document frequency
    in the index (a keyword field has no norms: Elasticsearch's BM25 then scores a term by its
    idf alone); ``minimum`` always counts terms."""

    boosts = [1.0] * len(terms) if weights is None else weights
    should: list[dict[str, Any]]
    if idf:
        should = [
            {"term": {field: {"value": t, "boost": b}}} for t, b in zip(terms, boosts, strict=True)
        ]
    else:  # comprehensions, not a function per clause: ~400 clauses a query, ~600 queries a run
        should = [
            {"constant_score": {"filter": {"term": {field: t}}, "boost": b}}
            if b != 1.0
            else {"constant_score": {"filter": {"term": {field: t}}}}
            for t, b in zip(terms, boosts, strict=True)
        ]
    return {"bool": {"should": should, "minimum_should_match": minimum}}


def translation_weights(
    hashes: np.ndarray,
    source: np.ndarray,
    kept: np.ndarray | None = None,
    kept_weight: float = 1.0,
) -> TermWeights:
    """Weight of each translated hash: 1 / (translations of its source word), the largest
    when two source words give the same hash. ``source[i]`` is the source word of ``hashes[i]``
    (``bookdup.translate.translate_with_source``); ``kept[j]`` says source word ``j`` had no
    translation and stands as it is: it weighs ``kept_weight``."""
    if hashes.size == 0:
        return TermWeights(np.zeros(0, dtype=np.uint32), np.zeros(0))
    per_word = np.bincount(source)
    weight = 1.0 / per_word[source]
    if kept is not None:
        weight = np.where(kept[source], kept_weight, weight)
    # not a stable sort: the largest weight of equal hashes is the same in any order, and the
    # default sort of uint32 takes half the time (~0.2 s of a dedup of the 80 real books)
    order = np.argsort(hashes)
    ordered = hashes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else order
    if not starts.size:
        return TermWeights(ordered, weight[order])
    return TermWeights(ordered[starts], np.maximum.reduceat(weight[order], starts))


@dataclass(frozen=True)
class CandidateQuery:
    """One candidate search: books sharing ≥ ``minimum`` of ``terms``, best first (by how
    many, or by the sum of the shared terms' ``weights``, times their idf with ``idf``)."""

    book_id: str
    field: str
    terms: Sequence[str]
    minimum: int
    size: int
    language: str | None = None
    exclude_language: str | None = None
    weights: Sequence[float] | None = None  # floats (``json``'s clauses write them as such)
    idf: bool = False
    #: each hit's language as a third sort value (after the unique book id: the order is the
    #: same): a query across languages splits its hits by language (``pivot_queries``)
    hit_language: bool = False
    #: a query across languages: its first hits verified outright, the rest screened (None:
    #: ``CandidateParams.max_translation_candidates``)
    outright: int | None = None
    #: > 0: each hit's unique words (``n_unique``) as a third sort value, and this many of the
    #: ``size`` hits kept, the best by score per square root of them (`per_size_best`)
    per_size: int = 0

    @property
    def hopeless(self) -> bool:
        """No book can match: fewer terms than ``minimum``, or none (the query is not sent)."""
        return len(self.terms) < self.minimum or not self.terms

    def hits(self, response: dict[str, Any]) -> list[tuple[str, float]]:
        """This search's (book id, score) hits, best first (`per_size_best` for a per-size
        one)."""
        return (
            per_size_best(response, self.per_size) if self.per_size else hits_with_scores(response)
        )

    def body(self) -> dict[str, Any]:
        """The search body."""
        return self._around(
            _counting_query(self.field, self.terms, self.minimum, self.weights, idf=self.idf)
        )

    def json(self) -> str:
        """``body`` as the JSON text the client would send for it (the same bytes), written
        without building the ~400 clause dicts, the driver's main cost a query book
        (docs/EVALUATION.md, issue 28)."""
        empty = self._around({"bool": {"should": [], "minimum_should_match": self.minimum}})
        # the first '"should":[]' is the query's: one inside a string would be escaped
        return _dumps(empty).replace('"should":[]', f'"should":[{self._clauses_json()}]', 1)

    def _clauses_json(self) -> str:
        field = encode_basestring(self.field)
        terms = [encode_basestring(t) for t in self.terms]
        boosts = [1.0] * len(terms) if self.weights is None else self.weights
        pairs = zip(terms, map(float.__repr__, boosts), strict=True)
        if self.idf:
            return ",".join(f'{{"term":{{{field}:{{"value":{t},"boost":{b}}}}}}}' for t, b in pairs)
        plain = float.__repr__(1.0)
        return ",".join(
            f'{{"constant_score":{{"filter":{{"term":{{{field}:{t}}}}},"boost":{b}}}}}'
            if b != plain
            else f'{{"constant_score":{{"filter":{{"term":{{{field}:{t}}}}}}}}}'
            for t, b in pairs
        )

    def _around(self, query: dict[str, Any]) -> dict[str, Any]:
        """The body holding ``query``: its filters, size, order and returned fields."""
        filters: list[dict[str, Any]] = []
        if self.language:
            filters.append({"term": {"language": self.language}})
        must_not: list[dict[str, Any]] = [{"ids": {"values": [self.book_id]}}]
        if self.exclude_language:
            must_not.append({"term": {"language": self.exclude_language}})
        return {
            "query": {"bool": {"must": [query], "filter": filters, "must_not": must_not}},
            "size": self.size,
            # Ties in the number of shared keys are common, and the cap cuts through them:
            # break them by book id, not by document order (which every write to a book
            # changes), so the same index gives the same candidates on every run.
            "sort": [{"_score": "desc"}, {"book_id": "asc"}]
            + ([{"language": "asc"}] if self.hit_language else [])
            + ([{"n_unique": {"order": "asc", "missing": "_last"}}] if self.per_size else []),
            # The hit's score and id come back as its sort values (doc values): no stored
            # field is read, so the node does not decompress each hit's whole source (a
            # book's features, ~100 KB) to return its id — 2-6x less node time a query
            # (docs/EVALUATION.md).
            "stored_fields": "_none_",
            "track_total_hits": False,
        }


def _dumps(body: dict[str, Any]) -> str:
    """JSON as the Elasticsearch client writes a body (``elastic_transport.JsonSerializer``)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def hits_with_scores(response: dict[str, Any]) -> list[tuple[str, float]]:
    """(book id, score) for each hit of a candidate search (``CandidateQuery``: its sort
    values; the score is the number of shared keys, or the sum of their weights)."""
    return [(hit["sort"][1], float(hit["sort"][0])) for hit in response["hits"]["hits"]]


def per_size_best(response: dict[str, Any], keep: int) -> list[tuple[str, float]]:
    """The ``keep`` hits of a ``CandidateQuery.per_size`` search with the best score per square
    root of their unique words (its third sort value; a book without one keeps its score), as
    (book id, that score), best first."""
    hits = []
    for hit in response["hits"]["hits"]:
        score, book, n_unique = hit["sort"][0], hit["sort"][1], hit["sort"][-1]
        known = isinstance(n_unique, int | float) and 0 < n_unique < 2**31  # else "_last"
        size = float(n_unique) if known else 1.0
        hits.append((book, float(score) / math.sqrt(size)))
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:keep]


#: Language buckets asked for: more than a collection can hold (langid answers ISO 639-1
#: codes, fewer than 190, or "und").
MAX_LANGUAGES = 200


def indexed_languages(client: Elasticsearch, index: str) -> set[str]:
    """Languages of the indexed books: translated queries go only where there are books."""
    response = with_retries()(client.search)(
        index=index, size=0, aggs={"langs": {"terms": {"field": "language", "size": MAX_LANGUAGES}}}
    ).body
    return {b["key"] for b in response["aggregations"]["langs"]["buckets"]}


@dataclass(frozen=True)
class StopLists:
    """What the collection says is boilerplate: keys held by more than ``max_df`` books."""

    n_books: int
    max_df: int
    bands: frozenset[str]
    uniq: np.ndarray  # sorted uint32 word hashes, dropped from unique-word queries
    #: sorted uint32 hashes held as unique words by many books (``bookdup.boilerplate``):
    #: their dense stretches (licences, notices) are dropped from verification
    frequent: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.uint32))
    #: sorted uint32 stem hashes held by more than ``max_df`` books: dropped from translated
    #: queries
    stems: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.uint32))
    #: document frequency of every winnowed key held by two books or more (None: not read,
    #: e.g. an index without winnowed keys: queries fall back to unique words)
    winnows: KeyFrequencies | None = None
    #: sorted uint32 hashes of the unique words held by more than ``common_df`` books (boilerplate
    #: everywhere): dropped from verification
    common: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.uint32))
    #: document frequency of every stored pivot key by the books' language
    #: (``bookdup.pivot.table_keys``; None: not read, as without ``pivot_pairs``: pivot
    #: queries ask all their keys)
    pivots: dict[str, KeyFrequencies] | None = None

    @property
    def n_terms(self) -> int:
        return len(self.bands) + int(self.uniq.size) + int(self.stems.size)

    @classmethod
    def from_index(
        cls, client: Elasticsearch, index: str, params: CandidateParams, *, winnows: bool = True
    ) -> StopLists:
        """Document frequencies of the whole books index, read once per job.

        ``winnows=False`` leaves out the winnowed keys' table (every book's keys read from
        _source): a lookup of a text that is not indexed (``bookdup match``) cannot use it,
        since a key the text shares with its only indexed edition has a document frequency of
        one, which the table does not keep; such a lookup queries unique words instead."""
        n_books = with_retries()(client.count)(index=index)["count"]
        max_df = params.max_df(n_books)
        # every key with doc values has its stop list; the winnowed keys' df table is counted
        # from _source (``winnow_frequencies``). Each aggregation is one pass on one of the
        # node's cores: they run STOP_LIST_SEARCHES at a time, while this thread counts the
        # winnowed keys
        with ThreadPoolExecutor(STOP_LIST_SEARCHES, thread_name_prefix="aggregations") as pool:

            def above(field: str, df: int) -> Future[set[str]]:
                return pool.submit(high_df_terms, client, index, field, df)

            high = {k.field: above(k.field, max_df) for k in aggregated_keys()}
            held = above(UNIQ_FIELD, frequent_df(n_books) - 1)
            common = above(UNIQ_FIELD, common_df(n_books))
            table = winnow_frequencies(client, index) if winnows else None
            pivots = pivot_frequencies(client, index) if winnows and params.pivot_pairs else None
        return cls(
            n_books,
            max_df,
            frozenset(high[BANDS_FIELD].result()),
            _sorted_hashes(high[UNIQ_FIELD].result()),
            _sorted_hashes(held.result()),
            _sorted_hashes(high[STEMS_FIELD].result()),
            table,
            _sorted_hashes(common.result()),
            pivots,
        )


def _sorted_hashes(terms: set[str]) -> np.ndarray:
    """Hex keyword terms as a sorted uint32 array (a stop list of hashes)."""
    return np.array(sorted(int(t, 16) for t in terms), dtype=np.uint32)


def winnow_frequencies(client: Elasticsearch, index: str) -> KeyFrequencies | None:
    """Document frequencies of the winnowed keys, counted from every book's stored keys.

    Elasticsearch can list the keys above a document frequency (a terms aggregation) but not
    the millions held by 2 … 20 books, so the job reads each book's keys once (~7,000 a book)
    and counts them itself. None when no book has winnowed keys (indexed before they existed).
    """
    return stored_key_frequencies(client, index, WINNOWS_FIELD, terms_to_hashes, 2).get("")


def with_held_pivots(client: Elasticsearch, index: str, params: CandidateParams) -> CandidateParams:
    """``params`` with ``pivot_pairs`` off when no book of ``index`` holds pivot pair keys (an
    index built before they were the default, or with ``--no-pivot-pairs``): their searches
    would find nothing, and a translated list cut to what they stand in for would lose
    partners."""
    if not params.pivot_pairs:
        return params
    held = with_retries()(client.count)(index=index, query={"exists": {"field": PIVOTS.field}})
    return params if held["count"] else dataclasses.replace(params, pivot_pairs=False)


def pivot_frequencies(client: Elasticsearch, index: str) -> dict[str, KeyFrequencies] | None:
    """Document frequencies of every stored pivot key (``bookdup.pivot.table_keys``) by the
    books' language, each count kept: a key one book of another language holds is a query's
    to ask. None when no book has them."""
    tables = stored_key_frequencies(client, index, PIVOTS.field, terms_table_keys, 1, "language")
    return tables or None


def stored_key_frequencies(
    client: Elasticsearch,
    index: str,
    field: str,
    decode: Callable[[Sequence[str]], np.ndarray],
    min_count: int,
    by: str | None = None,
) -> dict[str, KeyFrequencies]:
    """``KeyFrequencies`` of the keys of ``field`` read from every book's ``_source``
    (``decode``: a book's terms to its distinct keys), one table for each value of the field
    ``by`` (one, under "", without); empty when no book has the field."""
    source = [field] if by is None else [field, by]
    hits = iter_documents(client, index, query={"exists": {"field": field}}, source=source)
    return KeyFrequencies.by_label(
        (
            ("" if by is None else str(hit["_source"].get(by, "")), decode(hit["_source"][field]))
            for hit in hits
        ),
        min_count=min_count,
    )


@dataclass(frozen=True)
class RankedCandidates:
    """The hits of one candidate query of ``owner``, best first: (book id, score), the score
    being the number of shared keys, or their summed weights for a translated query."""

    owner: str
    kind: str  # "bands", "uniq" (same language or any), or the translated query's language
    hits: list[tuple[str, float]]
    #: across languages, the first hits verified outright; the rest are screened
    outright: int = 0


class CandidateSearcher:
    """Builds and runs the candidate queries of a batch of query books.

    Per book: a band-collision query, a shared-text query (winnowed keys, or unique words for
    a book without them) and one translated query
    per other indexed language a lexicon reaches, each ranked by the number of shared keys and
    capped; the same queries serve the dedup job and a lookup of an unindexed text.

    A translated query goes through stems: the book's unique-word stems, translated by the stem
    lexicon (``bookdup.stemming.stem_lexicon``), against the sampled stems of the target
    language's books (``stems``). A lexicon gives headwords, and a translation's unique words
    are mostly inflected forms of them (Häusern, not Haus): matched on surface words, the
    English Tom Sawyer's translated query found only 5 German books, none of them Hellwag's
    translation. A book or language without stems falls back to its surface words (``uniq``).
    """

    def __init__(
        self,
        client: Elasticsearch,
        index: str,
        params: CandidateParams,
        stop: StopLists,
        lexicons: Lexicons,
        languages: set[str],
    ) -> None:
        self.client = client
        self.index = index
        self.params = params
        #: searches of one batch the node runs at once (None: the node's default, all its
        #: search threads; the read side sets 1 to leave threads for cheap reads)
        self.max_concurrent: int | None = None
        self.stop = stop
        self.lexicons = lexicons
        self.languages = languages
        self._weighted: dict[Dictionary, WeightedLexicon] = {}
        self._pivot_lexicons: PivotLexicons | None = None

    def _uniq_body(
        self,
        f: BookFeatures,
        hashes: np.ndarray,
        language: str | None,
        weights: TermWeights | None = None,
        *,
        stems: bool = False,
        other_languages: bool = False,
    ) -> CandidateQuery:
        """Books sharing sampled unique-word (or stem) hashes: all books, those of
        ``language``, or with ``other_languages`` those not in ``f``'s language."""
        p = self.params
        picked_weights: list[float] | None = None
        if stems:
            picked = sample_terms(hashes, self.stop.stems, p.translated_query_terms, STEM_MODULUS)
        else:
            picked = sample_terms(hashes, self.stop.uniq, p.target_query_terms)
        if weights is not None:
            at = np.searchsorted(weights.hashes, np.array([int(t, 16) for t in picked], np.uint32))
            picked_weights = weights.weights[at].tolist()
        return CandidateQuery(
            f.book_id,
            STEMS_FIELD if stems else UNIQ_FIELD,
            picked,
            p.min_shared(len(picked)),
            p.translation_hits if language else self._uniq_hits(other_languages),
            language=language,
            exclude_language=f.language if other_languages else None,
            weights=picked_weights,
            idf=p.idf_translations and language is not None,
        )

    def _uniq_hits(self, other_languages: bool) -> int:
        """Hits of an untranslated unique-word query: across languages, or of a book without
        winnowed keys (its only same-language query besides its bands)."""
        return self.params.across_uniq_hits if other_languages else self.params.max_candidates

    def _winnow_body(self, f: BookFeatures) -> CandidateQuery:
        """Books sharing winnowed keys with ``f``: a sample of its keys in the df band."""
        p, table = self.params, self.stop.winnows
        assert table is not None
        keys = table.band(f.winnows, p.winnow_min_df, p.winnow_max_df)
        picked = hex_terms(consistent_sample(keys, p.winnow_query_terms))
        return CandidateQuery(
            f.book_id, WINNOWS_FIELD, picked, p.winnow_minimum(len(picked)), p.max_candidates
        )

    def _same_uniq_body(self, f: BookFeatures) -> CandidateQuery:
        """Books of ``f``'s language sharing its sampled unique words, as many as a book of its
        noise asks (``CandidateParams.noisy_uniq_hits``), the best per size among those read."""
        p = self.params
        hits, depth = p.same_language_uniq_hits, p.same_language_uniq_depth
        if p.noisy_uniq_hits and looks_noisy(f.unique.hashes.size, f.n_words):
            hits, depth = p.noisy_uniq_hits, p.noisy_uniq_depth
        query = self._uniq_body(f, f.unique.hashes, f.language)
        if depth > hits:
            return dataclasses.replace(query, size=depth, per_size=hits)
        return dataclasses.replace(query, size=hits, per_size=0)

    def labelled_queries(
        self, f: BookFeatures, kinds: QueryKinds = "all", depth: int = 1
    ) -> list[tuple[str, CandidateQuery]]:
        """(kind, query) of each query of ``kinds`` that can find a book: kind is "bands",
        "winnows" and ``SAME_UNIQ`` (or "uniq" for a book without winnowed keys), "uniq" across
        languages, or the target language. A
        translated query asking for ``depth`` books screens ``depth`` times as many hits."""
        p = self.params
        same, across = kinds != "across", kinds != "same"
        table = self.stop.winnows
        keyed = bool(f.winnows.size) and table is not None
        out: list[tuple[str, CandidateQuery]] = []
        if same and (p.bands_with_winnows or not keyed):
            bands = [t for t in f.bands if t not in self.stop.bands]
            query = CandidateQuery(
                f.book_id, BANDS_FIELD, bands, p.min_shared_bands, p.max_candidates
            )
            out.append(("bands", query))
        if same and keyed:
            out.append(("winnows", self._winnow_body(f)))
            if p.same_language_uniq_hits:
                out.append((SAME_UNIQ, self._same_uniq_body(f)))
        # Same language from the text keys; the unique-word query still serves the other
        # languages, where shared names, numerals and cognates point at translations. While
        # some books have no winnowed keys (indexed before them, e.g. a migrated v3 index) it
        # also serves this language: those books are reached only through it. (Searched
        # across languages alone, a book is taken as keyed when every book is: the job's
        # second search reads cached features, which hold no keys.)
        every_book_keyed = table is not None and table.n_books >= self.stop.n_books
        other_languages = every_book_keyed and (keyed or kinds == "across")
        if across if other_languages else same:
            uniq = self._uniq_body(f, f.unique.hashes, None, other_languages=other_languages)
            out.append(("uniq", uniq))
        # sorted once for all target languages: a repeated stem adds no term; a noisy book's
        # rescued one edit away, as its indexed keys are (``bookdup.searchedstems``)
        targets = list(self._targets(f)) if across else []
        searched = searched_stems(f, self.pivot_lexicons) if targets else None
        stems = distinct(searched) if searched is not None else None
        windows = (
            self._windows(searched, stems) if searched is not None and stems is not None else []
        )
        for target, dictionary in targets:
            weighed = p.weigh_translations and stem_lexicon(dictionary) is not None
            parts: list[np.ndarray | None] = list(windows) if weighed and windows else [stems]
            for part in parts:
                query = self._translated_body(f, target, dictionary, part, depth, len(parts))
                out.append((target, query))
        return [(kind, q) for kind, q in out if not q.hopeless]

    def _windows(self, searched: np.ndarray, stems: np.ndarray) -> list[np.ndarray]:
        """The distinct stems of each of ``translated_windows`` equal runs of ``searched`` (in
        reading order); the whole book's (``stems``) alone when one query asks them all."""
        k = max(1, self.params.translated_windows)
        if k == 1 or len(stems) <= self.params.translated_query_terms:
            return [stems]
        n = len(searched)
        return [distinct(searched[n * i // k : n * (i + 1) // k]) for i in range(k)]

    def _translated_body(
        self,
        f: BookFeatures,
        target: str,
        dictionary: Dictionary,
        stems: np.ndarray | None,
        depth: int = 1,
        windows: int = 1,
    ) -> CandidateQuery:
        """The query for ``f``'s translations into ``target``: the heaviest translations of
        its distinct ``stems`` (``bookdup.query_terms``; a sample of them when translations
        are not weighed), or for a book or language without stems its translated words."""
        p = self.params
        stemmed = stem_lexicon(dictionary) if stems is not None else None
        if stemmed is not None and stems is not None and p.weigh_translations:
            windowed = windows > 1
            terms = p.translated_query_terms // windows
            picked, heaviest = heaviest_translations(self._weighted_lexicon(stemmed), stems, terms)
            return CandidateQuery(
                f.book_id,
                STEMS_FIELD,
                picked,
                p.min_shared(len(picked)),
                p.window_hits_for(depth) if windowed else p.translation_hits_for(depth),
                language=target,
                weights=heaviest,
                idf=p.idf_translations,
                outright=p.window_outright if windowed else None,
            )
        if stemmed is not None and f.unique.stems is not None:
            # matched on stem hashes: the stems' strings are not kept
            hashes, _, _ = translate_with_source(
                None, f.unique.pages, stemmed, hashes=f.unique.stems
            )
            return self._uniq_body(f, hashes, target, stems=True)
        hashes, _, source = translate_with_source(
            f.unique.words, f.unique.pages, dictionary, hashes=f.unique.hashes
        )
        kept = ~in_lexicon(dictionary, f.unique.hashes)
        weights = (
            translation_weights(hashes, source, kept, p.untranslated_weight)
            if p.weigh_translations
            else None
        )
        return self._uniq_body(f, hashes, target, weights)

    def _weighted_lexicon(self, stemmed: Dictionary) -> WeightedLexicon:
        """``stemmed`` reduced to the stems a query may ask, once per searcher (job)."""
        table = self._weighted.get(stemmed)
        if table is None:
            table = self._weighted[stemmed] = weighted_lexicon(
                hashed_lexicon(stemmed),
                self.stop.stems,
                STEM_MODULUS,
                self.params.untranslated_weight,
            )
        return table

    def scored_by_idf(self, kind: str) -> bool:
        """Whether the query of ``kind`` ranks by idf: the translated ones (kind = the target
        language) with ``idf_translations``; the others count shared keys."""
        return self.params.idf_translations and kind not in SAME_LANGUAGE_KINDS

    def _targets(self, f: BookFeatures) -> Iterator[tuple[str, Dictionary]]:
        """Each indexed language a lexicon from ``f``'s reaches, with that lexicon."""
        for target in self.lexicons.targets(f.language):
            # a lexicon is loaded only when books of its target language are indexed
            dictionary = self.lexicons.get(f.language, target) if target in self.languages else None
            if dictionary is not None:
                yield target, dictionary

    def pivot_lexicons(self) -> PivotLexicons:
        """The job's lexicons into English (pivot keys, noisy books' stems), built once."""
        if self._pivot_lexicons is None:
            self._pivot_lexicons = PivotLexicons.from_lexicons(self.lexicons)
        return self._pivot_lexicons

    def pivot_queries(self, f: BookFeatures) -> list[CandidateQuery]:
        """The searches of ``f``'s pivot pair keys (``pivot_pairs``): its keys with
        ``QUERY_SENSES`` senses a word (no stop list: each scores its idf), in searches of at most
        ``pivot_query_chunk`` clauses over the other languages' books, whose scores (Σ idf)
        the caller sums per book. One set for every target language: a book's keys are the
        same whichever it is, and a term's lookup is most of a search's cost."""
        p = self.params
        if not p.pivot_pairs or not any(True for _ in self._targets(f)):
            return []
        keys = pivot_keys(
            f.unique.stems,
            f.language,
            self.pivot_lexicons(),
            p.pivot_query_senses,
            gap=p.pivot_query_gap,
        )
        keys = keys[keys % np.uint64(p.pivot_query_sample) == 0]
        if self.stop.pivots is not None:
            keys = held_elsewhere(keys, self.stop.pivots, f.language, p.pivot_max_df)
        terms = key_terms(keys)
        step = p.pivot_query_chunk
        return [
            CandidateQuery(
                f.book_id,
                PIVOTS.field,
                terms[i : i + step],
                1,
                p.pivot_chunk_hits,
                exclude_language=f.language,
                idf=True,
                hit_language=True,
            )
            for i in range(0, len(terms), step)
        ]

    def ranked(
        self,
        batch: Sequence[BookFeatures],
        kinds: QueryKinds = "all",
        depth: Mapping[str, int] | None = None,
    ) -> Iterator[RankedCandidates]:
        """Every query of ``kinds`` of every book of ``batch`` with its hits, best first (one
        _msearch), a book's translated ones ``depth[book id]`` deep (`labelled_queries`); a
        book's pivot searches come back as one list per target language (`pivot_lists`)."""
        depth = depth or {}
        # owner, kind ("pivots": a pivot search), hits verified outright, the search
        queries: list[tuple[str, str, int, CandidateQuery]] = []
        bodies: list[str] = []  # as JSON text: the client sends it as it is
        types: list[str | None] = []
        cap = self.params.max_translation_candidates
        for f in batch:
            for kind, query in self.labelled_queries(f, kinds, depth.get(f.book_id, 1)):
                outright = cap if query.outright is None else query.outright
                queries.append((f.book_id, kind, outright, query))
                bodies.append(query.json())
                types.append(DFS if self.scored_by_idf(kind) else None)
            for query in self.pivot_queries(f) if kinds != "same" else ():
                queries.append((f.book_id, PIVOTS.field, cap, query))
                bodies.append(query.json())
                types.append(DFS)
        responses = msearch(self.client, self.index, bodies, types, self.max_concurrent)
        pivots: list[tuple[str, dict[str, Any]]] = []
        for (owner, kind, outright, query), response in zip(queries, responses, strict=True):
            if kind == PIVOTS.field:
                pivots.append((owner, response))
            else:
                yield RankedCandidates(owner, kind, query.hits(response), outright)
        yield from self.pivot_lists(batch, pivots)

    def pivot_lists(
        self, batch: Sequence[BookFeatures], responses: Sequence[tuple[str, dict[str, Any]]]
    ) -> Iterator[RankedCandidates]:
        """The pivot searches' responses of ``batch``'s books ((owner, response), in any
        order) as one list per owner and target language: each book's scores summed over the
        owner's searches, the best ``pivot_hits`` kept."""
        books = {f.book_id: f for f in batch}
        targets: dict[str, set[str]] = {}
        summed: dict[tuple[str, str], dict[str, float]] = {}
        for owner, response in responses:
            if owner not in targets:
                targets[owner] = {t for t, _ in self._targets(books[owner])}
            for hit in response["hits"]["hits"]:
                score, book, language = hit["sort"]
                if language in targets[owner]:
                    scores = summed.setdefault((owner, language), {})
                    scores[book] = scores.get(book, 0.0) + float(score)
        for (owner, language), scores in summed.items():
            best = sorted(scores.items(), key=lambda hit: (-hit[1], hit[0]))
            hits = best[: self.params.pivot_hits]
            yield RankedCandidates(owner, language, hits, self.params.max_translation_candidates)

    def screened_candidates(
        self,
        batch: Sequence[BookFeatures],
        kinds: QueryKinds = "all",
        depth: Mapping[str, int] | None = None,
    ) -> Iterator[tuple[tuple[str, str], bool]]:
        """Unordered candidate pairs (a < b) of every book of ``batch`` (from its queries of
        ``kinds``), duplicates possible, each with whether it is screened: the hits of a
        translated or unique-word query past its first (``RankedCandidates.outright``) are
        verified only if their order passes the screen (``bookdup.relate.PairPlan.screened``:
        it screens the pairs across two languages)."""
        for found in self.ranked(batch, kinds, depth):
            across = found.kind not in ("bands", "winnows", SAME_UNIQ)  # one language only
            for rank, (other, _score) in enumerate(found.hits):
                yield pair_key(found.owner, other), across and rank >= found.outright

    def candidates(self, batch: Sequence[BookFeatures]) -> Iterator[tuple[str, str]]:
        """Unordered candidate pairs (a < b) of every book of ``batch``, duplicates possible,
        screened ones included."""
        for pair, _screened in self.screened_candidates(batch):
            yield pair
