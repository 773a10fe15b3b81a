"""The order statistic against its null (random permutations) and on known cases."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from rapidfuzz.distance import LCSseq

from bookdup.lcs import encode_ranks
from bookdup.orderstat import (
    lis_null_mean,
    lis_null_sd,
    order_evidence,
    sequential_evidence,
    shuffled_evidence,
)
from tests.bookdup.lcs_reference import lis_length


def _lis_of_random_permutations(n: int, samples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([lis_length(rng.permutation(n).tolist()) for _ in range(samples)])


@pytest.mark.parametrize("n", [100, 400, 1600])
def test_null_mean_and_sd_match_simulated_permutations(n: int) -> None:
    lis = _lis_of_random_permutations(n, 300, seed=n)
    # Baik–Deift–Johansson with the Tracy–Widom correction: within 2 % of the mean already at
    # n = 100 (the bare 2·sqrt(n) is off by ~20 % there); the spread is never understated
    # (that would inflate z) and overstated by at most ~25 %.
    assert abs(lis.mean() - lis_null_mean(n)) / lis.mean() < 0.02
    assert 0.75 < lis.std() / lis_null_sd(n) < 1.05
    assert abs(lis.mean() - 2 * np.sqrt(n)) > abs(lis.mean() - lis_null_mean(n))


def test_z_of_random_order_is_standardised_and_never_large() -> None:
    zs = []
    for n in (50, 200, 800):
        lis = _lis_of_random_permutations(n, 200, seed=7 + n)
        zs.extend(order_evidence(int(v), n).z for v in lis)
    z = np.array(zs)
    assert abs(z.mean()) < 0.35
    assert 0.75 < z.std() < 1.25
    assert z.max() < 5.0  # the TRANSLATION floor sits far above what chance gives


def test_known_cases() -> None:
    assert order_evidence(0, 0).z == 0.0
    same_order = order_evidence(500, 500)  # every shared item in order: overwhelming
    assert same_order.z > 100
    # the examples: 181 of 259 in order (Betrothed), 104 of 221 (Alice de-fr)
    assert order_evidence(181, 259).z > 50
    assert order_evidence(104, 221).z > 25
    # a chance-level LCS is about zero whatever the size
    for n in (100, 10_000, 1_000_000):
        assert abs(order_evidence(round(lis_null_mean(n)), n).z) < 0.5


def test_size_free_the_same_share_in_order_means_more_for_more_items() -> None:
    # the evidence grows with n at a fixed share in order, and a fixed chance excess
    # (|LCS| - mean in null sds) means the same whatever n
    assert order_evidence(60, 100).z < order_evidence(600, 1000).z
    for n in (100, 1000, 10000):
        lcs = round(lis_null_mean(n) + 3 * lis_null_sd(n))
        assert order_evidence(lcs, n).z == pytest.approx(3.0, abs=0.5)


def _general_null(
    n_words: int, per_word: int, seed: int
) -> tuple[int, int, np.ndarray, str, np.ndarray]:
    """x: n_words source words, each with up to ``per_word`` translations in a random order;
    y: the distinct translations in an unrelated random order."""
    rng = np.random.default_rng(seed)
    vocab = n_words * per_word
    groups, codes = [], []
    for w in range(n_words):
        k = int(rng.integers(1, per_word + 1))
        codes.extend(rng.choice(vocab, size=k, replace=False).tolist())
        groups.extend([w] * k)
    cx, gx = np.array(codes), np.array(groups)
    cy = rng.permutation(np.unique(cx))
    sy = encode_ranks(cy)
    lcs = int(LCSseq.similarity(encode_ranks(cx), sy))
    return lcs, int(cy.size), gx, sy, cx


def test_shuffled_null_calibrates_repeated_items() -> None:
    zs, naive = [], []
    for seed in range(20):
        lcs, n, gx, sy, cx = _general_null(300, 4, seed)

        def lcs_of(o: np.ndarray, cx: np.ndarray = cx, sy: str = sy) -> int:
            return int(LCSseq.similarity(encode_ranks(cx[o]), sy))

        ev = shuffled_evidence(lcs, n, gx, lcs_of, seed=seed)
        zs.append(ev.z)
        naive.append(order_evidence(lcs, n).z)
    # one-to-many translation inflates the distinct-item z of unrelated order; shuffling
    # brings it back to about 0
    assert np.mean(naive) > 2.0
    assert abs(np.mean(zs)) < 1.0
    assert max(zs) < 4.0


def _translated_in_order() -> tuple[int, np.ndarray, Callable[[np.ndarray], int]]:
    """200 words in order, each with two translations (the second a random other word):
    the pair's |LCS|, its groups and the |LCS| of a shuffled order."""
    rng = np.random.default_rng(3)
    cx = np.repeat(np.arange(200), 2)
    cx[1::2] = rng.integers(200, 400, size=200)
    sy = encode_ranks(np.arange(200))
    lcs = int(LCSseq.similarity(encode_ranks(cx), sy))
    return (
        lcs,
        np.repeat(np.arange(200), 2),
        lambda o: int(LCSseq.similarity(encode_ranks(cx[o]), sy)),
    )


