"""Scores against the papers' tables and exactness of the |LCS| lower bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.scores import cs, its, min_lcs_for_cs, min_lcs_for_its

# DUPNIQ (CIKM 2011) Table 2: |X|, |Y|, |LCS|, DUPNIQ-cs, DUPNIQ-its.
DUPNIQ_TABLE2 = [
    (1482, 1563, 1404, 0.922, 0.979),
    (1787, 4512, 739, 0.260, 0.765),
    (7526, 12695, 53, 0.005, 0.400),
]

# TRANS (SIGIR 2012) Table 1, the 0% noise rows: |X|, |Y|, |LCS|, TRANS-its, TRANS-cs.
# (The noisy rows are averages over 100 runs, so their scores do not follow from the averages.)
TRANS_TABLE1 = [
    (2395, 3224, 251, 0.643, 0.090),  # Egmont (en) -> Egmont (de): translation
    (3706, 3224, 43, 0.426, 0.012),  # Faust (en) -> Egmont (de): same author
    (2625, 3224, 31, 0.396, 0.011),  # Kant (en) -> Egmont (de)
]


@pytest.mark.parametrize(("nx", "ny", "lcs", "want_cs", "want_its"), DUPNIQ_TABLE2)
def test_dupniq_table2(nx: int, ny: int, lcs: int, want_cs: float, want_its: float) -> None:
    assert round(cs(lcs, nx, ny), 3) == want_cs
    # Rows 2 and 3 print its truncated (0.76598 -> 0.765, 0.40056 -> 0.400), row 1 rounded
    # (0.97893 -> 0.979): agree within one unit of the last printed digit.
    assert abs(its(lcs, nx, ny) - want_its) < 0.001


def test_dupniq_table2_its_exact_values() -> None:
    assert its(1404, 1482, 1563) == pytest.approx(0.97893, abs=1e-5)
    assert its(739, 1787, 4512) == pytest.approx(0.76598, abs=1e-5)
    assert its(53, 7526, 12695) == pytest.approx(0.40056, abs=1e-5)


@pytest.mark.parametrize(("nx", "ny", "lcs", "want_its", "want_cs"), TRANS_TABLE1)
def test_trans_table1(nx: int, ny: int, lcs: int, want_its: float, want_cs: float) -> None:
    assert round(its(lcs, nx, ny), 3) == want_its
    assert round(cs(lcs, nx, ny), 3) == want_cs


def test_paper_thresholds_separate_table_rows() -> None:
    # DUPNIQ thresholds cs 0.12 / its 0.72: the two duplicates pass its, the non-duplicate fails.
    assert [its(r[2], r[0], r[1]) >= 0.72 for r in DUPNIQ_TABLE2] == [True, True, False]
    # TRANS-its 0.49: the translation passes, the Faust and Kant controls fail.
    assert [its(r[2], r[0], r[1]) >= 0.49 for r in TRANS_TABLE1] == [True, False, False]


def test_edge_cases() -> None:
    assert its(0, 10, 10) == 0.0
    assert its(1, 10, 10) == 0.0
    assert its(1, 1, 1) == 0.0  # 0/0 by the formula: defined as 0
    assert its(10, 10, 10) == 1.0
    assert cs(0, 0, 5) == 0.0
    assert cs(7, 7, 7) == 1.0


def test_bounds_trivial_thresholds() -> None:
    assert min_lcs_for_its(0.0, 100, 200) == 0
    assert min_lcs_for_cs(0.0, 100, 200) == 0
    assert min_lcs_for_its(1.0, 50, 50) == 50
    assert min_lcs_for_its(1.0, 50, 60) == 51  # unreachable: identical only if |X| == |Y|
    assert min_lcs_for_its(0.5, 1, 1000) == 2  # a one-word book can never score above 0


def test_bounds_on_paper_rows() -> None:
    # Table 2 row 2 (LCS 739) passes its 0.72 with margin; its bound must lie below 739.
    assert min_lcs_for_its(0.72, 1787, 4512) == 512
    assert min_lcs_for_cs(0.12, 1787, 4512) == math.ceil(0.12 * math.sqrt(1787 * 4512))


@settings(max_examples=2000, deadline=None)
@given(
    t=st.floats(min_value=0.01, max_value=1.0),
    nx=st.integers(min_value=1, max_value=200_000),
    ny=st.integers(min_value=1, max_value=200_000),
)
def test_its_bound_is_exact(t: float, nx: int, ny: int) -> None:
    lo = min_lcs_for_its(t, nx, ny)
    m = min(nx, ny)
    if lo > m:
        assert lo == m + 1
        assert its(m, nx, ny) < t
    else:
        assert its(lo, nx, ny) >= t
        assert its(lo - 1, nx, ny) < t


@settings(max_examples=2000, deadline=None)
@given(
    t=st.floats(min_value=0.001, max_value=1.0),
    nx=st.integers(min_value=1, max_value=200_000),
    ny=st.integers(min_value=1, max_value=200_000),
)
def test_cs_bound_is_exact(t: float, nx: int, ny: int) -> None:
    lo = min_lcs_for_cs(t, nx, ny)
    assert cs(lo, nx, ny) >= t
    assert cs(lo - 1, nx, ny) < t
