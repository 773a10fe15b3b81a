"""The core's LCS pieces (``bookdup.lcs``), through the whole-sequence wrappers of
``tests.bookdup.lcs_reference``, agree with the O(n·m) dynamic programme; alignments are
valid LCSs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.lcs import lis_keep
from tests.bookdup.lcs_reference import (
    align_distinct,
    align_general,
    lcs_distinct,
    lcs_general,
    lis_keep_python,
    lis_length,
)


def dp_lcs(a: list[int], b: list[int]) -> int:
    prev = [0] * (len(b) + 1)
    for ai in a:
        cur = [0]
        for j, bj in enumerate(b):
            cur.append(prev[j] + 1 if ai == bj else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def assert_valid_alignment(x: np.ndarray, y: np.ndarray, ax: np.ndarray, ay: np.ndarray) -> None:
    assert len(ax) == len(ay)
    assert np.all(np.diff(ax) > 0)
    assert np.all(np.diff(ay) > 0)
    assert np.array_equal(x[ax], y[ay])


distinct_seqs = st.lists(st.integers(0, 60), max_size=45, unique=True)
repeat_seqs = st.lists(st.integers(0, 12), max_size=45)


@settings(max_examples=400, deadline=None)
@given(a=distinct_seqs, b=distinct_seqs)
def test_distinct_matches_dp(a: list[int], b: list[int]) -> None:
    x = np.array(a, dtype=np.uint32)
    y = np.array(b, dtype=np.uint32)
    want = dp_lcs(a, b)
    assert lcs_distinct(x, y) == want
    assert lcs_general(x, y) == want
    ax, ay = align_distinct(x, y)
    assert len(ax) == want
    assert_valid_alignment(x, y, ax, ay)


@settings(max_examples=400, deadline=None)
@given(a=repeat_seqs, b=repeat_seqs)
def test_general_matches_dp(a: list[int], b: list[int]) -> None:
    x = np.array(a, dtype=np.uint32)
    y = np.array(b, dtype=np.uint32)
    want = dp_lcs(a, b)
    assert lcs_general(x, y) == want
    ax, ay = align_general(x, y)
    assert len(ax) == want
    assert_valid_alignment(x, y, ax, ay)


@settings(max_examples=200, deadline=None)
@given(seq=st.lists(st.integers(0, 100), max_size=60, unique=True))
def test_lis_length_matches_dp(seq: list[int]) -> None:
    assert lis_length(seq) == dp_lcs(seq, sorted(seq))


@st.composite
def aligned_orders(draw: st.DrawFn) -> list[int]:
    """y positions of an aligned pair: mostly in order, a few local swaps, items dropped or
    moved far (what the verifier's LIS meets on real duplicates)."""
    seq = list(range(draw(st.integers(0, 400))))
    for _ in range(draw(st.integers(0, 40))):
        if len(seq) < 2:
            break
        i = draw(st.integers(0, len(seq) - 2))
        j = min(len(seq) - 1, i + draw(st.integers(1, 3 if draw(st.booleans()) else 300)))
        seq[i], seq[j] = seq[j], seq[i]
    drop = draw(st.sets(st.integers(0, max(len(seq) - 1, 0)), max_size=len(seq) // 4))
    return [v for k, v in enumerate(seq) if k not in drop]


@settings(max_examples=300, deadline=None)
@given(seq=st.one_of(aligned_orders(), st.lists(st.integers(0, 10_000), unique=True, max_size=300)))
def test_compiled_lis_keeps_the_python_indices(seq: list[int]) -> None:
    # bit for bit: the compiled LIS must keep the very alignment the Python loop kept (issue 28)
    want = lis_keep_python(np.array(seq, dtype=np.int64))
    for dtype in (np.int64, np.uint32, np.intp):
        got = lis_keep(np.array(seq, dtype=dtype))
        assert got.dtype == want.dtype
        assert got.tolist() == want.tolist()


@settings(max_examples=300, deadline=None)
@given(seq=st.lists(st.integers(0, 30), max_size=80))
def test_compiled_lis_keeps_the_python_indices_with_repeats(seq: list[int]) -> None:
    # repeated items (colliding hashes reach the boilerplate finder): the same indices too
    assert lis_keep(np.array(seq)).tolist() == lis_keep_python(np.array(seq)).tolist()


def test_compiled_lis_length_matches_dp_on_a_shuffle() -> None:
    seq = np.random.default_rng(3).permutation(300)
    keep = lis_keep(seq)
    assert np.all(np.diff(seq[keep]) > 0)
    assert keep.size == dp_lcs(seq.tolist(), sorted(seq.tolist()))


def test_large_hashes_and_many_shared_items() -> None:
    # Full 32-bit hashes and > 0xD800 shared items exercise the surrogate skip of the str encoding.
    rng = np.random.default_rng(7)
    base = rng.choice(2**32, size=60_000, replace=False).astype(np.uint32)
    x = base.copy()
    y = base.copy()
    y[rng.choice(y.size, 500, replace=False)] = rng.choice(2**32, 500).astype(np.uint32)
    y = np.unique(y, return_index=True)
    y = y[0][np.argsort(y[1])]
    want = int(np.isin(y, x).sum())  # y is x with items replaced, order kept
    assert lcs_distinct(x, y) == want
    assert lcs_general(x, y) == want
    ax, ay = align_general(x, y)
    assert len(ax) == want
    assert_valid_alignment(x, y, ax, ay)


def test_reversed_order_gives_lcs_one() -> None:
    x = np.arange(1000, dtype=np.uint32)
    assert lcs_distinct(x, x[::-1].copy()) == 1
    assert lcs_general(x, x[::-1].copy()) == 1
    assert lcs_distinct(x, np.arange(1000, 2000, dtype=np.uint32)) == 0
    ax, ay = align_distinct(x, np.zeros(0, dtype=np.uint32))
    assert ax.size == 0 and ay.size == 0
