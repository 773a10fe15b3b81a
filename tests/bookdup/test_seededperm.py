"""The compiled seeded permutations (``bookdup.seededperm``) are numpy's, draw for draw: the
order screen's shuffles, hence its z, do not change."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.seededperm import permutations, seed_state


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**63 - 1))
def test_the_seed_state_is_numpys(seed: int) -> None:
    want = np.random.SeedSequence(seed).generate_state(4, np.uint64)
    assert seed_state(seed).tolist() == want.tolist()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**40), st.integers(0, 700), st.integers(1, 4))
def test_the_permutations_are_numpys(seed: int, n: int, count: int) -> None:
    """Several draws from one generator: the buffered 32-bit half carries over between them."""
    rng = np.random.default_rng(seed)
    want = [rng.permutation(n).tolist() for _ in range(count)]
    assert permutations(seed, n, count).tolist() == want


def test_the_screens_seeds_at_the_edges() -> None:
    """Seeds past 32 bits take two entropy words; n = 0 and 1 draw nothing."""
    for seed in (0, 1, 2**32 - 1, 2**32, 2**63 - 1):
        for n in (0, 1, 2, 291):
            want = np.random.default_rng(seed).permutation(n).tolist()
            assert permutations(seed, n, 1).tolist() == [want]
