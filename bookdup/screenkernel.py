"""The order screen of a translated candidate (``bookdup.verify.order_screen``), compiled.

Most of a large job's verification work is screens (docs/EVALUATION.md, issue 28), and on
their short sequences numpy's per-call cost was most of a screen. Here the shared items, the
restriction to them, the |LCS| and its shuffles are two compiled calls, with the same
arithmetic as the Python path (``verify._shared_indices``, ``verify._restrict``,
``orderstat._shuffled_lcs``) and the shuffles drawn from the same generator, so each
|LCS| — and the screen's z — is the same number (tests/bookdup/test_screenkernel.py).
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np
from numba import njit

from bookdup.bitlcs import _lcs, _popcount, _rows
from bookdup.seededperm import permutations

__all__ = ["Sorted", "restricted", "screen_lcs", "shared", "warm"]

Rows = tuple[np.ndarray, np.ndarray, np.ndarray, int]  # a pattern's match rows and length


class Sorted(Protocol):
    """A prepared sequence (``verify._Prepared``): its sorted distinct ``values``, each
    value's positions (``order`` from ``starts``) and each item's ``groups`` (its source
    word)."""

    @property
    def values(self) -> np.ndarray: ...

    @property
    def order(self) -> np.ndarray: ...

    @property
    def starts(self) -> np.ndarray: ...

    @property
    def groups(self) -> np.ndarray: ...


@njit(cache=True, nogil=True)
def shared(values_a: np.ndarray, values_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices into each sorted distinct array of the values both hold, ascending (those of
    ``verify._shared_indices``), by one merge of the two. Branch-free: which side steps is
    added, not jumped on (a jump mispredicted about every other step: 1.45x the time on
    long books' ~14K and ~7K values)."""
    n = min(values_a.size, values_b.size)
    ia = np.empty(n + 1, dtype=np.int64)  # one spare: each step writes before it counts
    ib = np.empty(n + 1, dtype=np.int64)
    i = j = k = 0
    while i < values_a.size and j < values_b.size:
        va, vb = values_a[i], values_b[j]
        ia[k] = i
        ib[k] = j
        k += int(va == vb)
        i += int(va <= vb)
        j += int(vb <= va)
    return ia[:k], ib[:k]


@njit(cache=True, nogil=True)
def restricted(
    idx: np.ndarray, order: np.ndarray, starts: np.ndarray, items: int
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (ascending) of a sequence's items of values ``idx``, and their codes (the
    index in ``idx``) (``verify._restrict``'s). Each value's positions (``order`` from
    ``starts``) are marked in a bitset of the ``items`` positions and read back in order:
    the cost is the shared items and items / 64 words, where two passes over every item
    (through its rank) took 2.5x as long on the real books' translated sequences."""
    marks = np.zeros((items + 63) >> 6, dtype=np.uint64)
    code = np.empty(items, dtype=np.int32)  # read only where marked
    n = 0
    for j in range(idx.size):
        for t in range(starts[idx[j]], starts[idx[j] + 1]):
            p = order[t]
            marks[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
            code[p] = j
            n += 1
    pos = np.empty(n, dtype=np.int64)
    codes = np.empty(n, dtype=np.int64)
    n = 0
    for w in range(marks.size):
        bits = marks[w]
        while bits:
            low = bits & (~bits + np.uint64(1))
            p = (w << 6) + _popcount(low - np.uint64(1))
            pos[n] = p
            codes[n] = code[p]
            n += 1
            bits ^= low
    return pos, codes


@njit(cache=True, nogil=True)
def _runs(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Where each run of equal groups starts and its length; whether the groups ascend."""
    ascending = True
    runs = 1 if groups.size else 0
    for i in range(1, groups.size):
        if groups[i] != groups[i - 1]:
            runs += 1
            ascending = ascending and groups[i] > groups[i - 1]
    first = np.empty(runs, dtype=np.int64)
    length = np.empty(runs, dtype=np.int64)
    r = 0
    for i in range(groups.size):
        if i == 0 or groups[i] != groups[i - 1]:
            if i:
                length[r] = i - first[r]
                r += 1
            first[r] = i
    if runs:
        length[r] = groups.size - first[r]
    return first, length, ascending


@njit(cache=True, nogil=True)
def _restricted_lcs(
    a: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[Rows, np.ndarray, np.ndarray, np.ndarray, bool, int, int]:
    """Each side as (values, order, starts[, groups]) (``Sorted``)."""
    values_a, order_a, starts_a, groups_a = a
    values_b, order_b, starts_b = b
    ia, ib = shared(values_a, values_b)
    px, cx = restricted(ia, order_a, starts_a, groups_a.size)
    _, cy = restricted(ib, order_b, starts_b, starts_b[-1])
    first, length, ascending = _runs(groups_a[px])
    k = ia.size  # every shared value occurs on both sides: each code is in cx and in cy
    start, word, bits = _rows(cy, max(k, 1))
    lcs = _lcs(start, word, bits, cy.size, cx) if cy.size and cx.size else 0
    return (start, word, bits, cy.size), cx, first, length, ascending, k, lcs


@njit(cache=True, nogil=True)
def _shuffled(
    rows: Rows, cx: np.ndarray, first: np.ndarray, length: np.ndarray, perms: np.ndarray
) -> np.ndarray:
    """|LCS| of x's runs laid out in each permuted order (``orderstat._shuffled_lcs``)."""
    start, word, bits, m = rows
    order = np.empty(first.size, dtype=np.int64)
    stream = np.empty(cx.size, dtype=np.int64)
    out = np.empty(perms.shape[0], dtype=np.int64)
    for s in range(perms.shape[0]):
        for t in range(first.size):
            order[perms[s, t]] = t
        n = 0
        for t in range(first.size):
            q = first[order[t]]
            for i in range(q, q + length[order[t]]):
                stream[n] = cx[i]
                n += 1
        out[s] = _lcs(start, word, bits, m, stream)
    return out


def screen_lcs(a: Sorted, b: Sorted, shuffles: int) -> tuple[int, int, list[int]] | None:
    """(|LCS|, shared items, the shuffles' |LCS|) of the screen, as ``verify`` computes
    them; None when x's groups do not come in ascending runs or there are fewer than two
    items (the Python path takes those)."""
    rows, cx, first, length, ascending, shared, lcs = _restricted_lcs(
        (a.values, a.order, a.starts, a.groups), (b.values, b.order, b.starts)
    )
    if not ascending or cx.size < 2 or rows[3] == 0:
        return None
    # verify._RestrictedLcs.seed's generator, its permutations drawn compiled
    perms = permutations(lcs * 7919 + shared, first.size, shuffles)
    return lcs, shared, _shuffled(rows, cx, first, length, perms).tolist()


class _Sequence(NamedTuple):
    values: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    groups: np.ndarray


def warm() -> None:
    """Load (or compile) the kernels now, as ``bookdup.bitlcs.warm`` does for its own."""
    values = np.array([1, 2], dtype=np.uint32)
    order = np.array([0, 1, 2], dtype=np.int32)  # verify._Prepared's int32 indices
    starts = np.array([0, 1, 3], dtype=np.int32)
    seq = _Sequence(values, order, starts, np.array([0, 1, 1], dtype=np.int32))
    screen_lcs(seq, seq, 1)
    permutations(1, 2, 1)