def test_shuffled_evidence_sees_a_real_order() -> None:
    lcs, gx, lcs_of = _translated_in_order()
    ev = shuffled_evidence(lcs, 200, gx, lcs_of)
    assert lcs == 200 and ev.z > 40 and ev.shuffles == 8


def test_sequential_evidence_stops_early_only_when_the_side_is_sure() -> None:
    """Unrelated order stops after few shuffles below the floor, a real order above the
    saturation; a pair near the line runs every shuffle and equals the full calibration."""
    for seed in range(10):
        lcs, n, gx, sy, cx = _general_null(300, 4, seed)

        def lcs_of(o: np.ndarray, cx: np.ndarray = cx, sy: str = sy) -> int:
            return int(LCSseq.similarity(encode_ranks(cx[o]), sy))

        full = shuffled_evidence(lcs, n, gx, lcs_of, seed=seed)
        seq = sequential_evidence(lcs, n, gx, lcs_of, below=6.0, above=12.0, seed=seed)
        assert seq.verdict == "below" and seq.evidence.shuffles < 8 and full.z < 6.0
        assert seq.mean_low <= full.null_mean
        # a line right at the full z: never decided early, the same evidence
        line = sequential_evidence(lcs, n, gx, lcs_of, below=full.z, above=full.z + 1, seed=seed)
        assert line.verdict == "open" and line.evidence == full
    lcs, gx, lcs_of = _translated_in_order()
    seq = sequential_evidence(lcs, 200, gx, lcs_of, below=6.0, above=12.0)
    assert seq.verdict == "above" and seq.evidence.shuffles == 1 and seq.evidence.z > 40


def test_effective_n_is_the_smallest_size_reaching_the_mean() -> None:
    from bookdup.orderstat import _effective_n, lis_null_mean

    rng = np.random.default_rng(5)
    means = [*rng.uniform(1.0, 400.0, 500), *(lis_null_mean(n) for n in range(1, 3000, 7))]
    for mean in means:
        n = _effective_n(float(mean))
        assert lis_null_mean(n) >= mean
        assert n == 1 or lis_null_mean(n - 1) < mean


def test_shuffles_of_runs_lay_out_the_groups_as_the_sort_does() -> None:
    """Groups in runs (the verifier's case) take the O(n) layout; the orders are those of
    sorting by (shuffled group, position), shuffle for shuffle, so every z is unchanged."""
    from bookdup.orderstat import _shuffled_lcs

    rng = np.random.default_rng(0)
    for seed in range(100):
        groups = np.sort(rng.integers(0, 50, int(rng.integers(2, 300))))
        fast: list[np.ndarray] = []
        stream = _shuffled_lcs(groups, lambda o, seen=fast: seen.append(o) or 0, seed)
        ref = np.random.default_rng(seed)
        ids = np.unique(groups)
        rank = np.searchsorted(ids, groups)
        for _ in range(4):
            next(stream)
            key = ref.permutation(ids.size)[rank]
            assert np.array_equal(fast[-1], np.lexsort((np.arange(groups.size), key)))
