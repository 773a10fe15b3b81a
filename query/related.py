"""Read side of relation finding: candidate searches plus verification by the bookdup core.

Shared by the dedup job (every book against the index) and by ad-hoc lookups ("which books in
the index are editions or translations of this text?").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch

from bookdup.boilerplate import drop_common_words
from bookdup.classify import CLASSIFIER_PARAMS
from bookdup.compare import compare_features
from bookdup.dictionary import Dictionary, available_pairs, load_dictionary
from bookdup.features import BookFeatures, features_from_doc
from bookdup.translate import translate_unique
from store.candidates import (
    BANDS_FIELD,
    UNIQ_FIELD,
    CandidateParams,
    candidate_body,
    high_df_terms,
    hits_with_scores,
    sample_terms,
)
from store.msearch import msearch
from store.retry import with_retries
from store.schema import IndexNames


def pair_key(a: str, b: str) -> tuple[str, str]:
    """Unordered pair as a sorted tuple: one relation per pair, whichever book found it."""
    return (a, b) if a < b else (b, a)


class FeatureCache:
    """Book features by id: LRU in memory, misses fetched with one ``mget`` per batch."""

    def __init__(self, client: Elasticsearch, index: str, common: np.ndarray, size: int) -> None:
        self._client = client
        self._index = index
        self._common = common
        self._size = size
        self._items: OrderedDict[str, BookFeatures] = OrderedDict()

    def put(self, features: BookFeatures) -> BookFeatures:
        features = drop_common_words(features, self._common)
        self._items[features.book_id] = features
        self._items.move_to_end(features.book_id)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return features

    def get_many(self, ids: Iterable[str]) -> dict[str, BookFeatures]:
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in self._items]
        if missing:
            docs = with_retries()(self._client.mget)(
                index=self._index, ids=missing, source=["features"]
            ).body["docs"]
            for doc in docs:
                if doc.get("found"):
                    self.put(features_from_doc(doc["_source"]["features"], words=False))
        out = {}
        for i in wanted:
            if i in self._items:
                self._items.move_to_end(i)
                out[i] = self._items[i]
        return out


class Dictionaries:
    """FreeDict lexicons loaded on first use, keyed by (source, target) language."""

    def __init__(self, enabled: bool) -> None:
        self._pairs = set(available_pairs()) if enabled else set()
        self._loaded: dict[tuple[str, str], Dictionary] = {}

    def targets(self, source: str) -> list[str]:
        return sorted(t for s, t in self._pairs if s == source)

    def get(self, source: str, target: str) -> Dictionary | None:
        if (source, target) not in self._pairs:
            return None
        if (source, target) not in self._loaded:
            self._loaded[(source, target)] = load_dictionary(source, target)
        return self._loaded[(source, target)]


# Below these its scores the classifier can only answer UNRELATED (its evidence gate and the
# lower edge of its TRANSLATION ramp), so the core may reject such pairs without computing
# page signals: a lossless fast path, which is what makes most candidates cheap.
SAME_LANGUAGE_FLOOR = CLASSIFIER_PARAMS.min_its[0]
TRANSLATION_FLOOR = CLASSIFIER_PARAMS.translation_its[0]


def verify(a: BookFeatures, b: BookFeatures, dictionaries: Dictionaries) -> dict[str, Any] | None:
    """Compare one candidate pair with the core; None when no dictionary links the languages."""
    if a.language == b.language or "und" in (a.language, b.language):
        return compare_features(a, b, threshold=SAME_LANGUAGE_FLOOR)
    dictionary = dictionaries.get(a.language, b.language)
    if dictionary is None:
        return None
    return compare_features(a, b, dictionary=dictionary, threshold=TRANSLATION_FLOOR)


class CandidateSearcher:
    """Builds and runs the candidate queries of one batch of query books."""

    def __init__(
        self,
        client: Elasticsearch,
        names: IndexNames,
        params: CandidateParams,
        stop_bands: set[str],
        stop_uniq: np.ndarray,
        dictionaries: Dictionaries,
        languages: set[str],
    ) -> None:
        self.client = client
        self.names = names
        self.params = params
        self.stop_bands = stop_bands
        self.stop_uniq = stop_uniq
        self.dictionaries = dictionaries
        self.languages = languages

    def _uniq_body(self, f: BookFeatures, hashes: np.ndarray, language: str | None) -> Any:
        p = self.params
        picked = sample_terms(hashes, self.stop_uniq, p.target_query_terms)
        return candidate_body(
            f.book_id,
            UNIQ_FIELD,
            picked,
            p.min_shared(len(picked)),
            p.max_translation_candidates if language else p.max_candidates,
            language=language,
        )

    def bodies(self, f: BookFeatures) -> list[dict[str, Any]]:
        """Band query, unique-word query, one translated query per reachable language."""
        p = self.params
        bands = [t for t in f.bands if t not in self.stop_bands]
        out = [
            candidate_body(f.book_id, BANDS_FIELD, bands, p.min_shared_bands, p.max_candidates),
            self._uniq_body(f, f.unique.hashes, None),
        ]
        for target in self.dictionaries.targets(f.language):
            if target not in self.languages:
                continue
            dictionary = self.dictionaries.get(f.language, target)
            if dictionary is None:
                continue
            hashes, _ = translate_unique(
                f.unique.words, f.unique.pages, dictionary, hashes=f.unique.hashes
            )
            out.append(self._uniq_body(f, hashes, target))
        return [b for b in out if b is not None]

    def candidates(self, batch: list[BookFeatures]) -> Iterator[tuple[str, str]]:
        bodies: list[dict[str, Any]] = []
        owners: list[str] = []
        for f in batch:
            for body in self.bodies(f):
                bodies.append(body)
                owners.append(f.book_id)
        for owner, response in zip(
            owners, msearch(self.client, self.names.books, bodies), strict=True
        ):
            for other, _score in hits_with_scores(response):
                yield pair_key(owner, other)


def indexed_languages(client: Elasticsearch, index: str) -> set[str]:
    response = client.search(
        index=index, size=0, aggs={"langs": {"terms": {"field": "language", "size": 200}}}
    ).body
    return {b["key"] for b in response["aggregations"]["langs"]["buckets"]}


class RelationFinder:
    """Everything needed to find and verify the relations of books against one index."""

    def __init__(
        self,
        client: Elasticsearch,
        names: IndexNames,
        params: CandidateParams,
        *,
        translations: bool = True,
        cache_size: int = 4000,
    ) -> None:
        self.n_books = client.count(index=names.books)["count"]
        self.max_df = params.max_df(self.n_books)
        stop_bands = high_df_terms(client, names.books, BANDS_FIELD, self.max_df)
        stop_uniq = high_df_terms(client, names.books, UNIQ_FIELD, self.max_df)
        self.n_stop_terms = len(stop_bands) + len(stop_uniq)
        common = np.array(sorted(int(t, 16) for t in stop_uniq), dtype=np.uint32)
        self.cache = FeatureCache(client, names.books, common, cache_size)
        self.dictionaries = Dictionaries(translations)
        self.searcher = CandidateSearcher(
            client,
            names,
            params,
            stop_bands,
            common,
            self.dictionaries,
            indexed_languages(client, names.books),
        )

    def verify_pairs(
        self, pairs: list[tuple[str, str]]
    ) -> Iterator[tuple[BookFeatures, BookFeatures, dict[str, Any]]]:
        """(a, b, comparison) for every pair the core could compare (a dictionary exists)."""
        features = self.cache.get_many(i for p in pairs for i in p)
        for a_id, b_id in pairs:
            a, b = features.get(a_id), features.get(b_id)
            if a is None or b is None:
                continue
            result = verify(a, b, self.dictionaries)
            if result is not None:
                yield a, b, result


def find_related(
    client: Elasticsearch, names: IndexNames, features: BookFeatures
) -> list[dict[str, Any]]:
    """Relations of a book that is not in the index, against every indexed book."""
    finder = RelationFinder(client, names, CandidateParams())
    features = finder.cache.put(features)
    others = {b if a == features.book_id else a for a, b in finder.searcher.candidates([features])}
    found = finder.cache.get_many(sorted(others))
    out = []
    for other in found.values():
        result = verify(features, other, finder.dictionaries)
        if result is not None and result["relation"] != "UNRELATED":
            out.append({"book_id": other.book_id, **result})
    out.sort(key=lambda r: (-r["confidence"], r["book_id"]))
    return out
