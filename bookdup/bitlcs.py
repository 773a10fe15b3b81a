"""|LCS| of small-code sequences whose items may repeat: bit-parallel, compiled, many ranges
of one sequence in one pass (issue 28).

The order statistic of a translated pair (``bookdup.orderstat``, ``bookdup.orderscan``) needs
the |LCS| of one *pattern* (y, fixed) against many *streams*: x, x shuffled a few times, and
~56 windows of the bigger book. rapidfuzz's ``LCSseq`` rebuilds its match masks (a hash map
for alphabets past 256) on every call and each call is a Python round trip; here the masks are
sparse rows built once per pattern, and every window that starts at the same item is read
off one pass over the stream (the |LCS| of a prefix is the popcount of the state after it).

The recurrence is Hyyrö's (2004) for the LCS length: V starts all ones, and for each stream
item c with match mask M[c], U = V & M[c], V = (V + U) | (V - U); |LCS| is the number of zero
bits among the pattern's m bits. U is a subset of V, so V - U = V & ~U needs no borrow.
A word where U and the incoming carry are both 0 keeps its value, so a step only visits the
words where M[c] has bits and those its carry runs into: one or two for a pattern of
distinct items (the verifier's), where a dense step visits all m / 64 (3x faster on the real
books' scans and shuffles, the same |LCS|).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["Pattern", "lcs_ranges", "lcs_stream", "range_counts", "warm"]


@njit(cache=True, nogil=True)
def _rows(codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The match masks as sparse rows: row c's non-zero words are ``word[start[c]:start[c+1]]``
    (ascending) with bits ``bits[...]`` (bit i set where codes[i] == c). A pattern of distinct
    items has one word per row, where a dense row has m / 64."""
    count = np.zeros(k + 1, dtype=np.int64)
    last = np.full(k, -1, dtype=np.int64)
    for i in range(codes.size):
        c, w = codes[i], i >> 6
        if last[c] != w:
            last[c] = w
            count[c + 1] += 1
    start = np.cumsum(count)
    word = np.empty(start[k], dtype=np.int64)
    bits = np.zeros(start[k], dtype=np.uint64)
    fill = start[:k].copy()
    last[:] = -1
    for i in range(codes.size):
        c, w = codes[i], i >> 6
        if last[c] != w:
            last[c] = w
            word[fill[c]] = w
            fill[c] += 1
        bits[fill[c] - 1] |= np.uint64(1) << np.uint64(i & 63)
    return start, word, bits


@njit(cache=True, nogil=True)
def _step(v: np.ndarray, start: np.ndarray, word: np.ndarray, bits: np.ndarray, c: int) -> None:
    """One stream item c: V = (V + U) | (V & ~U), U = V & M[c], with the carry across words.

    Only the words where M[c] has bits, and those a carry runs into, change (elsewhere U
    and the carry are 0 and the word stays), so the step skips the rest: the same V."""
    j, end = start[c], start[c + 1]
    if j == end:
        return
    w = word[j]
    carry = np.uint64(0)
    while w < v.size:
        mask = np.uint64(0)
        if j < end and word[j] == w:
            mask = bits[j]
            j += 1
        x = v[w]
        u = x & mask
        if u == np.uint64(0) and carry == np.uint64(0):
            if j == end:
                return
            w = word[j]
            continue
        t = x + u
        c1 = np.uint64(1) if t < x else np.uint64(0)
        s = t + carry
        c2 = np.uint64(1) if s < t else np.uint64(0)
        carry = c1 | c2
        v[w] = s | (x & ~u)
        w += 1


@njit(cache=True, nogil=True)
def _popcount(x: np.uint64) -> int:
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _zeros(v: np.ndarray, m: int) -> int:
    """Zero bits among the first m bits of v: the |LCS| so far."""
    ones = 0
    full = m >> 6
    for w in range(full):
        ones += _popcount(v[w])
    rest = m & 63
    if rest:
        ones += _popcount(v[full] & ((np.uint64(1) << np.uint64(rest)) - np.uint64(1)))
    return m - ones


