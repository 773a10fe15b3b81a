"""Small numpy helpers used on hot paths."""

from __future__ import annotations

import numpy as np


def distinct(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values of ``a``.

    A sort and a neighbour mask: numpy 2.4's ``np.unique`` takes a hash-table path for plain
    values that is ~30x slower on 20K uint32 word hashes (1.8 ms against 50 µs, measured),
    and the dedup job calls this for every query book and language.
    """
    s = np.sort(np.asarray(a), kind="stable")
    if s.size < 2:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def isin_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask of ``values`` found in the sorted array ``sorted_set`` (binary search)."""
    if sorted_set.size == 0:
        return np.zeros(np.shape(values), dtype=bool)
    slot = np.minimum(np.searchsorted(sorted_set, values), sorted_set.size - 1)
    return sorted_set[slot] == values
