"""Order evidence that survives OCR noise: unique words matched up to one edit (issue 29).

At 10 % character noise a 6-letter word stays intact with probability ~0.5, so a word two noisy
books share stays intact in both with ~0.25-0.5, and a noisy excerpt's exact order evidence
falls under the floor. Matching the unique words left unmatched up to one edit (their deletion
neighbourhoods) brings much of it back. The matching is one-to-one, so the permutation null
still holds: an unrelated pair gains chance items in random order, which lowers its z.
"""

from __future__ import annotations

import numpy as np

from bookdup.lcs import lis_keep
from bookdup.localscan import LocalEvidence, local_evidence
from bookdup.oneedit import one_edit_pairs
from bookdup.orderstat import order_evidence
from bookdup.scores import cs, its
from bookdup.verify import HasUnique, Verification, neighbour_agreement, shared_positions

__all__ = [
    "RESCUE_MIN_LOCAL",
    "RESCUE_MIN_Z",
    "exact_local",
    "noisy_verification",
]

#: The exact order z a pair needs before it is re-read with one-edit matches: an excerpt whose
#: exact matches hold no block (seed 67 at 10 %: z 2.3, one-edit block 7.8) is seen from 2 on,
#: where a few unrelated pairs in a hundred are re-read (~15 ms each) and none of 203,000 kept.
RESCUE_MIN_Z = 2.0
#: ... or the score of its densest ordered block of exact matches (``bookdup.localscan``):
#: unrelated generated pairs at 10 % noise reach 1.5 (a re-read, not a relation; 14,000 pairs,
#: `benchmarks/dense_blocks.py`), excerpts of 300-1,000 words whose order z stays under 4 1-9.
RESCUE_MIN_LOCAL = 1.0
#: ... over blocks of 3 exact matches in order or more: noise leaves an excerpt's block 5-9
#: exact ones of the 9-40 its one-edit matches give (``localscan.MIN_BLOCK`` is for those).
TRIGGER_BLOCK = 3


def exact_local(fa: HasUnique, fb: HasUnique) -> LocalEvidence:
    """The densest ordered block of the pair's exact matches (``bookdup.localscan``): only
    whether to re-read the pair, so the hashes are taken as distinct, as a book's unique
    words are (`noisy_verification` checks; the check cost twice the scan)."""
    nx, ny = len(fa.unique.hashes), len(fb.unique.hashes)
    return local_evidence(*shared_positions(fa, fb), nx, ny, min_lis=TRIGGER_BLOCK)


def _lis(ix: np.ndarray, iy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The longest chain of matches increasing in both books (``ix`` ascending)."""
    keep = lis_keep(iy)
    return ix[keep], iy[keep]


def _inside(ix: np.ndarray, iy: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    x0, x1, y0, y1 = box
    return (ix >= x0) & (ix < x1) & (iy >= y0) & (iy < y1)


def _through(
    ix: np.ndarray, iy: np.ndarray, box: tuple[int, int, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The longest chain through the box: before it in both books, in it, after it (the
    whole books' chain can pass beside a short block, along chance matches)."""
    x0, x1, y0, y1 = box
    parts = [(ix < x0) & (iy < y0), _inside(ix, iy, box), (ix >= x1) & (iy >= y1)]
    chains = [_lis(ix[p], iy[p]) for p in parts]
    return np.concatenate([c[0] for c in chains]), np.concatenate([c[1] for c in chains])


def noisy_verification(
    fa: HasUnique, fb: HasUnique, block: LocalEvidence | None = None, *, one_edit: bool = True
) -> Verification | None:
    """The same-language verification of noisy books over their exact and, with
    ``one_edit``, one-edit shared unique words (None when a book repeats an item or, for
    one-edit matches, lacks its words); ``block``: the dense block that is all the evidence
    there is (``LocalEvidence``), which the alignment then passes through (`_through`) when
    the whole books' chain holds under half of it."""
    ua, ub = fa.unique, fb.unique
    wx, wy = ua.words, ub.words
    hx, hy = np.asarray(ua.hashes), np.asarray(ub.hashes)
    if np.unique(hx).size < hx.size or np.unique(hy).size < hy.size:
        return None
    ix, iy = shared_positions(fa, fb)
    if one_edit:
        if wx is None or wy is None:
            return None
        free_x, free_y = np.setdiff1d(np.arange(hx.size), ix), np.setdiff1d(np.arange(hy.size), iy)
        fx, fy = one_edit_pairs(wx, wy, free_x, free_y)
        ix, iy = np.concatenate([ix, fx]), np.concatenate([iy, fy])
    nx, ny = hx.size, hy.size
    local = local_evidence(ix, iy, nx, ny) if block is None else block
    order = np.argsort(ix)
    ix, iy = ix[order], iy[order]
    ax, ay = _lis(ix, iy)
    if block is not None and 2 * _inside(ax, ay, block.box).sum() < block.lis:
        ax, ay = _through(ix, iy, block.box)
    pages = (np.asarray(ua.pages)[ax], np.asarray(ub.pages)[ay])
    cx, cy = getattr(ua, "context", None), getattr(ub, "context", None)
    neighbours = None if cx is None or cy is None else neighbour_agreement(cx[ax], cy[ay])
    lcs = int(ax.size)
    return Verification(
        nx,
        ny,
        int(ix.size),
        lcs,
        cs(lcs, nx, ny),
        its(lcs, nx, ny),
        lambda: pages,
        order_evidence(lcs, int(ix.size)),
        neighbours,
        lambda: (ax, ay),
        local,
    )
