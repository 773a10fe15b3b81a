"""Unique words of two books matched up to one edit, one to one (issue 29).

At 10 % character noise a 6-letter word stays intact with probability ~0.5; a garbled word
is most often one edit from its original. Each word and each one-letter deletion of it is a
key (its deletion neighbourhood, ``bookdup.editlookup``); two words meet where their keys
do, and only a match that is the one for both words counts, so the matching stays one to one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bookdup.editlookup import deletion_neighbourhoods

__all__ = ["MIN_EDIT_LENGTH", "one_edit_pairs"]

#: Shorter words' one-edit neighbourhoods hold too many other words.
MIN_EDIT_LENGTH = 5


def _keys(words: Sequence[str], positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deletion keys (hashes of a word, or it less one letter) of the words at ``positions``
    of ``MIN_EDIT_LENGTH`` letters or more, sorted, and the one position holding each: a key
    two words hold is dropped."""
    held = np.array([p for p in positions.tolist() if len(words[p]) >= MIN_EDIT_LENGTH], np.int64)
    keys, owner = deletion_neighbourhoods([words[p] for p in held.tolist()])
    order = np.argsort(keys, kind="stable")
    keys, at = keys[order], held[owner[order]] if held.size else held
    starts = np.flatnonzero(np.r_[keys.size > 0, keys[1:] != keys[:-1]])
    alone = np.diff(np.r_[starts, keys.size]) == 1  # a word's own keys are distinct
    return keys[starts[alone]], at[starts[alone]]


def _matched_once(first: np.ndarray) -> np.ndarray:
    """Which of the distinct pairs (their ``first`` items ascending) have a ``first`` item in
    no other pair."""
    starts = np.flatnonzero(np.r_[first.size > 0, first[1:] != first[:-1]])
    once = np.zeros(first.size, bool)
    once[starts[np.diff(np.r_[starts, first.size]) == 1]] = True
    return once


def one_edit_pairs(
    wx: Sequence[str], wy: Sequence[str], free_x: np.ndarray, free_y: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in x, in y) of the words of ``free_x`` / ``free_y`` that match exactly one
    word of the other side up to one edit (each side's match unique), ascending in x."""
    (kx, px), (ky, py) = _keys(wx, free_x), _keys(wy, free_y)
    _, ix, iy = np.intersect1d(kx, ky, assume_unique=True, return_indices=True)
    width = np.int64(max(int(py.max(initial=0)), 0) + 1)
    links = np.unique(px[ix] * width + py[iy])  # distinct (x, y) pairs, by x then y
    x, y = links // width, links % width
    once = _matched_once(x)  # an x reaching one y ...
    x, y = x[once], y[once]
    by_y = np.argsort(y, kind="stable")
    keep = np.sort(by_y[_matched_once(y[by_y])])  # ... that no other x reaches
    return x[keep].astype(np.int64), y[keep].astype(np.int64)
