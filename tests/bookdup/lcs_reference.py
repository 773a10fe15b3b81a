"""Whole-sequence LCS of two hash sequences, the references the tests compare the core with.

Built on the core's pieces (``bookdup.lcs``: `lis_keep`, `encode_ranks`, `align_restricted`);
the core itself restricts and encodes inside the verification (``bookdup.verify``), so these
wrappers are used by tests only. `lis_indices` and `lis_keep_python` are the Python LIS the
compiled `bookdup.lcs.lis_keep` replaced (issue 28): its tests hold it to the same indices.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
from rapidfuzz.distance import LCSseq

from bookdup.lcs import align_restricted, encode_ranks, lis_keep

__all__ = [
    "align_distinct",
    "align_general",
    "lcs_distinct",
    "lcs_general",
    "lis_indices",
    "lis_keep_python",
    "lis_length",
]


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
    """Indices into seq of one longest strictly increasing subsequence of non-negative ints
    (patience; appending past the last pile tested first)."""
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


def lis_keep_python(seq: np.ndarray) -> np.ndarray:
    """``lis_indices`` with the separators (in every LIS of distinct items) taken in numpy
    and only the other items through the loop."""
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


def lcs_general(x: np.ndarray, y: np.ndarray) -> int:
    """|LCS(x, y)| for sequences that may repeat items (bit-parallel, rapidfuzz LCSseq)."""
    _, _, sx, sy = _restrict(x, y)
    if not sx:
        return 0
    return int(LCSseq.similarity(sx, sy))


def align_general(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (into x, into y) of one LCS of sequences that may repeat items."""
    return align_restricted(*_restrict(x, y))
