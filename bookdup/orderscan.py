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

Each window costs one bit-parallel LCS over the restricted items (~1K); the shuffles that
calibrate a window's null are only run for windows whose uncalibrated z (an upper bound:
repeats only add chance matches) could beat the best so far and the caller's floor.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
from rapidfuzz.distance import LCSseq

from bookdup.lcs import encode_ranks
from bookdup.orderstat import OrderEvidence, order_evidence, shuffled_evidence

__all__ = ["WINDOW_FRACTIONS", "ScanInput", "scan_windows", "windows"]

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


def _window_evidence(
    gx: np.ndarray, cx: np.ndarray, cy: np.ndarray, floor: float
) -> OrderEvidence | None:
    """z of one window's restricted sequences (None when it cannot reach ``floor``)."""
    shared_codes = np.intersect1d(cx, cy)
    if shared_codes.size == 0:
        return None
    kx, ky = np.isin(cx, shared_codes), np.isin(cy, shared_codes)
    gx, cx, cy = gx[kx], cx[kx], cy[ky]
    shared = int(shared_codes.size)
    sy = encode_ranks(cy)
    lcs = int(LCSseq.similarity(encode_ranks(cx), sy))
    bound = order_evidence(lcs, shared)
    if bound.z < floor:
        return None
    return shuffled_evidence(
        lcs,
        shared,
        gx,
        lambda o: int(LCSseq.similarity(encode_ranks(cx[o]), sy)),
        seed=lcs * 7919 + shared,
    )


def scan_windows(
    data: ScanInput, whole: OrderEvidence, floor: float | None = None
) -> OrderEvidence:
    """The most significant window's evidence (``whole``, the full pair's, if none beats it).

    ``floor``: windows whose z cannot reach it are not calibrated (the dedup job's fast path).
    """
    best = whole
    on_x = data.nx >= data.ny
    pos, n = (data.gx, data.nx) if on_x else (data.py, data.ny)
    for start, end in windows(n):
        if (start, end) == (0, n):
            continue
        inside = (pos >= start) & (pos < end)
        if not inside.any():
            continue
        if on_x:
            gx, cx, cy = data.gx[inside], data.cx[inside], data.cy
        else:
            gx, cx, cy = data.gx, data.cx, data.cy[inside]
        evidence = _window_evidence(gx, cx, cy, max(best.z, floor if floor is not None else -1e9))
        if evidence is not None and evidence.z > best.z:
            side = "x" if on_x else "y"
            best = replace(evidence, window=(side, start / n, end / n))
    return best
