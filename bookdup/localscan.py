"""Shared text too short for the whole books' order statistic: the densest ordered block.

``bookdup.orderstat`` reads the order of every word two books share. A few hundred words
shared at 10 % character noise (a 1,500-word book's excerpt in a 12,000-word anthology) keep
7-20 of their unique words intact and in order, among 60-300 the books share by chance, and the
whole pair's z stays under 4. Inside the excerpt's stretch of each book, though, chance puts
well under one shared word. So the matches are read in boxes, a window of each book (whole,
halves, ... 1/32, each overlapping its neighbours by half): in a box, the |LIS| of its matches
against the matches chance puts there, λ = n · (the box's share of x) · (its share of y), as
P(Poisson(λ) ≥ |LIS|) (chance matches in order are no more than chance matches), times the
number of boxes (Bonferroni). The score is −log10 of that: the unrelated pairs of generated
books at 10 % noise stay under 1.5 (22,000 pairs), excerpts of 300-1,000 words reach 4-16
(issue 29; docs/EVALUATION.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

__all__ = [
    "MIN_BLOCK",
    "NO_EVIDENCE",
    "WINDOW_FRACTIONS",
    "LocalEvidence",
    "local_evidence",
    "windows",
]

#: Window sizes as fractions of a book's unique words; each slides by half its size.
WINDOW_FRACTIONS = (1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125)
#: A block holds this many matches in order at least, as a shared run does
#: (``SignalParams.min_run_words``): two volumes of one work share their title page, 4-7
#: words in order where chance puts none (generated seeds 62, 67 at 5 % noise).
MIN_BLOCK = 8


@dataclass(frozen=True)
class LocalEvidence:
    """The densest ordered block of a pair's matches.

    ``score``: −log10 of the chance of so many matches in order in some box (0: none beats
    chance); ``lis``: the matches in order there; ``box``: [x0, x1) × [y0, y1) in unique-word
    positions.
    """

    score: float
    lis: int
    box: tuple[int, int, int, int]


NO_EVIDENCE = LocalEvidence(0.0, 0, (0, 0, 0, 0))


@lru_cache(maxsize=4096)
def windows(n: int) -> np.ndarray:
    """[start, end) windows over ``n`` positions, every size of ``WINDOW_FRACTIONS``, as rows."""
    out: set[tuple[int, int]] = set()
    for fraction in WINDOW_FRACTIONS:
        width = max(1, round(n * fraction))
        step = max(1, width // 2)
        out.update((s, min(n, s + width)) for s in range(0, max(n - width, 0) + 1, step))
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 2)


@njit(cache=True)
def _lis_length(values: np.ndarray) -> int:
    """Length of the longest strictly increasing subsequence (patience sorting)."""
    tails = np.empty(values.size, np.int64)
    k = 0
    for v in values:
        lo, hi = 0, k
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        tails[lo] = v
        k = max(k, lo + 1)
    return k


@njit(cache=True)
def _log_tail(k: int, lam: float) -> float:
    """ln P(Poisson(lam) ≥ k); 0 (certain) when k ≤ lam, which no evidence needs closer."""
    if k <= lam:
        return 0.0
    term = math.exp(-lam + k * math.log(lam) - math.lgamma(k + 1.0))
    total = 0.0
    j = k
    while term > 1e-15 * total or total == 0.0:
        total += term
        j += 1
        term *= lam / j
    return math.log(total)


@njit(cache=True)
def _scan(
    px: np.ndarray, py: np.ndarray, wx: np.ndarray, wy: np.ndarray, nx: int, ny: int, min_lis: int
) -> tuple[float, int, int, int]:
    """Best (ln p, |LIS|, x window, y window) over the boxes holding ``min_lis`` matches in
    order at least; ``px`` ascending.

    A box's |LIS| is at most its count of matches, and the tail falls as |LIS| grows, so a box
    whose count could not beat the best so far is skipped before its LIS: counted on the x
    window's matches sorted by y, it costs two binary searches, where the LIS read every match."""
    n = px.size
    best, best_lis, bi, bj = 0.0, 0, -1, -1
    buf = np.empty(n, np.int64)
    for i in range(wx.shape[0]):
        lo = np.searchsorted(px, wx[i, 0])
        hi = np.searchsorted(px, wx[i, 1])
        if hi - lo < min_lis:
            continue
        share_x = (wx[i, 1] - wx[i, 0]) / nx
        by_y = np.sort(py[lo:hi])
        for j in range(wy.shape[0]):
            count = np.searchsorted(by_y, wy[j, 1]) - np.searchsorted(by_y, wy[j, 0])
            if count < min_lis:
                continue
            lam = n * share_x * (wy[j, 1] - wy[j, 0]) / ny
            if _log_tail(count, lam) >= best:
                continue
            c = 0
            for t in range(lo, hi):
                if wy[j, 0] <= py[t] < wy[j, 1]:
                    buf[c] = py[t]
                    c += 1
            k = _lis_length(buf[:c])
            if k < min_lis:
                continue
            log_p = _log_tail(k, lam)
            if log_p < best:
                best, best_lis, bi, bj = log_p, k, i, j
    return best, best_lis, bi, bj


def local_evidence(
    px: np.ndarray, py: np.ndarray, nx: int, ny: int, min_lis: int = MIN_BLOCK
) -> LocalEvidence:
    """The densest ordered block of the matches (``px``, ``py``: positions in x's and y's
    ``nx`` / ``ny`` unique words, one-to-one, any order) among the boxes holding at least
    ``min_lis`` of them in order."""
    if px.size < min_lis or nx < 1 or ny < 1:
        return NO_EVIDENCE
    order = np.argsort(px, kind="stable")
    x, y = np.asarray(px, np.int64)[order], np.asarray(py, np.int64)[order]
    wx, wy = windows(int(nx)), windows(int(ny))
    log_p, lis, i, j = _scan(x, y, wx, wy, int(nx), int(ny), max(1, min_lis))
    score = -(log_p + math.log(wx.shape[0] * wy.shape[0])) / math.log(10.0)
    if i < 0 or score <= 0.0:
        return NO_EVIDENCE
    box = (int(wx[i, 0]), int(wx[i, 1]), int(wy[j, 0]), int(wy[j, 1]))
    return LocalEvidence(round(score, 4), int(lis), box)
