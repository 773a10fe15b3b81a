"""Pair verification: |LCS| of unique-word sequences, scores, and the page alignment.

Order of work per pair, cheapest first (DUPNIQ §4.2, TRANS §3.4):

1. the score threshold gives a minimum |LCS| (``bookdup.scores``); |LCS| <= |X ∩ Y| when one
   side has distinct items, so a pair sharing fewer items is rejected without alignment;
2. |X ∩ Y| is first bounded from above with per-book bitsets (Python ints: one AND and one
   popcount per level, ~1 µs) and only then counted exactly on sorted hashes;
3. the LCS: longest increasing subsequence when both sides are distinct, bit-parallel LCS when
   the source was translated (items repeat).

Per-book preprocessing (sorting, bitsets, translation) is cached against the identity of the
book's hash array, so verifying one book against many candidates prepares it once. The cache
assumes those arrays are not modified in place.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from bookdup.dictionary import Dictionary
from bookdup.lcs import align_restricted, lis_indices, match_sorted, restrict_sorted
from bookdup.scores import cs, its, min_lcs_for_cs, min_lcs_for_its
from bookdup.translate import translate_unique

__all__ = ["Verification", "verify_many", "verify_pair"]

_BITS = 1 << 16  # bitset size: ~3K unique words set ~5% of the bits
_MASK = _BITS - 1


class UniqueSequence(Protocol):
    words: list[str]
    hashes: np.ndarray  # uint32, distinct
    pages: np.ndarray  # int32


class HasUnique(Protocol):
    @property
    def unique(self) -> UniqueSequence: ...


@dataclass(frozen=True)
class Verification:
    """Evidence for one pair. x, y: |X|, |Y| (unique words of each book, before translation);
    shared: distinct items common to both sequences (|X_T ∩ Y| when translated); alignment:
    page of each LCS item in x and in y."""

    x: int
    y: int
    shared: int
    lcs: int
    cs: float
    its: float
    alignment: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class _Prepared:
    hashes: np.ndarray  # the sequence (translated when a dictionary was given)
    pages: np.ndarray
    distinct: bool
    values: np.ndarray  # sorted distinct items
    order: np.ndarray  # argsort of hashes
    first: np.ndarray  # positions in hashes of values (the first occurrence when items repeat)
    levels: tuple[int, ...]  # bitset of buckets holding >= k + 1 items, k = 0, 1, ...


_CACHE: dict[tuple[int, int], tuple[weakref.ref, Dictionary | None, _Prepared]] = {}


def _bitset_levels(values: np.ndarray) -> tuple[int, ...]:
    counts = np.bincount(values & _MASK, minlength=_BITS)
    return tuple(
        int.from_bytes(np.packbits(counts > k, bitorder="little").tobytes(), "little")
        for k in range(int(counts.max(initial=0)))
    )


def _prepare(u: UniqueSequence, dictionary: Dictionary | None) -> _Prepared:
    key = (id(u.hashes), id(dictionary))
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is u.hashes and hit[1] is dictionary:
        return hit[2]
    if dictionary is None:
        hashes = np.asarray(u.hashes, dtype=np.uint32)
        pages = np.asarray(u.pages, dtype=np.int32)
    else:
        hashes, pages = translate_unique(u.words, u.pages, dictionary)
    order = np.argsort(hashes)
    ordered = hashes[order]
    keep = np.ones(ordered.size, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    values = ordered[keep]
    prepared = _Prepared(
        hashes, pages, bool(keep.all()), values, order, order[keep], _bitset_levels(values)
    )
    drop = weakref.ref(u.hashes, lambda _r, k=key, c=_CACHE: c.pop(k, None))
    _CACHE[key] = (drop, dictionary, prepared)
    return prepared


@lru_cache(maxsize=1 << 16)
def _min_lcs(score: str, threshold: float, nx: int, ny: int) -> int:
    return (min_lcs_for_its if score == "its" else min_lcs_for_cs)(threshold, nx, ny)


def _shared_upper_bound(a: _Prepared, b: _Prepared) -> int:
    """Items of a whose bucket is set in b: >= |a ∩ b| whatever the collisions."""
    yb = b.levels[0] if b.levels else 0
    return sum((lv & yb).bit_count() for lv in a.levels)


def _count_shared(a: _Prepared, b: _Prepared) -> int:
    small, large = (a.values, b.values) if a.values.size <= b.values.size else (b.values, a.values)
    if small.size == 0:
        return 0
    pos = np.searchsorted(large, small)
    np.minimum(pos, large.size - 1, out=pos)
    return int(np.count_nonzero(large[pos] == small))


def verify_pair(
    fa: HasUnique,
    fb: HasUnique,
    *,
    threshold: float,
    score: str = "its",
    dictionary: Dictionary | None = None,
) -> Verification | None:
    """Verify fa against fb; None when |X ∩ Y| is below the |LCS| needed to reach threshold.

    With a dictionary, fa's unique words are translated (dictionary.source -> target, which
    should be fb's language) and the general LCS is used; |X| stays fa's unique-word count
    (TRANS Table 1). A returned Verification may still score below the threshold.
    """
    if score not in ("its", "cs"):
        raise ValueError(f"score must be 'its' or 'cs', not {score!r}")
    a = _prepare(fa.unique, dictionary)
    b = _prepare(fb.unique, None)
    nx, ny = len(fa.unique.hashes), len(fb.unique.hashes)
    need = _min_lcs(score, threshold, nx, ny)
    can_prune = a.distinct or b.distinct  # then |LCS| <= distinct shared items
    if need > 0:
        if need > min(a.hashes.size, b.hashes.size):
            return None
        if can_prune and _shared_upper_bound(a, b) < need:
            return None
    shared = _count_shared(a, b)
    if can_prune and shared < need:
        return None
    if a.distinct and b.distinct:
        ix, iy = match_sorted(a.values, a.first, b.values, b.first)
        keep = np.asarray(lis_indices(iy.tolist()), dtype=np.intp)
        ax, ay = ix[keep], iy[keep]
    else:
        ax, ay = align_restricted(*restrict_sorted(a.hashes, a.order, b.hashes, b.order))
    lcs = int(ax.size)
    return Verification(
        nx, ny, shared, lcs, cs(lcs, nx, ny), its(lcs, nx, ny), (a.pages[ax], b.pages[ay])
    )


def verify_many(
    pairs: Iterable[tuple[HasUnique, HasUnique]],
    *,
    threshold: float,
    score: str = "its",
    dictionary: Dictionary | None = None,
) -> list[Verification | None]:
    """verify_pair over candidate pairs; each book is prepared once however often it recurs."""
    return [
        verify_pair(fa, fb, threshold=threshold, score=score, dictionary=dictionary)
        for fa, fb in pairs
    ]
