"""The dedup job's feature cache, without a node: what it keeps and gives back."""

from __future__ import annotations

import numpy as np

from bookdup.features import extract_features
from store.candidates import StopLists
from store.features import FeatureCache
from tests.bookdup.test_signals import book


def _cache(size: int) -> FeatureCache:
    empty = np.zeros(0, np.uint32)
    stop = StopLists(10, 50, frozenset(), empty, empty, empty, None)
    return FeatureCache(None, "books", stop, size)  # type: ignore[arg-type]


def test_a_cached_book_is_given_back_as_cached_and_an_evicted_one_is_not() -> None:
    """A book read again (a query book after it was a candidate) comes from the cache, the
    very object the job verifies with; the least recently used one is evicted first."""
    words = [f"w{i:04d}" for i in range(300)]
    books = [
        extract_features(book(name, [" ".join(words[i : i + 10]) for i in range(0, 300, 10)]))
        for name in ("a", "b", "c")
    ]
    cache = _cache(2)
    a, b = cache.put(books[0]), cache.put(books[1])
    assert cache.cached("a") is a and cache.cached("b") is b
    assert cache.cached("c") is None
    assert cache.cached("a") is a  # a now the most recently used: b goes first
    cache.put(books[2])
    assert cache.cached("b") is None
    assert cache.cached("a") is a and cache.cached("c") is not None
