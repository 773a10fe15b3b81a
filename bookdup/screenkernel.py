"""The order screen of a translated candidate (``bookdup.verify.order_screen``), compiled.

Most of a large job's verification work is screens (docs/EVALUATION.md, issue 28), and on
their short sequences numpy's per-call cost was most of a screen. Here the shared items, the
restriction to them, the |LCS| and its shuffles are one compiled call, with the same
arithmetic as the Python path (``verify._shared_indices``, ``verify._restrict``,
``orderstat._shuffled_lcs``) and the shuffles drawn from the same generator, so each
|LCS| — and the screen's z — is the same number (tests/bookdup/test_screenkernel.py).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol

import numpy as np
from numba import njit

from bookdup.bitlcs import _popcount, _rows, _step, _zeros
from bookdup.orderstat import (
    SEQUENTIAL_SIGMAS,
    null_mean,
    null_n,
    null_sd,
    sequential_error,
    z_at,
)
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
def _distinct_rows(
    idx: np.ndarray, order: np.ndarray, starts: np.ndarray, items: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_rows(restricted(idx, ...)[1], idx.size)`` for a sequence of distinct items (each
    value at one position): code j's row is the one bit of its rank among the marked
    positions, written as the marks are read back, with no codes array nor counting pass."""
    marks = np.zeros((items + 63) >> 6, dtype=np.uint64)
    code = np.empty(items, dtype=np.int32)  # read only where marked
    for j in range(idx.size):
        p = order[starts[idx[j]]]
        marks[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
        code[p] = j
    start = np.arange(idx.size + 1)
    word = np.empty(max(idx.size, 1), dtype=np.int64)
    bits = np.zeros(max(idx.size, 1), dtype=np.uint64)
    n = 0
    for w in range(marks.size):
        m = marks[w]
        while m:
            low = m & (~m + np.uint64(1))
            c = code[(w << 6) + _popcount(low - np.uint64(1))]
            word[c] = n >> 6
            bits[c] = np.uint64(1) << np.uint64(n & 63)
            n += 1
            m ^= low
    return start, word, bits


@njit(cache=True, nogil=True)
def _step_one(v: np.ndarray, w: int, mask: np.uint64) -> None:
    """``bitlcs._step`` for a row of one word (a pattern of distinct items: y's), with no
    search of the row's words: past that word U is 0, so only a carry runs on, adding 1.
    Where U is 0 the word is rewritten unchanged rather than tested."""
    x = v[w]
    u = x & mask
    t = x + u
    v[w] = t | (x & ~u)
    if t >= x:
        return
    w += 1
    while w < v.size:
        x = v[w]
        s = x + np.uint64(1)
        v[w] = s | x
        if s != np.uint64(0):
            return
        w += 1


@njit(cache=True, nogil=True)
def _stream_lcs(
    rows: Rows,
    distinct: bool,
    cx: np.ndarray,
    first: np.ndarray,
    length: np.ndarray,
    order: np.ndarray,
) -> int:
    """|LCS| with the pattern of x's runs taken in ``order`` (``bitlcs._lcs`` of that stream,
    read in place)."""
    start, word, bits, m = rows
    v = np.full((m + 63) // 64, np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    k = start.size - 1
    for t in range(order.size):
        q = first[order[t]]
        for i in range(q, q + length[order[t]]):
            c = cx[i]
            if distinct:
                _step_one(v, word[c], bits[c])
            elif c < k:
                _step(v, start, word, bits, c)
    return _zeros(v, m)


@njit(cache=True, nogil=True)
def _screen(
    a: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray, np.ndarray],
    shuffles: int,
    at_least: float,
    sigmas: float,
) -> tuple[int, int, np.ndarray]:
    """(|LCS|, shared items, the shuffles' |LCS|), |LCS| -1 where ``screen_lcs`` gives None;
    each side as (values, order, starts[, groups]) (``Sorted``). One call from Python where
    there were three (each ~1 µs of argument checks); the shuffles read x's runs in place
    (copying them into a stream cost more than the indirection). Fewer shuffles when z is
    surely under ``at_least`` (``screen_lcs``)."""
    values_a, order_a, starts_a, groups_a = a
    values_b, order_b, starts_b = b
    ia, ib = shared(values_a, values_b)
    k = ia.size  # every shared value occurs on both sides: each code is in cx and in cy
    px, cx = restricted(ia, order_a, starts_a, groups_a.size)
    first, length, ascending = _runs(groups_a[px])
    items_b = starts_b[-1]
    distinct = values_b.size == items_b  # y's items distinct: one bit a row
    if distinct:
        start, word, bits = _distinct_rows(ib, order_b, starts_b, items_b)
        m = k
    else:
        cy = restricted(ib, order_b, starts_b, items_b)[1]
        start, word, bits = _rows(cy, max(k, 1))
        m = cy.size
    rows = (start, word, bits, m)
    none = np.empty(0, dtype=np.int64)
    if not ascending or cx.size < 2 or rows[3] == 0:
        return -1, k, none
    whole = np.zeros(1, dtype=np.int64)  # x in its order: one run of all its items
    lcs = _stream_lcs(rows, distinct, cx, whole, np.full(1, cx.size), whole)
    out = np.empty(shuffles, dtype=np.int64)
    floor = null_mean(k)
    if z_at(lcs, floor) < at_least:  # exact: the null's mean is at least the floor
        return lcs, k, out[:0]
    # verify._RestrictedLcs.seed's generator
    perms = permutations(lcs * 7919 + k, first.size, shuffles)
    order = np.empty(first.size, dtype=np.int64)
    for s in range(shuffles):
        for t in range(first.size):
            order[perms[s, t]] = t
        out[s] = _stream_lcs(rows, distinct, cx, first, length, order)
        if s == 0 and shuffles > 1:  # sequential_evidence's first look
            mean = max(float(out[0]), floor)
            low = max(mean - sequential_error(null_sd(null_n(mean)), 1, shuffles, sigmas), floor)
            if z_at(lcs, low) < at_least:
                return lcs, k, out[:1]
    return lcs, k, out


def screen_lcs(
    a: Sorted, b: Sorted, shuffles: int, at_least: float | None = None
) -> tuple[int, int, list[int]] | None:
    """(|LCS|, shared items, the shuffles' |LCS|) of the screen, as ``verify`` computes
    them; None when x's groups do not come in ascending runs or there are fewer than two
    items (the Python path takes those).

    With ``at_least``, the shuffles stop once the screen's z is below it: none when even the
    distinct-item null (the lowest the mean can be) gives less; one when
    ``orderstat.sequential_evidence``'s rule, after one, says "below". Most screened pairs
    are unrelated, and their |LCS| is their shuffles'."""
    bound = -math.inf if at_least is None else at_least
    lcs, shared, values = _screen(
        (a.values, a.order, a.starts, a.groups),
        (b.values, b.order, b.starts),
        shuffles,
        bound,
        SEQUENTIAL_SIGMAS,
    )
    return None if lcs < 0 else (lcs, shared, values.tolist())


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
