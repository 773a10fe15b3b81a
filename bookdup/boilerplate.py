"""Boilerplate out before scoring: words shared by many books, and verbatim text across languages.

Two kinds of text carry no evidence about a pair and are removed from both sequences before
alignment:

* words whose hash is held by more than half the books of the collection (a publisher's
  licence page, a digitiser's notice): the collection says they are everywhere
  (``common_df``, ``drop_common_words``);
* stretches of a book made almost only of words that many books of the collection hold as
  unique words (``frequent``: about 15 % of the books or more): a licence or a publisher's
  notice, as many books carry it, word for word (``boilerplate_mask``). Prose holds such
  words too, but scattered among rarer ones; measured against Project Gutenberg's own
  START/END markers on the 80 real books, 97 % of what this removes is PG header or footer
  and it finds 94 % of them (docs/EVALUATION.md);
* text that two books in *different languages* share verbatim, word for word in the same
  order: a translation shares names and a few cognates, scattered, but never pages of
  identical words — those are front or back matter in a third language (the English Project
  Gutenberg licence in a German and a French book) and would survive "translation" on both
  sides as kept words (``verbatim_runs``). Found from the two books themselves, so it works for
  a pair compared alone as well as inside the dedup job.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from bookdup.arrays import isin_sorted
from bookdup.features import BookFeatures
from bookdup.lcs import lis_keep
from bookdup.signals import SIGNAL_PARAMS
from bookdup.uniquewords import UniqueWords

__all__ = [
    "FREQUENT_DF_FRACTION",
    "MIN_FREQUENT_DF",
    "boilerplate_mask",
    "common_df",
    "drop_common_words",
    "drop_positions",
    "frequent_df",
    "verbatim_runs",
    "verbatim_runs_sorted",
]

#: A verbatim run: at least this many identical unique words in the same order ...
MIN_RUN = 12
#: ... each within this many unique words of the previous one in both books.
MAX_GAP = 12


#: A unique word held by more than this share of the collection's books is everywhere, and
#: dropped from verification ...
COMMON_DF_FRACTION = 0.5
#: ... or by more than this many books, when more: the candidate queries' stop-list floor
#: (``store.candidates.CandidateParams.min_max_df``), so up to 100 books verification drops
#: what it always did. A fraction that cut words held by 5 % of the books, the queries' own,
#: took 30 % of each book's words at 1,000 generated books of 50K-100K words and left 180 of
#: 334 translations UNRELATED (a pair at z 69 fell to 8.6; docs/EVALUATION.md).
MIN_COMMON_DF = 50
#: A word is "frequent" when at least this share of the collection's books hold it as a
#: unique word ...
FREQUENT_DF_FRACTION = 0.15
#: ... and never fewer books than this (so that a handful of editions of one work, which
#: share all their text, never make it boilerplate).
MIN_FREQUENT_DF = 10
#: A boilerplate stretch: a window of this many unique words at least this dense in
#: frequent words, stretches closer than ``_CLOSE`` merged, kept from ``_MIN_LEN`` words.
_WINDOW, _DENSITY, _CLOSE, _MIN_LEN = 25, 0.5, 60, 40
#: Boilerplate is short front or back matter (a licence, a digitiser's notice): on the 80
#: real books its stretches add up to 367 unique words at most, 38 % of the shortest book.
#: Stretches adding up to more than ``_MAX_TOTAL`` unique words or ``_MAX_SHARE`` of the book
#: are the book's own text, held by many copies of it (a work with dozens of editions): then
#: nothing of the book is boilerplate.
_MAX_TOTAL, _MAX_SHARE = 600, 0.5
#: ... and a stretch is boilerplate only when it is this many times denser in frequent words
#: than the rest of its book: a licence or header 1.8-20x on the 80 real books; the edge of a
#: noisy copy of a much-copied work 1.2x, its frequent words spread evenly through it.
_CONTRAST = 1.5
#: A stretch starting in the back ``1 - _BACK`` of the sequence runs on to its end, one ending
#: in its front ``_FRONT`` back to its start (``boilerplate_mask``): the shares of the signals'
#: frames (``bookdup.signals.SignalParams.frame_back`` / ``frame_front``), read from there.
_FRONT, _BACK = SIGNAL_PARAMS.frame_front, SIGNAL_PARAMS.frame_back


def common_df(n_books: int) -> int:
    """Document frequency above which a unique word is dropped from verification: a share of
    the collection that does not shrink into its vocabulary as the collection grows."""
    return max(MIN_COMMON_DF, math.ceil(COMMON_DF_FRACTION * n_books))


def frequent_df(n_books: int) -> int:
    """Document frequency from which a unique word counts as frequent in the collection."""
    return max(MIN_FREQUENT_DF, int(FREQUENT_DF_FRACTION * n_books))


def boilerplate_mask(hashes: np.ndarray, frequent: np.ndarray) -> np.ndarray:
    """Positions of a unique-word sequence inside dense stretches of ``frequent`` words.

    A stretch in the back of the book is extended to its end, one in the front to its start:
    a licence or a header runs to the edge of the file, but only its densest part passes the
    density test, and how dense it is depends on the book (a short book holds more of the
    licence's words as unique words, so its licence is sparser in frequent words). Cutting
    only the middle out of a licence that two books share leaves its ends behind, one of them
    without its partner in the other book: the shared remnant no longer reaches the edge of
    both books, is no longer recognised as boilerplate by ``bookdup.signals`` (a frame), and
    is taken for shared text 200 pages off the page mapping.

    Only front and back matter is boilerplate: a dense stretch that reaches neither edge is
    the book's own text, which the collection holds in many copies (a 5 %-noise volume of a
    work with 20 variants had 45 % of its words cut out in pieces mid-book). A book whose edge
    stretches are too long to be front or back matter is such a text too, and none of it is
    masked (a clean edition of a work with 24 variants lost 65 % of its words and every
    edition class, docs/EVALUATION.md).
    """
    out = np.zeros(hashes.size, dtype=bool)
    if hashes.size < _WINDOW or frequent.size == 0:
        return out
    hit = isin_sorted(hashes, frequent).astype(np.float64)
    dense = np.convolve(hit, np.ones(_WINDOW) / _WINDOW, mode="same") >= _DENSITY
    edges = np.diff(np.concatenate([[0], dense.astype(np.int8), [0]]))
    stretches: list[list[int]] = []
    starts, ends = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    for start, end in zip(starts, ends, strict=True):
        if stretches and start - stretches[-1][1] <= _CLOSE:
            stretches[-1][1] = end
        else:
            stretches.append([start, end])
    n = hashes.size
    spans: list[tuple[int, int]] = []
    for start, end in stretches:
        if end - start >= _MIN_LEN:
            if start >= _BACK * n:
                end = n
            if end <= _FRONT * n:
                start = 0
            if start == 0 or end == n:  # front or back matter; dense text mid-book is text
                spans.append((start, end))
                out[start:end] = True
    rest = float(hit[~out].mean()) if (~out).any() else 0.0
    for start, end in spans:  # as dense as the rest of the book: the book's own text
        if hit[start:end].mean() < _CONTRAST * rest:
            out[start:end] = False
    masked = int(out.sum())
    if masked > _MAX_TOTAL or masked > _MAX_SHARE * n:
        out[:] = False
    return out


def drop_common_words(
    features: BookFeatures, common: np.ndarray, frequent: np.ndarray | None = None
) -> BookFeatures:
    """A copy of ``features`` whose unique-word sequence skips the hashes in sorted ``common``
    and, given the collection's sorted ``frequent`` words, its boilerplate stretches."""
    hashes = features.unique.hashes
    if hashes.size == 0:
        return features
    keep = np.ones(hashes.size, dtype=bool)
    if frequent is not None and frequent.size:
        keep &= ~boilerplate_mask(hashes, frequent)
    if common.size:
        keep &= ~isin_sorted(hashes, common)
    return drop_positions(features, keep)


