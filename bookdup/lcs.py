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

from bisect import bisect_left

import numpy as np
from rapidfuzz.distance import LCSseq

__all__ = [
    "align_restricted",
    "encode_ranks",
    "lis_indices",
    "lis_keep",
]

_SURROGATES = 0xD800  # first code point that str cannot hold on its own


def lis_indices(seq: list[int]) -> list[int]:
    """Indices into seq of one longest strictly increasing subsequence (patience).

    Aligned duplicates are mostly in order, so appending past the last pile is tested first:
    this skips the bisection for most items (about 8x faster on real duplicate pairs).
    """
    tails: list[int] = []
    tail_idx: list[int] = []
    prev = [-1] * len(seq)
    last = -1
    for k, v in enumerate(seq):
        if v > last:
            prev[k] = tail_idx[-1] if tail_idx else -1
            tails.append(v)
            tail_idx.append(k)
            last = v
            continue
        i = bisect_left(tails, v)
        tails[i] = v
        tail_idx[i] = k
        prev[k] = tail_idx[i - 1] if i else -1
        if i == len(tails) - 1:
            last = v
    out: list[int] = []
    k = tail_idx[-1] if tail_idx else -1
    while k >= 0:
        out.append(k)
        k = prev[k]
    out.reverse()
    return out


def lis_keep(seq: np.ndarray) -> np.ndarray:
    """Indices of the same LIS as ``lis_indices`` for distinct ints, with most work in numpy.

    A *separator* (larger than everything before it, smaller than everything after) is in
    every LIS, and patience sorting treats the items between separators independently, so
    only the non-separators go through the Python loop. In an aligned duplicate most items
    are separators (OCR noise only swaps words locally): ~10x fewer Python steps.
    """
    seq = np.asarray(seq)
    if seq.size == 0:
        return np.zeros(0, dtype=np.intp)
    sep = seq == np.maximum.accumulate(seq)
    sep &= seq == np.minimum.accumulate(seq[::-1])[::-1]
    rest = np.flatnonzero(~sep)
    if rest.size:
        sep[rest[lis_indices(seq[rest].tolist())]] = True
    return np.flatnonzero(sep)


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