@njit(cache=True, nogil=True)
def _lcs(start: np.ndarray, word: np.ndarray, bits: np.ndarray, m: int, stream: np.ndarray) -> int:
    v = np.full((m + 63) // 64, np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    k = start.size - 1
    for i in range(stream.size):
        c = stream[i]
        if c < k:
            _step(v, start, word, bits, c)
    return _zeros(v, m)


@njit(cache=True, nogil=True)
def _lcs_ranges(
    start: np.ndarray,
    word: np.ndarray,
    bits: np.ndarray,
    m: int,
    stream: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> np.ndarray:
    """|LCS| of stream[lo[j]:hi[j]] for every j; ranges sorted by (lo, hi), each lo one pass."""
    out = np.zeros(lo.size, dtype=np.int64)
    v = np.empty((m + 63) // 64, dtype=np.uint64)
    k = start.size - 1
    j = 0
    while j < lo.size:
        first = lo[j]
        v[:] = np.uint64(0xFFFFFFFFFFFFFFFF)
        i = first
        while j < lo.size and lo[j] == first:
            while i < hi[j]:
                c = stream[i]
                if c < k:
                    _step(v, start, word, bits, c)
                i += 1
            out[j] = _zeros(v, m)
            j += 1
    return out


class Pattern:
    """One sequence's match masks, built once, for the |LCS| against many streams.

    ``codes``: small non-negative ints (a restricted sequence's renumbered items); stream
    items at or past ``k`` (the table's rows) match nothing.
    """

    def __init__(self, codes: np.ndarray, k: int | None = None) -> None:
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        rows = int(codes.max(initial=-1)) + 1 if k is None else k
        self.m = int(codes.size)
        self.rows = _rows(codes, max(rows, 1))


def lcs_stream(pattern: Pattern, stream: np.ndarray) -> int:
    """|LCS| of ``stream`` and the pattern."""
    if pattern.m == 0 or stream.size == 0:
        return 0
    return int(_lcs(*pattern.rows, pattern.m, np.ascontiguousarray(stream, dtype=np.int64)))


def lcs_ranges(pattern: Pattern, stream: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """|LCS| of ``stream[lo[j]:hi[j]]`` and the pattern, for every j (any order of ranges).

    Ranges that share a start are read off one pass, so the cost is the passes' lengths
    (~4.5x the stream for the window scan's 56 windows), not the sum of the ranges.
    """
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    if pattern.m == 0 or lo.size == 0:
        return np.zeros(lo.size, dtype=np.int64)
    order = np.lexsort((hi, lo))
    out = np.empty(lo.size, dtype=np.int64)
    stream = np.ascontiguousarray(stream, dtype=np.int64)
    out[order] = _lcs_ranges(*pattern.rows, pattern.m, stream, lo[order], hi[order])
    return out


@njit(cache=True, nogil=True)
def _range_counts(
    stream: np.ndarray, weight: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    shared = np.zeros(lo.size, dtype=np.int64)
    pairs = np.zeros(lo.size, dtype=np.int64)
    seen = np.full(weight.size, -1, dtype=np.int64)
    for j in range(lo.size):
        for i in range(lo[j], hi[j]):
            c = stream[i]
            w = weight[c]
            if w > 0:
                pairs[j] += w
                if seen[c] != j:
                    seen[c] = j
                    shared[j] += 1
    return shared, pairs


def range_counts(
    stream: np.ndarray, counts: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For every range stream[lo[j]:hi[j]]: how many distinct items it shares with a pattern
    whose items occur ``counts[c]`` times, and how many (stream item, pattern item) pairs
    match — what a range's null |LCS| is drawn from (``bookdup.orderscan``)."""
    return _range_counts(
        np.ascontiguousarray(stream, dtype=np.int64),
        np.ascontiguousarray(counts, dtype=np.int64),
        np.asarray(lo, dtype=np.int64),
        np.asarray(hi, dtype=np.int64),
    )


def warm() -> None:
    """Load (or compile) every kernel now: a process that forks workers after this hands them
    ready code, where each would spend ~1 s of its own starting numba."""
    pattern = Pattern(np.array([0, 1], dtype=np.int64), 2)
    stream = np.array([1, 0], dtype=np.int64)
    lcs_stream(pattern, stream)
    lcs_ranges(pattern, stream, np.array([0]), np.array([2]))
    range_counts(stream, np.array([1, 1]), np.array([0]), np.array([2]))