def drop_positions(features: BookFeatures, keep: np.ndarray) -> BookFeatures:
    """A copy of ``features`` keeping only the unique words where ``keep`` is True."""
    if keep.all():
        return features
    words = features.unique.words
    if words is not None:
        words = [w for w, k in zip(words, keep.tolist(), strict=True) if k]
    stems, context = features.unique.stems, features.unique.context
    unique = UniqueWords(
        words,
        features.unique.hashes[keep],
        features.unique.pages[keep],
        None if stems is None else stems[keep],
        None if context is None else context[keep],
    )
    return dataclasses.replace(features, unique=unique, masked_from_pages=features.text_pages)


def verbatim_runs(
    hx: np.ndarray, hy: np.ndarray, *, min_run: int = MIN_RUN, max_gap: int = MAX_GAP
) -> tuple[np.ndarray, np.ndarray]:
    """Masks (over x, over y) of the spans two distinct-item sequences share verbatim.

    The shared items are aligned (longest increasing subsequence) and cut into runs where
    consecutive aligned items are more than ``max_gap`` positions apart in either sequence;
    a run of ``min_run`` items or more masks its whole span in both sequences.
    """
    if hx.size == 0 or hy.size == 0:
        return np.zeros(hx.size, bool), np.zeros(hy.size, bool)
    ox, oy = np.argsort(hx, kind="stable"), np.argsort(hy, kind="stable")
    return verbatim_runs_sorted(ox, hx[ox], oy, hy[oy], min_run=min_run, max_gap=max_gap)


def verbatim_runs_sorted(
    ox: np.ndarray,
    sx: np.ndarray,
    oy: np.ndarray,
    sy: np.ndarray,
    *,
    min_run: int = MIN_RUN,
    max_gap: int = MAX_GAP,
) -> tuple[np.ndarray, np.ndarray]:
    """``verbatim_runs`` from each sequence's stable argsort ``o`` and sorted items ``s``
    (the verifier keeps both per book, so a pair does not sort its books again)."""
    mx, my = np.zeros(sx.size, bool), np.zeros(sy.size, bool)
    if sx.size == 0 or sy.size == 0:
        return mx, my
    pos = np.minimum(np.searchsorted(sy, sx), sy.size - 1)
    hit = sy[pos] == sx
    ix, iy = ox[hit], oy[pos[hit]]
    if ix.size < min_run:
        return mx, my
    order = np.argsort(ix)
    ix, iy = ix[order], iy[order]
    keep = lis_keep(iy)
    ix, iy = ix[keep], iy[keep]
    brk = (np.diff(ix) > max_gap) | (np.diff(iy) > max_gap)
    starts = np.concatenate([[0], np.flatnonzero(brk) + 1])
    ends = np.concatenate([starts[1:], [ix.size]])
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        if e - s >= min_run:
            mx[ix[s] : ix[e - 1] + 1] = True
            my[iy[s] : iy[e - 1] + 1] = True
    return mx, my
