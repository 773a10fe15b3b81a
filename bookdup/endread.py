"""Whether a book's open end is text the other book holds: its words read again beside it.

A book the other nearly contains may hold no aligned word at one end for two reasons: noise
garbled the end of a true part, or the book has text of its own there (an anthology holding
88-93 % of a volume). Counted in mean steps between aligned words the two overlap (true parts
up to 13 steps at 10 % noise, such anthologies 7-14). What tells them apart is the end's own
words: matched exactly or up to one edit against the other book's unique words just beside
the shared text, a true part's end of 8 steps or more finds 0.86 matches in order a step or
more, an anthology's 0.10-0.15 — chance (issue 29, stop 59; docs/EVALUATION.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from bookdup.lcs import lis_keep
from bookdup.oneedit import one_edit_pairs

if TYPE_CHECKING:
    from bookdup.verify import HasUnique

#: The other book's window is the end's length scaled by the alignment's slope, this much
#: longer, and ``WINDOW_SLACK_WORDS`` more: the end's text, if the other book holds it, lies
#: there however its pages were set.
WINDOW_SLACK = 1.5
WINDOW_SLACK_WORDS = 5


def reread_end(
    this: HasUnique,
    other: HasUnique,
    items: tuple[np.ndarray, np.ndarray],
    end: tuple[int, int],
) -> int:
    """Matches in order between ``this`` book's unique words at positions [lo, hi) (``end``:
    before its first aligned word or after its last) and the ``other`` book's window beside
    the shared text; ``items``: the aligned positions in runs, in this book and in the other.
    Exact matches, and one-edit ones where both books carry their words."""
    mine, theirs = (np.asarray(i, np.int64) for i in items)
    lo, hi = end
    if mine.size == 0 or hi <= lo:
        return 0
    slope = (np.ptp(theirs) + 1) / (np.ptp(mine) + 1)
    width = math.ceil((hi - lo) * slope * WINDOW_SLACK) + WINDOW_SLACK_WORDS
    n_other = len(other.unique.hashes)
    if lo == 0:  # a head: the other book's text just before its first aligned word
        anchor = int(theirs[np.argmin(mine)])
        window = np.arange(max(anchor - width, 0), anchor)
    else:
        anchor = int(theirs[np.argmax(mine)])
        window = np.arange(anchor + 1, min(anchor + 1 + width, n_other))
    return _matches_in_order(this, other, np.arange(lo, hi), window)


def _matches_in_order(this: HasUnique, other: HasUnique, xs: np.ndarray, ys: np.ndarray) -> int:
    """The longest chain of matches between this book's positions ``xs`` and the other's
    ``ys``, increasing in both (exact, then up to one edit among the words left)."""
    if xs.size == 0 or ys.size == 0:
        return 0
    hx = np.asarray(this.unique.hashes)[xs]
    hy = np.asarray(other.unique.hashes)[ys]
    _, ix, iy = np.intersect1d(hx, hy, return_indices=True)
    px, py = xs[ix], ys[iy]
    wx, wy = this.unique.words, other.unique.words
    if wx is not None and wy is not None:
        ex, ey = one_edit_pairs(wx, wy, np.setdiff1d(xs, px), np.setdiff1d(ys, py))
        px, py = np.concatenate([px, ex]), np.concatenate([py, ey])
    order = np.argsort(px, kind="stable")
    return int(lis_keep(py[order]).size)


def end_rereads(
    fa: HasUnique, fb: HasUnique, items: tuple[np.ndarray, np.ndarray]
) -> Callable[[bool, int, int], int]:
    """``reread_end`` for the pair: (of x?, lo, hi) -> matches in order; ``items``: the
    aligned positions in shared runs, in x and in y."""

    def reread(in_x: bool, lo: int, hi: int) -> int:
        if in_x:
            return reread_end(fa, fb, items, (lo, hi))
        return reread_end(fb, fa, (items[1], items[0]), (lo, hi))

    return reread
