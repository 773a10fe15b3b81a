"""A prepared sequence (``verify._prepare``, compiled in ``bookdup.sortkernel``) holds exactly
the fields of its numpy definition: the stable argsort, the sorted distinct values, their
starts and first positions (as int32), and the bitset levels."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup import verify as V
from bookdup.sortkernel import sorted_groups
from bookdup.uniquewords import UniqueWords


def _reference(hashes: np.ndarray) -> dict[str, object]:
    """The numpy definition ``_prepare`` had before it was compiled."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    keep = np.ones(ordered.size, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    values = ordered[keep]
    counts = np.bincount(values & (V._BITS - 1), minlength=V._BITS)
    levels = tuple(
        int.from_bytes(np.packbits(counts > k, bitorder="little").tobytes(), "little")
        for k in range(int(counts.max(initial=0)))
    )
    starts = np.append(np.flatnonzero(keep), hashes.size)
    return {
        "distinct": bool(keep.all()),
        "values": values,
        "order": order,
        "starts": starts,
        "first": order[keep],
        "levels": levels,
    }


def _assert_prepared_as_defined(hashes: np.ndarray) -> None:
    u = UniqueWords(None, hashes, np.arange(hashes.size, dtype=np.int32))
    got = V._prepare(u, None)
    for name, want in _reference(hashes).items():
        have = getattr(got, name)
        if isinstance(want, np.ndarray):
            assert have.dtype == (want.dtype if name == "values" else np.int32), name
            assert np.array_equal(have, want), name
        else:
            assert have == want, name


#: Items over the whole range, a small alphabet (repeats), and one bitset bucket (deep levels).
_ITEMS = st.one_of(
    st.integers(0, 2**32 - 1),
    st.integers(0, 40),
    st.integers(0, 2**16 - 1).map(lambda k: (k << 16) | 7),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ITEMS, max_size=300))
def test_a_prepared_sequence_has_the_fields_of_its_numpy_definition(items: list[int]) -> None:
    _assert_prepared_as_defined(np.array(items, dtype=np.uint32))


def test_long_sequences_with_repeats_are_prepared_as_defined() -> None:
    """Sizes of real translated books (tens of thousands of items, each repeated a few
    times), where every radix pass moves items across many buckets."""
    rng = np.random.default_rng(5)
    for n in (1, 2_047, 2_049, 30_000, 120_000):
        distinct = rng.integers(0, 2**32, n, dtype=np.uint32)
        _assert_prepared_as_defined(distinct)
        _assert_prepared_as_defined(rng.choice(distinct, n).astype(np.uint32))


def test_an_empty_sequence_has_no_groups() -> None:
    order, values, starts, first = sorted_groups(np.zeros(0, dtype=np.uint32))
    assert order.size == values.size == first.size == 0
    assert starts.tolist() == [0]
