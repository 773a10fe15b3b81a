"""DUPNIQ / TRANS scores over unique-word sequences and the |LCS| lower bounds used for pruning.

``cs`` (correlation score) and ``its`` (information-theoretic score) are Eq. 1 and Eq. 4 of DUPNIQ
(Yalniz, Can & Manmatha, CIKM 2011), reused unchanged as TRANS-cs / TRANS-its (SIGIR 2012).
Both grow monotonically with |LCS| for fixed |X|, |Y|, so a score threshold turns into a minimum
|LCS|; a pair whose shared-word count is below it can be rejected without any alignment.
"""

from __future__ import annotations

import math

__all__ = ["cs", "its", "min_lcs_for_cs", "min_lcs_for_its"]


def cs(lcs: int, nx: int, ny: int) -> float:
    """|LCS| / sqrt(|X||Y|); 0 when either sequence is empty (nothing can be shared)."""
    if nx <= 0 or ny <= 0:
        return 0.0
    return lcs / math.sqrt(nx * ny)


def its(lcs: int, nx: int, ny: int) -> float:
    """log|LCS| / log(|X| + |Y| - |LCS|).

    Edge case: 0 when |LCS| <= 1. The papers define the score as 0 when nothing is shared; with a
    single shared word log|LCS| is already 0, except for two one-word sequences where the formula
    is 0/0 — a one-word match carries no evidence of duplication, so it also scores 0.
    """
    if lcs <= 1:
        return 0.0
    return math.log(lcs) / math.log(nx + ny - lcs)


def min_lcs_for_cs(t: float, nx: int, ny: int) -> int:
    """Smallest L with cs(L, nx, ny) >= t, i.e. ceil(t * sqrt(nx * ny)).

    The ceiling is corrected by one step either way so that the bound agrees exactly with
    ``cs`` under floating point (L - 1 fails, L passes). May exceed min(nx, ny): unreachable.
    """
    if t <= 0.0:
        return 0
    if nx <= 0 or ny <= 0:
        return 1
    lo = math.ceil(t * math.sqrt(nx * ny))
    while lo > 0 and cs(lo - 1, nx, ny) >= t:
        lo -= 1
    while cs(lo, nx, ny) < t:
        lo += 1
    return lo


def min_lcs_for_its(t: float, nx: int, ny: int) -> int:
    """Smallest L with its(L, nx, ny) >= t; min(nx, ny) + 1 when no L <= min(nx, ny) reaches t.

    its is increasing in L on [2, min(nx, ny)] (the numerator grows, the denominator shrinks), so
    the bound is the root of L = (nx + ny - L)^t. A fixed-point iteration converges in a few steps
    (the map's slope t (N - L)^(t-1) is far below 1); the integer answer is then checked against
    ``its`` itself so that it is exact (L - 1 fails, L passes) under floating point.
    """
    if t <= 0.0:
        return 0
    m = min(nx, ny)
    if m < 2 or its(m, nx, ny) < t:
        return max(m, 0) + 1
    n = nx + ny
    est = n**t
    for _ in range(4):
        est = max(n - est, 1.0) ** t
    lo = min(max(math.ceil(est), 2), m)
    while lo > 2 and its(lo - 1, nx, ny) >= t:
        lo -= 1
    while its(lo, nx, ny) < t:
        lo += 1
    return lo
