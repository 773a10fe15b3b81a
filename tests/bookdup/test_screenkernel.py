"""The compiled order screen (``bookdup.screenkernel``) gives the numpy path's z exactly:
the same shared items, |LCS| and shuffles, hence the same screen decision for every pair."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup import verify as V
from bookdup.compare import translated_first
from bookdup.orderstat import calibrated, lis_null_mean, z_at
from bookdup.relate import SCREEN_Z
from bookdup.screenkernel import restricted, screen_lcs, shared
from bookdup.uniquewords import UniqueWords
from tests.indexer.verify_cases import needs_lexicon, planned_pairs


class Seq(NamedTuple):
    """A prepared sequence's arrays (``screenkernel.Sorted``), of other dtypes."""

    values: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    groups: np.ndarray


def _prepared(hashes: list[int]) -> V._Prepared:
    u = UniqueWords(None, np.array(hashes, dtype=np.uint32), np.zeros(len(hashes), np.int32))
    return V._prepare(u, None)


@settings(max_examples=300, deadline=None)
@given(
    st.sets(st.integers(0, 2**32 - 1), max_size=200),
    st.sets(st.integers(0, 2**32 - 1), max_size=200),
    st.sets(st.integers(0, 2**32 - 1), max_size=100),
)
def test_the_merged_shared_values_are_numpys_intersection(
    x: set[int], y: set[int], both: set[int]
) -> None:
    """Sorted distinct uint32 values (the full range: no sign trouble), some on both sides."""
    a = np.array(sorted(x | both), dtype=np.uint32)
    b = np.array(sorted(y | both), dtype=np.uint32)
    _, want_a, want_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    ia, ib = shared(a, b)
    assert ia.tolist() == want_a.tolist()
    assert ib.tolist() == want_b.tolist()


def _restricted_by_rank(p: V._Prepared, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The restriction in numpy, through each item's value index: every item looked at."""
    rank = np.searchsorted(p.values, p.hashes)
    code_of = np.full(p.values.size, -1, dtype=np.int64)
    code_of[idx] = np.arange(idx.size)
    codes = code_of[rank]
    pos = np.flatnonzero(codes >= 0)
    return pos, codes[pos]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=0, max_size=300),
    st.lists(st.integers(0, 40), min_size=0, max_size=120),
)
def test_the_restriction_read_from_value_positions_equals_every_item_looked_at(
    x: list[int], y: list[int]
) -> None:
    """Repeats, absent values and more than 64 items (positions past one bitset word)."""
    a, b = _prepared(x), _prepared(y)
    ia, ib = V._shared_indices(a, b)
    for p, idx in ((a, ia), (b, ib)):
        pos, codes = restricted(idx, p.order, p.starts, p.hashes.size)
        want_pos, want_codes = _restricted_by_rank(p, idx)
        assert pos.tolist() == want_pos.tolist()
        assert codes.tolist() == want_codes.tolist()
        assert len(set(pos.tolist())) == pos.size == int(np.isin(p.hashes, p.values[idx]).sum())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=0, max_size=120),
    st.lists(st.integers(0, 40), min_size=0, max_size=120),
    st.integers(1, 4),
)
def test_the_compiled_screen_equals_the_numpy_one(x: list[int], y: list[int], k: int) -> None:
    """Random sequences with repeats and few values (many shared items, many ties)."""
    a, b = _prepared(x), _prepared(y)
    want = V._order_screen_python(a, b, k)
    counted = screen_lcs(a, b, k)
    ia, ib = V._shared_indices(a, b)
    r = V._restricted_lcs(a, b, ia, ib, None)
    if counted is None:  # fewer than two of x's items shared: the numpy path decides
        assert r.cx.size < 2
        return
    assert counted[:2] == (r.lcs, r.shared)
    assert calibrated(*counted).z == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 300), min_size=0, max_size=600),
    st.lists(st.integers(0, 300), min_size=0, max_size=250, unique=True),
    st.integers(1, 4),
)
def test_the_screen_of_a_distinct_y_equals_the_numpy_one(
    x: list[int], y: list[int], k: int
) -> None:
    """y of distinct items, as a job's untranslated book (one bit a row), with more than 64
    shared items (carries across words); the same counts from int32 positions."""
    a, b = _prepared(x), _prepared(y)
    counted = screen_lcs(a, b, k)
    if counted is None:
        assert V._restricted_lcs(a, b, *V._shared_indices(a, b), None).cx.size < 2
        return
    assert calibrated(*counted).z == V._order_screen_python(a, b, k)
    narrow = [
        Seq(
            p.values, p.order.astype(np.int32), p.starts.astype(np.int32), p.groups.astype(np.int32)
        )
        for p in (a, b)
    ]
    assert screen_lcs(narrow[0], narrow[1], k) == counted


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 120), min_size=0, max_size=400),
    st.lists(st.integers(0, 120), min_size=0, max_size=300),
    st.integers(1, 4),
    st.floats(-2.0, 10.0),
)
def test_a_screen_with_a_threshold_stops_only_below_it(
    x: list[int], y: list[int], k: int, at_least: float
) -> None:
    """Its shuffles are the first of the full screen's; all of them whenever it goes on, so
    the same z; when it stops early, what ``order_screen`` returns is under the threshold,
    and with no shuffle at all the full z is too (the floor bounds the null's mean)."""
    a, b = _prepared(x), _prepared(y)
    full = screen_lcs(a, b, k)
    early = screen_lcs(a, b, k, at_least)
    if full is None:
        assert early is None
        return
    assert early is not None and early[:2] == full[:2]
    lcs, n, values = early
    assert values == full[2][: len(values)]
    if len(values) == k:
        return
    if not values:
        assert z_at(lcs, lis_null_mean(n)) < at_least
        assert calibrated(*full).z < at_least
    else:
        assert len(values) == 1 and calibrated(lcs, n, values).z < at_least


@needs_lexicon
def test_the_compiled_screen_equals_the_numpy_one_on_real_translations() -> None:
    screened = 0
    for fa, fb, plan in planned_pairs():
        if plan.dictionary is None:
            continue
        x, y = (fa, fb) if translated_first(fa, fb, plan.dictionary) else (fb, fa)
        ux, uy, lexicon = V._translated_view(x.unique, y.unique, plan.dictionary)
        a, b = V._prepare(ux, lexicon), V._prepare(uy, None)
        assert screen_lcs(a, b, V.SCREEN_SHUFFLES) is not None  # the compiled path ran
        full = V.order_screen(x, y, plan.dictionary)
        assert full == V._order_screen_python(a, b, V.SCREEN_SHUFFLES)
        early = V.order_screen(x, y, plan.dictionary, at_least=SCREEN_Z)
        assert (early >= SCREEN_Z) == (full >= SCREEN_Z)
        screened += 1
    assert screened == 2  # the German Alice against the English one and against Frankenstein
