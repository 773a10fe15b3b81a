"""Longest common subsequence of unique-word hash sequences.

Two cases (DUPNIQ §4.2, TRANS §3.4):

* items distinct within each sequence (unique words of two books): the LCS is the longest
  increasing subsequence of y's positions listed in x's order, over the shared items only
  (Hunt–Szymanski with at most one match per row), O(k log k) for k shared items;
* items may repeat (a translated sequence lists every translation of a word): rapidfuzz's
  bit-parallel LCSseq, O(n·m/64), run on the shared items only.

Both restrict to shared items first: an item missing from either sequence cannot be in the LCS.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
from rapidfuzz.distance import LCSseq

__all__ = [
    "align_distinct",
    "align_general",
    "align_restricted",
    "encode_ranks",
    "lcs_distinct",
    "lcs_general",
    "lis_indices",
    "lis_keep",
    "lis_length",
]

_SURROGATES = 0xD800  # first code point that str cannot hold on its own


def _match_sorted(
    xs: np.ndarray, xo: np.ndarray, ys: np.ndarray, yo: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (ix ascending, iy) of the items shared by two distinct-item sequences."""
    if xs.size == 0 or ys.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    p = np.searchsorted(ys, xs)
    np.minimum(p, ys.size - 1, out=p)
    hit = ys[p] == xs
    ix = xo[hit]
    iy = yo[p[hit]]
    order = np.argsort(ix)
    return ix[order], iy[order]


def _shared_order(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x)
    y = np.asarray(y)
    xo = np.argsort(x)
    yo = np.argsort(y)
    return _match_sorted(x[xo], xo, y[yo], yo)


def lis_length(seq: list[int]) -> int:
    """Length of the longest strictly increasing subsequence of non-negative ints (patience).

    Aligned duplicates are mostly in order, so appending past the last pile is tested first:
    this skips the bisection for most items (about 8x faster on real duplicate pairs).
    """
    tails: list[int] = []
    last = -1
    for v in seq:
        if v > last:
            tails.append(v)
            last = v
        else:
            i = bisect_left(tails, v)
            tails[i] = v
            if i == len(tails) - 1:
                last = v
    return len(tails)


def lis_indices(seq: list[int]) -> list[int]:
    """Indices into seq of one longest strictly increasing subsequence (same fast path)."""
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


def lcs_distinct(x: np.ndarray, y: np.ndarray) -> int:
    """|LCS(x, y)| when no item repeats within x nor within y."""
    _, iy = _shared_order(np.asarray(x), np.asarray(y))
    return lis_length(iy.tolist())


def align_distinct(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (into x, into y) of one LCS, both ascending; items distinct within each."""
    ix, iy = _shared_order(np.asarray(x), np.asarray(y))
    keep = lis_keep(iy)
    return ix[keep].astype(np.intp), iy[keep].astype(np.intp)


def _restrict(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, str, str]:
    """Positions of the shared items in x and y, and both restrictions encoded as str."""
    x, y = np.asarray(x), np.asarray(y)
    values, inverse = np.unique(np.concatenate([x, y]), return_inverse=True)
    inverse = inverse.reshape(-1)
    in_x = np.zeros(values.size, dtype=bool)
    in_x[inverse[: x.size]] = True
    in_y = np.zeros(values.size, dtype=bool)
    in_y[inverse[x.size :]] = True
    code = np.cumsum(in_x & in_y) - 1
    code[~(in_x & in_y)] = -1
    cx, cy = code[inverse[: x.size]], code[inverse[x.size :]]
    px, py = np.flatnonzero(cx >= 0), np.flatnonzero(cy >= 0)
    return px, py, encode_ranks(cx[px]), encode_ranks(cy[py])


def encode_ranks(ranks: np.ndarray) -> str:
    """Small non-negative ints as one str (code point rank + 1, surrogates skipped).

    rapidfuzz hashes a list of Python ints item by item but reads a str as a flat array, so
    its bit-parallel LCS runs several times faster on this encoding.
    """
    codes = ranks.astype(np.uint32) + 1
    codes[codes >= _SURROGATES] += 0x800
    return codes.astype("<u4").tobytes().decode("utf-32-le")


def lcs_general(x: np.ndarray, y: np.ndarray) -> int:
    """|LCS(x, y)| for sequences that may repeat items (bit-parallel, rapidfuzz LCSseq)."""
    _, _, sx, sy = _restrict(x, y)
    if not sx:
        return 0
    return int(LCSseq.similarity(sx, sy))


def align_general(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (into x, into y) of one LCS of sequences that may repeat items."""
    return align_restricted(*_restrict(x, y))


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
