"""Longest common subsequence of unique-word hash sequences: the pieces the verification
(``bookdup.verify``) and the boilerplate finder build on.

Two cases (DUPNIQ §4.2, TRANS §3.4):

* items distinct within each sequence (unique words of two books): the LCS is the longest
  increasing subsequence of y's positions listed in x's order, over the shared items only
  (Hunt–Szymanski with at most one match per row), O(k log k) for k shared items
  (`lis_keep`);
* items may repeat (a translated sequence lists every translation of a word): rapidfuzz's
  bit-parallel LCSseq, O(n·m/64), run on the shared items only (`encode_ranks`,
  `align_restricted`).

Both restrict to shared items first: an item missing from either sequence cannot be in the LCS.
Whole-sequence reference versions of both live with their tests (``tests/bookdup/lcs_reference``).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from rapidfuzz.distance import LCSseq

__all__ = [
    "align_restricted",
    "encode_ranks",
    "lis_keep",
    "warm",
]

_SURROGATES = 0xD800  # first code point that str cannot hold on its own


@njit(cache=True, nogil=True)
def _patience(seq: np.ndarray, rest: np.ndarray, keep: np.ndarray) -> None:
    """Mark in ``keep`` one longest strictly increasing subsequence of ``seq[rest]``.

    Aligned duplicates are mostly in order, so appending past the last pile is tested first:
    that skips the bisection for most items. The bisection is ``bisect_left`` on the pile
    tails, so ties break as in the Python loop it replaced (tests/bookdup/lcs_reference.py).
    """
    n = rest.size
    tails = np.empty(n, dtype=np.int64)
    tail_idx = np.empty(n, dtype=np.int64)
    prev = np.empty(n, dtype=np.int64)
    piles = 0
    for k in range(n):
        v = seq[rest[k]]
        if piles == 0 or v > tails[piles - 1]:
            prev[k] = tail_idx[piles - 1] if piles else -1
            tails[piles] = v
            tail_idx[piles] = k
            piles += 1
            continue
        lo, hi = 0, piles
        while lo < hi:
            mid = (lo + hi) >> 1
            if tails[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        tails[lo] = v
        tail_idx[lo] = k
        prev[k] = tail_idx[lo - 1] if lo else -1
    k = tail_idx[piles - 1] if piles else -1
    while k >= 0:
        keep[rest[k]] = True
        k = prev[k]


@njit(cache=True, nogil=True)
def _lis_keep(seq: np.ndarray) -> np.ndarray:
    """A *separator* (no larger item before it, no smaller after) is in every LIS of distinct
    items, and patience sorting treats the items between separators independently, so only
    the others go through the piles (most items of an aligned duplicate are separators)."""
    n = seq.size
    keep = np.zeros(n, dtype=np.bool_)
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    high = seq[0]
    for k in range(n):
        high = max(high, seq[k])
        keep[k] = seq[k] == high
    low = seq[n - 1]
    for k in range(n - 1, -1, -1):
        low = min(low, seq[k])
        keep[k] = keep[k] and seq[k] == low
    rest = np.flatnonzero(~keep)
    if rest.size:
        _patience(seq, rest, keep)
    return np.flatnonzero(keep)


def lis_keep(seq: np.ndarray) -> np.ndarray:
    """Indices (ascending) of one longest strictly increasing subsequence of distinct
    non-negative ints; compiled, as the Python loop it replaced was half of a same-language
    pair's verification (issue 28)."""
    return _lis_keep(np.ascontiguousarray(seq, dtype=np.int64))


def warm() -> None:
    """Load (or compile) the kernel now, as ``bookdup.bitlcs.warm`` does for its own."""
    lis_keep(np.array([1, 0, 2]))


def encode_ranks(ranks: np.ndarray) -> str:
    """Small non-negative ints as one str (code point rank + 1, surrogates skipped).

    rapidfuzz hashes a list of Python ints item by item but reads a str as a flat array, so
    its bit-parallel LCS runs several times faster on this encoding.
    """
    codes = ranks.astype(np.uint32) + 1
    codes[codes >= _SURROGATES] += 0x800
    return codes.astype("<u4").tobytes().decode("utf-32-le")


def align_restricted(
    px: np.ndarray, py: np.ndarray, sx: str, sy: str
) -> tuple[np.ndarray, np.ndarray]:
    """LCS index pairs from positions (px, py) of two restricted sequences and their str codes."""
    empty = np.zeros(0, dtype=np.intp)
    if not sx or not sy:
        return empty, empty
    blocks = [op for op in LCSseq.opcodes(sx, sy) if op.tag == "equal"]
    if not blocks:
        return empty, empty
    ax = np.concatenate([np.arange(b.src_start, b.src_end) for b in blocks])
    ay = np.concatenate([np.arange(b.dest_start, b.dest_end) for b in blocks])
    return px[ax].astype(np.intp), py[ay].astype(np.intp)
