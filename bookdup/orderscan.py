"""Where in the bigger book is the translation? The order statistic over windows of it.

A translated part of a bigger book (three chapters of a novel, one play of a collected
works) meets the whole book's shared words, and the words outside the translated part match
only by chance: they add to ``n`` and little to |LCS|, so the whole-book z is diluted (the
three Tom Sawyer chapters against the whole German book: z 5 over 901 shared stems, against
24 within the first eighth of the German book). So the statistic is also computed over
windows of the bigger sequence — its whole, halves, quarters, eighths and sixteenths, each
overlapping its neighbours by half — the smaller one kept whole, and the most significant
window is the evidence (and says which part of the bigger book the smaller one translates).

Taking the best of 31 windows lifts the unrelated pairs' z a little (multiple testing): on
the 1,998 unrelated cross-language pairs of the real books the maximum moves from 4.1 to
about 5 (docs/EVALUATION.md), which the classifier's TRANSLATION edges allow for.

Every window's |LCS| comes from the compiled kernel (``bookdup.bitlcs``): the windows that
start at the same item are read off one pass over the bigger book's items; the shuffles that
calibrate a null (8 LCS each) are run for one window only, the one whose estimated z is the
highest (``scan_windows``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from bookdup.bitlcs import Pattern, lcs_ranges, lcs_stream, range_counts
from bookdup.orderstat import OrderEvidence, lis_null_mean, lis_null_sd, shuffled_evidence

__all__ = [
    "WINDOW_FRACTIONS",
    "ScanInput",
    "WindowCounts",
    "scan_windows",
    "window_counts",
    "windows",
    "worth_calibrating",
]

#: Window sizes as fractions of the bigger sequence; each slides by half its size.
WINDOW_FRACTIONS = (1.0, 0.5, 0.25, 0.125, 0.0625)


def windows(n: int, fractions: tuple[float, ...] = WINDOW_FRACTIONS) -> Iterator[tuple[int, int]]:
    """[start, end) position windows over a sequence of ``n``: every size, half-overlapping."""
    seen: set[tuple[int, int]] = set()
    for fraction in fractions:
        width = max(1, round(n * fraction))
        step = max(1, width // 2)
        for start in range(0, max(n - width, 0) + 1, step):
            window = (start, min(n, start + width))
            if window not in seen:
                seen.add(window)
                yield window


@dataclass(frozen=True)
class ScanInput:
    """Both sequences restricted to their shared items, as the verifier holds them.

    ``gx``: the source word (position in x's unique words) of each x item; ``py``: the
    position of each y item in y's unique words; ``cx``, ``cy``: the items renumbered.
    """

    gx: np.ndarray
    cx: np.ndarray
    py: np.ndarray
    cy: np.ndarray
    nx: int
    ny: int


def _restricted(
    gx: np.ndarray, cx: np.ndarray, cy: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Both sides cut to the codes (< ``k``) they share, and how many they share."""
    in_x, in_y = np.zeros(k, dtype=bool), np.zeros(k, dtype=bool)
    in_x[cx], in_y[cy] = True, True
    both = in_x & in_y
    kx, ky = both[cx], both[cy]
    return gx[kx], cx[kx], cy[ky], int(np.count_nonzero(both))


def _calibrated(gx: np.ndarray, cx: np.ndarray, cy: np.ndarray, lcs: int, n: int) -> OrderEvidence:
    pattern = Pattern(cy)
    return shuffled_evidence(lcs, n, gx, lambda o: lcs_stream(pattern, cx[o]), seed=lcs * 7919 + n)


def _pairs(cx: np.ndarray, cy: np.ndarray, k: int) -> int:
    """Matching (x item, y item) pairs: what chance alignments are drawn from when items
    repeat (n distinct items give n pairs; the null |LCS| grows like 2·sqrt(pairs))."""
    return int((np.bincount(cx, minlength=k).astype(np.int64) * np.bincount(cy, minlength=k)).sum())


@lru_cache(maxsize=4096)
def _spans(n: int) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The windows a scan reads (all but the whole), as tuples and as a [start, end] array."""
    spans = [w for w in windows(n) if w != (0, n)]
    return spans, np.array(spans, dtype=np.int64).reshape(-1, 2)


@dataclass(frozen=True)
class WindowCounts:
    """What a scan reads off the compiled kernel for every window (``window_counts``): the
    shared items, matching pairs and |LCS| of each. They do not depend on the whole pair's
    null, so one pass serves every null a decision tries (``scan_windows``'s ``counts``)."""

    on_x: bool
    n: int
    k: int
    lo: np.ndarray
    hi: np.ndarray
    shared: np.ndarray
    pairs: np.ndarray
    lcs: np.ndarray
    #: matching pairs of the whole restricted pair
    whole_pairs: int


def window_counts(data: ScanInput) -> WindowCounts:
    """Every window's shared items, matching pairs and |LCS| (the costly part of a scan)."""
    on_x = data.nx >= data.ny
    pos, n = (data.gx, data.nx) if on_x else (data.py, data.ny)
    stream, fixed = (data.cx, data.cy) if on_x else (data.cy, data.cx)
    k = int(max(data.cx.max(initial=-1), data.cy.max(initial=-1))) + 1
    _, bounds = _spans(n)
    lo, hi = np.searchsorted(pos, bounds[:, 0]), np.searchsorted(pos, bounds[:, 1])
    shared, pairs = range_counts(stream, np.bincount(fixed, minlength=k), lo, hi)
    lcs = lcs_ranges(Pattern(fixed, k), stream, lo, hi)
    return WindowCounts(on_x, n, k, lo, hi, shared, pairs, lcs, _pairs(data.cx, data.cy, k))


def _best_window(counts: WindowCounts, whole: OrderEvidence) -> tuple[float, int] | None:
    """(estimated z, index) of the window ranked first under ``whole``'s null, if any."""
    whole_mean = whole.null_mean if whole.shuffles else lis_null_mean(whole.n)
    lift = whole_mean / max(lis_null_mean(counts.whole_pairs), 1.0)
    shared, pairs, lcs = counts.shared, counts.pairs, counts.lcs
    best: tuple[float, int] | None = None
    for i in np.flatnonzero(shared).tolist():
        mean = max(lis_null_mean(int(shared[i])), lift * lis_null_mean(int(pairs[i])))
        estimate = (int(lcs[i]) - mean) / lis_null_sd(int(shared[i]))
        if best is None or estimate > best[0]:
            best = (estimate, i)
    return best


def worth_calibrating(
    counts: WindowCounts, whole: OrderEvidence, floor: float | None = None
) -> bool:
    """Whether ``scan_windows`` with these counts would calibrate a window (else it returns
    ``whole`` unchanged)."""
    best = _best_window(counts, whole)
    limit = max(whole.z, floor if floor is not None else -np.inf)
    return best is not None and best[0] > limit


def scan_windows(
    data: ScanInput,
    whole: OrderEvidence,
    floor: float | None = None,
    counts: WindowCounts | None = None,
) -> OrderEvidence:
    """The most significant window's evidence (``whole``, the full pair's, if none beats it).

    Every window's |LCS| is computed; its null is first estimated as the whole pair's
    calibrated mean scaled by 2·sqrt(matching pairs) of the window against the whole (which
    ranks the windows as their calibrated z does: correlation 0.99 on real pairs), and only
    the window ranked first is calibrated by shuffling — that calibrated z is the window's
    evidence. Without a calibrated whole the distinct-item mean stands in (a lower null, so
    a higher estimate). ``floor``: a best window whose estimate cannot reach it is not
    calibrated (the dedup job's fast path). ``counts``: ``window_counts(data)`` if already
    computed.
    """
    if counts is None:
        counts = window_counts(data)
    best = _best_window(counts, whole)
    limit = max(whole.z, floor if floor is not None else -np.inf)
    if best is None or best[0] <= limit:
        return whole
    j = best[1]
    on_x, n, k = counts.on_x, counts.n, counts.k
    inside = slice(counts.lo[j], counts.hi[j])
    if on_x:
        gx, cx, cy = data.gx[inside], data.cx[inside], data.cy
    else:
        gx, cx, cy = data.gx, data.cx, data.cy[inside]
    gx, cx, cy, _ = _restricted(gx, cx, cy, k)
    evidence = _calibrated(gx, cx, cy, int(counts.lcs[j]), int(counts.shared[j]))
    if evidence.z <= whole.z:
        return whole
    start, end = _spans(n)[0][j]
    return replace(evidence, window=("x" if on_x else "y", start / n, end / n))
