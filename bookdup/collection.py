"""A collection of books held in memory: what the dedup job's index answers about the books
beside a pair (``bookdup.signals.Collection``), for a corpus compared without an index."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from bookdup.features import BookFeatures

__all__ = ["BooksInMemory"]


class BooksInMemory:
    """Each book's distinct unique-word hashes, by id."""

    def __init__(self, books: Iterable[BookFeatures]) -> None:
        self._held = {b.book_id: np.unique(b.unique.hashes) for b in books}

    def size(self) -> int:
        """How many books the collection holds."""
        return len(self._held)

    def holds_apart(
        self,
        stretch: np.ndarray,
        at_least: int,
        rests: Sequence[tuple[np.ndarray, int]],
        exclude: Sequence[str],
        min_books: int = 1,
    ) -> bool:
        """Whether ``min_books`` books not in ``exclude`` each hold at least ``at_least`` of
        ``stretch`` and fewer than n of each (hashes, n) of ``rests``."""
        found = 0
        for book_id, held in self._held.items():
            if book_id in exclude or _count(stretch, held) < at_least:
                continue
            if all(_count(hashes, held) < n for hashes, n in rests):
                found += 1
                if found >= min_books:
                    return True
        return False


def _count(hashes: np.ndarray, held: np.ndarray) -> int:
    return int(np.isin(hashes, held, assume_unique=True).sum())
