"""The compiled bit-parallel |LCS| (``bookdup.bitlcs``) equals the O(n·m) dynamic programme
and rapidfuzz's LCSseq, for whole streams and for ranges read off shared passes, across word
boundaries of the 64-bit masks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import LCSseq

from bookdup.bitlcs import Pattern, lcs_ranges, lcs_stream, range_counts
from bookdup.lcs import encode_ranks

from .test_lcs import dp_lcs

repeat_seqs = st.lists(st.integers(0, 12), max_size=150)


@settings(max_examples=300, deadline=None)
@given(a=repeat_seqs, b=repeat_seqs)
def test_stream_matches_dp(a: list[int], b: list[int]) -> None:
    assert lcs_stream(Pattern(np.array(b, dtype=np.int64), 13), np.array(a)) == dp_lcs(a, b)


@settings(max_examples=150, deadline=None)
@given(
    a=repeat_seqs,
    b=repeat_seqs,
    cuts=st.lists(st.tuples(st.integers(0, 150), st.integers(0, 150)), min_size=1, max_size=12),
)
def test_ranges_match_dp_of_each_slice(
    a: list[int], b: list[int], cuts: list[tuple[int, int]]
) -> None:
    lo = np.array([min(s, e, len(a)) for s, e in cuts])
    hi = np.array([min(max(s, e), len(a)) for s, e in cuts])
    got = lcs_ranges(Pattern(np.array(b, dtype=np.int64), 13), np.array(a), lo, hi)
    assert got.tolist() == [dp_lcs(a[s:e], b) for s, e in zip(lo, hi, strict=True)]


def test_long_sequences_match_rapidfuzz() -> None:
    """Patterns of several 64-bit words (carries across words) and large alphabets."""
    rng = np.random.default_rng(3)
    for k, n, m in [(1500, 6000, 1500), (40, 3000, 700), (3000, 500, 4100), (2, 200, 129)]:
        x, y = rng.integers(0, k, n), rng.integers(0, k, m)
        want = int(LCSseq.similarity(encode_ranks(x), encode_ranks(y)))
        pattern = Pattern(y, k)
        assert lcs_stream(pattern, x) == want
        lo = np.array([0, n // 4, n // 2, 0])
        hi = np.array([n // 2, 3 * n // 4, n, n])
        got = lcs_ranges(pattern, x, lo, hi)
        assert got.tolist() == [
            int(LCSseq.similarity(encode_ranks(x[s:e]), encode_ranks(y)))
            for s, e in zip(lo, hi, strict=True)
        ]


def test_stream_items_outside_the_pattern_match_nothing() -> None:
    pattern = Pattern(np.array([0, 1, 2]), 3)
    assert lcs_stream(pattern, np.array([7, 0, 9, 1, 2, 5])) == 3
    assert lcs_stream(Pattern(np.zeros(0, dtype=np.int64)), np.array([1, 2])) == 0


def test_range_counts() -> None:
    stream = np.array([0, 1, 1, 2, 3, 0])
    counts = np.array([2, 1, 0, 3])  # code 2 is not in the pattern
    shared, pairs = range_counts(stream, counts, np.array([0, 1, 3]), np.array([6, 3, 4]))
    assert shared.tolist() == [3, 1, 0]
    assert pairs.tolist() == [2 + 1 + 1 + 3 + 2, 2, 0]


def test_sparse_rows_equal_rapidfuzz_for_distinct_and_dense_patterns() -> None:
    """The step touches only a row's words and the carry's run (``bitlcs._step``): distinct
    patterns (one bit per row, the verifier's y), near-ordered ones (long carries over
    all-ones words) and one-code patterns (every word in the row) all give the full |LCS|."""
    rng = np.random.default_rng(8)
    for trial in range(30):
        m = int(rng.integers(1, 3000))
        if trial % 3 == 0:
            y = rng.permutation(m)
        elif trial % 3 == 1:
            y = np.arange(m)
            swap = rng.integers(0, m, m // 20)
            y[swap] = y[swap[::-1]]
        else:
            y = rng.integers(0, 3, m)
        k = int(y.max()) + 1
        x = np.concatenate([rng.integers(0, k, int(rng.integers(0, 2000))), np.sort(y)[::7]])
        want = int(LCSseq.similarity(encode_ranks(x), encode_ranks(y)))
        assert lcs_stream(Pattern(y, k), x) == want
        lo, hi = np.array([0, x.size // 3]), np.array([x.size // 2, x.size])
        got = lcs_ranges(Pattern(y, k), x, lo, hi)
        assert got.tolist() == [
            int(LCSseq.similarity(encode_ranks(x[s:e]), encode_ranks(y)))
            for s, e in zip(lo, hi, strict=True)
        ]
