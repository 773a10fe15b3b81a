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
    "lcs_distinct",
    "lcs_general",
    "lis_indices",
    "lis_length",
    "match_sorted",
    "restrict_sorted",
]

_SURROGATES = 0xD800  # first code point that str cannot hold on its own


def match_sorted(
    xs: np.ndarray, xo: np.ndarray, ys: np.ndarray, yo: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (ix ascending, iy) of the items shared by two distinct-item sequences.

    Takes each sequence pre-sorted (``xs = x[xo]`` with ``xo = argsort(x)``) so that callers
    verifying one book against many sort it once; searchsorted with sorted keys is cache-friendly.
    """
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
    return match_sorted(x[xo], xo, y[yo], yo)


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


def lcs_distinct(x: np.ndarray, y: np.ndarray) -> int:
    """|LCS(x, y)| when no item repeats within x nor within y."""
    _, iy = _shared_order(np.asarray(x), np.asarray(y))
    return lis_length(iy.tolist())


def align_distinct(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (into x, into y) of one LCS, both ascending; items distinct within each."""
    ix, iy = _shared_order(np.asarray(x), np.asarray(y))
    keep = np.asarray(lis_indices(iy.tolist()), dtype=np.intp)
    return ix[keep].astype(np.intp), iy[keep].astype(np.intp)


def _member_sorted(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """For sorted xs, whether each item occurs in sorted ys (sorted keys: branch-predictable)."""
    if ys.size == 0:
        return np.zeros(xs.size, dtype=bool)
    p = np.searchsorted(ys, xs)
    np.minimum(p, ys.size - 1, out=p)
    return ys[p] == xs


def restrict_sorted(
    x: np.ndarray, xo: np.ndarray, y: np.ndarray, yo: np.ndarray
) -> tuple[np.ndarray, np.ndarray, str, str]:
    """Positions of shared items in x and y and both restrictions encoded as str.

    ``xo``/``yo`` are argsorts of x and y (callers cache them per book). Shared items are
    renumbered 0..k-1 and written as code points (skipping surrogates), so rapidfuzz runs its
    fastest path on str instead of hashing a list of Python ints. Every search uses sorted keys:
    with unsorted keys np.searchsorted (and np.unique / np.intersect1d) cost 10x more here.
    """
    xs = x[xo]
    ys = y[yo]
    hx = _member_sorted(xs, ys)
    hy = _member_sorted(ys, xs)
    if not hx.any():
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, "", ""
    shared_x = xs[hx]
    first = np.ones(shared_x.size, dtype=bool)
    first[1:] = shared_x[1:] != shared_x[:-1]
    common = shared_x[first]
    codes_x = np.zeros(x.size, dtype=np.int64)
    codes_x[xo[hx]] = np.cumsum(first) - 1
    codes_y = np.zeros(y.size, dtype=np.int64)
    codes_y[yo[hy]] = np.searchsorted(common, ys[hy])
    in_x = np.zeros(x.size, dtype=bool)
    in_x[xo[hx]] = True
    in_y = np.zeros(y.size, dtype=bool)
    in_y[yo[hy]] = True
    px = np.flatnonzero(in_x)
    py = np.flatnonzero(in_y)
    return px, py, _encode(codes_x[px]), _encode(codes_y[py])


def _restrict(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, str, str]:
    x = np.asarray(x)
    y = np.asarray(y)
    return restrict_sorted(x, np.argsort(x), y, np.argsort(y))


def _encode(ranks: np.ndarray) -> str:
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
    """LCS index pairs from the output of ``restrict_sorted``."""
    empty = np.zeros(0, dtype=np.intp)
    if not sx or not sy:
        return empty, empty
    blocks = [op for op in LCSseq.opcodes(sx, sy) if op.tag == "equal"]
    if not blocks:
        return empty, empty
    ax = np.concatenate([np.arange(b.src_start, b.src_end) for b in blocks])
    ay = np.concatenate([np.arange(b.dest_start, b.dest_end) for b in blocks])
    return px[ax].astype(np.intp), py[ay].astype(np.intp)
