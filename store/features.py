"""Book features read back from the books index, for verification.

Features are stored (not indexed) in each book document's ``_source``; verification needs them
for every candidate, and candidates point anywhere in the index, so they are kept in an LRU
cache in their compact, words-free form (~100 KB a book) and misses are fetched with one
``mget`` per batch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from elasticsearch import Elasticsearch

from bookdup.boilerplate import drop_common_words
from bookdup.features import BookFeatures, features_from_doc
from store.candidates import StopLists
from store.connection import missing_ok
from store.retry import with_retries

#: Books kept in memory, ~100 KB each (hashes, pages, signatures): at 10K books a smaller
#: cache would miss on most candidates (an mget and a decode, ~6 ms each).
DEFAULT_CACHE_SIZE = 20_000


def prepare_features(features: BookFeatures, stop: StopLists) -> BookFeatures:
    """What verification compares: ``features`` without the collection's boilerplate, the words
    held by more than half its books (``stop.common``) and the dense stretches of its frequent words
    (``stop.frequent``: licences, notices). The dedup job's cache, ``match`` and ``explain`` all
    prepare a book here, so the read side decides on the sequences the job decided on."""
    return drop_common_words(features, stop.common, stop.frequent)


def get_features(
    client: Elasticsearch, index: str, book_id: str, *, words: bool = True
) -> BookFeatures | None:
    """One book's stored features (with its word strings unless ``words`` is False), or None."""
    doc = with_retries()(missing_ok(client).get)(index=index, id=book_id, source=["features"])
    if not doc.body.get("found"):
        return None
    return features_from_doc(doc["_source"]["features"], words=words)


class FeatureCache:
    """Book features by id: LRU in memory, prepared on entry (``prepare_features``)."""

    def __init__(
        self, client: Elasticsearch, index: str, stop: StopLists, size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        self._client = client
        self._index = index
        self._stop = stop
        self._size = size
        self._items: OrderedDict[str, BookFeatures] = OrderedDict()

    def put(self, features: BookFeatures) -> BookFeatures:
        """Cache ``features`` (without the boilerplate words) and return what was cached."""
        features = prepare_features(features, self._stop)
        self._items[features.book_id] = features
        self._items.move_to_end(features.book_id)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return features

    def cached(self, book_id: str) -> BookFeatures | None:
        """The cached features of ``book_id`` (marked recently used), or None: a book read
        again, e.g. as a query book after it was a candidate, is not decoded and stemmed
        again (its stems are recomputed from the stored words on every decode)."""
        features = self._items.get(book_id)
        if features is not None:
            self._items.move_to_end(book_id)
        return features

    def get_many(self, ids: Iterable[str]) -> dict[str, BookFeatures]:
        """Features of the books among ``ids`` that exist, fetching misses in one ``mget``."""
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
