"""The densest ordered block (``bookdup.localscan``): chance stays low, a short shared stretch
among many chance matches does not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.localscan import (
    NO_EVIDENCE,
    _lis_length,
    _log_tail,
    _scan,
    local_evidence,
    windows,
)


def _chance(rng: np.random.Generator, n: int, nx: int, ny: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` one-to-one matches at random positions: what unrelated books share."""
    return rng.choice(nx, n, replace=False), rng.choice(ny, n, replace=False)


def _with_block(
    rng: np.random.Generator, k: int, at: tuple[int, int], span: int, n: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """Chance matches of a 2,000- and an 8,000-word book, plus ``k`` in order in a stretch of
    ``span`` positions from ``at`` in each: an excerpt both hold."""
    cx, cy = _chance(rng, n, 2000, 8000)
    bx = at[0] + np.sort(rng.choice(span, k, replace=False))
    by = at[1] + np.sort(rng.choice(span, k, replace=False))
    keep_x, keep_y = ~np.isin(cx, bx), ~np.isin(cy, by)
    keep = keep_x & keep_y
    return np.concatenate([cx[keep], bx]), np.concatenate([cy[keep], by])


def test_windows_cover_every_position_at_every_size() -> None:
    w = windows(1000)
    assert (w[:, 0] < w[:, 1]).all() and w[:, 1].max() == 1000 and w[:, 0].min() == 0
    widths = sorted({int(b - a) for a, b in w})
    assert widths[0] == round(1000 / 32) and widths[-1] == 1000
    for width in widths:  # half-overlapping: every position lies in a window of each size
        same = w[(w[:, 1] - w[:, 0]) == width]
        assert same[0, 0] == 0 and (np.diff(same[:, 0]) <= width // 2 + 1).all()


def test_log_tail_is_the_poisson_tail() -> None:
    for k, lam in ((3, 0.1), (12, 0.9), (20, 3.5), (5, 4.9)):
        exact = 1.0 - sum(math.exp(-lam) * lam**j / math.factorial(j) for j in range(k))
        assert _log_tail(k, lam) == pytest.approx(math.log(exact), rel=1e-6)
    assert _log_tail(4, 4.0) == 0.0  # no evidence at or under the mean


@given(st.lists(st.integers(0, 50), min_size=0, max_size=60))
@settings(max_examples=200, deadline=None)
def test_lis_length_matches_the_quadratic_definition(values: list[int]) -> None:
    best = [1] * len(values)
    for i in range(len(values)):
        for j in range(i):
            if values[j] < values[i]:
                best[i] = max(best[i], best[j] + 1)
    assert _lis_length(np.array(values, np.int64)) == max(best, default=0)


def _every_box(
    px: np.ndarray, py: np.ndarray, nx: int, ny: int, min_lis: int
) -> tuple[float, int, int, int]:
    """``_scan`` without its pruning: every box's LIS read, the first strictly best kept."""
    wx, wy = windows(nx), windows(ny)
    best, best_lis, bi, bj = 0.0, 0, -1, -1
    for i, (x0, x1) in enumerate(wx):
        for j, (y0, y1) in enumerate(wy):
            inside = (px >= x0) & (px < x1) & (py >= y0) & (py < y1)
            k = _lis_length(py[inside])
            if k < min_lis:
                continue
            log_p = _log_tail(k, px.size * ((x1 - x0) / nx) * (y1 - y0) / ny)
            if log_p < best:
                best, best_lis, bi, bj = log_p, k, i, j
    return best, best_lis, bi, bj


@given(
    st.integers(8, 300),
    st.integers(8, 300),
    st.integers(0, 60),
    st.integers(0, 30),
    st.integers(1, 8),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=150, deadline=None)
def test_the_scan_skips_only_boxes_that_cannot_win(
    nx: int, ny: int, n_chance: int, n_block: int, min_lis: int, seed: int
) -> None:
    """A box is skipped when even all its matches in order could not beat the best so far:
    the scan finds the same block, score and box as reading every box."""
    rng = np.random.default_rng(seed)
    n = min(n_chance + n_block, nx, ny)
    px, py = rng.choice(nx, n, replace=False), rng.choice(ny, n, replace=False)
    k = min(n_block, n)
    px[:k], py[:k] = np.sort(px[:k]), np.sort(py[:k])  # a block in order among chance matches
    order = np.argsort(px, kind="stable")
    x, y = px[order].astype(np.int64), py[order].astype(np.int64)
    got = _scan(x, y, windows(nx), windows(ny), nx, ny, min_lis)
    assert got == _every_box(x, y, nx, ny, min_lis)


def test_chance_matches_stay_low() -> None:
    rng = np.random.default_rng(7)
    scores = [local_evidence(*_chance(rng, 200, 2000, 8000), 2000, 8000).score for _ in range(60)]
    assert max(scores) < 2.0


def test_a_short_stretch_in_order_stands_out_and_is_found_where_it_is() -> None:
    rng = np.random.default_rng(3)
    px, py = _with_block(rng, 14, at=(600, 5000), span=120)
    ev = local_evidence(px, py, 2000, 8000)
    assert ev.score > 5.0 and ev.lis >= 14
    x0, x1, y0, y1 = ev.box
    assert x0 <= 600 + 60 < x1 and y0 <= 5000 + 60 < y1  # the box holds the stretch
    assert x1 - x0 <= 2000 // 4 and y1 - y0 <= 8000 // 8


def test_the_same_stretch_out_of_order_is_no_evidence() -> None:
    rng = np.random.default_rng(3)
    px, py = _with_block(rng, 14, at=(600, 5000), span=120)
    block = (px >= 600) & (px < 720) & (py >= 5000) & (py < 5120)
    py = py.copy()
    py[block] = np.sort(py[block])[::-1]  # the same words, in reverse order
    assert local_evidence(px, py, 2000, 8000).score < 2.0


def test_too_few_matches_are_no_evidence() -> None:
    assert local_evidence(np.array([1, 2]), np.array([1, 2]), 10, 10) is NO_EVIDENCE
    assert local_evidence(np.array([], np.int64), np.array([], np.int64), 0, 0) is NO_EVIDENCE


def test_a_title_page_two_volumes_share_is_no_block() -> None:
    """Two volumes of one work open with the same title and author: 4-7 words in order at
    the front of both, where chance puts none. A block holds as many words in order as a
    shared run at least (``MIN_BLOCK``), so that is no evidence of shared text."""
    rng = np.random.default_rng(5)
    cx, cy = _chance(rng, 150, 800, 800)
    keep = (cx >= 10) & (cy >= 10)
    px = np.concatenate([np.arange(6), cx[keep]])
    py = np.concatenate([np.arange(6), cy[keep]])
    assert local_evidence(px, py, 800, 800).score < 1.0
    assert local_evidence(px, py, 800, 800, min_lis=3).score > 3.0  # what the trigger sees
