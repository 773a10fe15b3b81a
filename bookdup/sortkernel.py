"""A book's sequence sorted and grouped for verification (``verify._prepare``), compiled.

Preparing sequences was ~28 % of the verification workers' CPU in a 3K-book dedup (issue 28):
numpy's stable argsort of uint32 hashes (a merge sort) and a bitset level a Python step. Here
the sort is a least-significant-digit radix sort (three passes of 11 bits), stable, so it
gives ``np.argsort(kind="stable")``'s ``order``; with the grouping (one pass) 6-8x faster on
3K-76K items (benchmarks/bench_prepare.py). The bitsets are one pass too
(tests/bookdup/test_sortkernel.py checks every field against the numpy definitions).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["bitset_rows", "radix_argsort", "sorted_groups", "warm"]

_DIGIT = 11  # bits a radix pass sorts on: three passes cover 32 bits
_RADIX = 1 << _DIGIT


@njit(cache=True, nogil=True)
def radix_argsort(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(stable argsort of the uint32 ``hashes`` as int32, the hashes in that order)."""
    n = hashes.size
    counts = np.zeros((3, _RADIX), dtype=np.int64)
    for i in range(n):
        v = np.uint64(hashes[i])
        counts[0, v & (_RADIX - 1)] += 1
        counts[1, (v >> _DIGIT) & (_RADIX - 1)] += 1
        counts[2, v >> (2 * _DIGIT)] += 1
    order = np.empty(n, dtype=np.int32)
    for i in range(n):
        order[i] = i
    keys = hashes.copy()
    spare_order = np.empty(n, dtype=np.int32)
    spare_keys = np.empty(n, dtype=hashes.dtype)
    for p in range(3):
        c = counts[p]
        total = 0
        for d in range(_RADIX):
            t = c[d]
            c[d] = total
            total += t
        shift = _DIGIT * p
        for i in range(n):
            digit = (np.uint64(keys[i]) >> shift) & (_RADIX - 1)
            q = c[digit]
            c[digit] = q + 1
            spare_keys[q] = keys[i]
            spare_order[q] = order[i]
        keys, spare_keys = spare_keys, keys
        order, spare_order = spare_order, order
    return order, keys


@njit(cache=True, nogil=True)
def sorted_groups(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(order, values, starts, first) of uint32 ``hashes``: the stable argsort, the sorted
    distinct values, where each value's positions begin in ``order`` (values.size + 1 of
    them, the last the item count) and each value's first position. The indices are int32
    (a sequence has far fewer than 2^31 items): half the bytes of a cached entry."""
    order, ordered = radix_argsort(hashes)
    n = ordered.size
    distinct = 1 if n else 0
    for i in range(1, n):
        distinct += ordered[i] != ordered[i - 1]
    values = np.empty(distinct, dtype=ordered.dtype)
    starts = np.empty(distinct + 1, dtype=np.int32)
    first = np.empty(distinct, dtype=np.int32)
    j = 0
    for i in range(n):
        if i == 0 or ordered[i] != ordered[i - 1]:
            values[j] = ordered[i]
            starts[j] = i
            first[j] = order[i]
            j += 1
    starts[distinct] = n
    return order, values, starts, first


@njit(cache=True, nogil=True)
def bitset_rows(values: np.ndarray, bits: int) -> np.ndarray:
    """Row k: the bitset (little-endian bytes) of the buckets (value mod ``bits``, a power of
    two) holding more than k of ``values``; as many rows as the fullest bucket holds."""
    counts = np.zeros(bits, dtype=np.int64)
    top = 0
    for v in values:
        b = v & (bits - 1)
        counts[b] += 1
        top = max(top, counts[b])
    rows = np.zeros((top, bits >> 3), dtype=np.uint8)
    for v in values:
        b = v & (bits - 1)
        counts[b] -= 1  # each of the bucket's items sets one of rows 0 .. count - 1
        rows[counts[b], b >> 3] |= np.uint8(1 << (b & 7))
    return rows


def warm() -> None:
    """Load (or compile) the kernels now, as ``bookdup.bitlcs.warm`` does for its own."""
    values = sorted_groups(np.array([2, 1, 2], dtype=np.uint32))[1]
    bitset_rows(values, 1 << 16)
