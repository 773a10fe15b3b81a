"""The books index as the collection beside a pair (``bookdup.signals.Collection``): whether
some other book holds a frame's text apart from the pair, asked as one count query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch

from bookdup.features import hex_terms
from store.candidates import UNIQ_FIELD
from store.retry import with_retries

__all__ = ["IndexedBooks"]


class IndexedBooks:
    """Asks the books index ``index``, whose ``uniq`` field holds every unique-word hash of a
    book (the index job's default sample, 1 in 1)."""

    def __init__(self, client: Elasticsearch, index: str) -> None:
        self._count = with_retries()(client.count)
        self._index = index
        self._size: int | None = None

    def size(self) -> int:
        """How many books the index holds, counted once: a job's collection does not change."""
        if self._size is None:
            self._size = int(self._count(index=self._index)["count"])
        return self._size

    def holds_apart(
        self,
        stretch: np.ndarray,
        at_least: int,
        rests: Sequence[tuple[np.ndarray, int]],
        exclude: Sequence[str],
        min_books: int = 1,
    ) -> bool:
        """Whether ``min_books`` books not in ``exclude`` each hold at least ``at_least`` of
        ``stretch`` and fewer than n of each (hashes, n) of ``rests``: one count, stopped at
        the ``min_books``-th."""
        query = {
            "bool": {
                "filter": [_holding(stretch, at_least)],
                "must_not": [{"ids": {"values": list(exclude)}}]
                + [_holding(hashes, n) for hashes, n in rests],
            }
        }
        found = self._count(index=self._index, query=query, terminate_after=max(min_books, 1))
        return int(found["count"]) >= max(min_books, 1)


def _holding(hashes: np.ndarray, at_least: int) -> dict[str, Any]:
    """Books holding at least ``at_least`` of ``hashes`` as unique words."""
    terms = [{"term": {UNIQ_FIELD: t}} for t in hex_terms(hashes)]
    return {"bool": {"should": terms, "minimum_should_match": max(at_least, 1)}}
