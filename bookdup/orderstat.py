"""How ordered are the shared words? A size-free significance of an |LCS| (issue 12).

If two books shared ``n`` distinct items in unrelated orders, the |LCS| of the shared items
would be the longest increasing subsequence of a random permutation of ``n``: mean
2·sqrt(n) + c₁·n^(1/6) and standard deviation c₂·n^(1/6), with c₁ ≈ −1.7711 and c₂ ≈ 0.9018
the mean and standard deviation of the Tracy–Widom GUE law (Baik, Deift & Johansson 1999).
The |LCS| of a related pair is a large share of ``n`` (a translation keeps most of its
matched words in order), so

    z = (|LCS| − mean(n)) / sd(n)

measures the evidence in standard deviations of the null, whatever the sizes of the books and
of the lexicon: TRANS-its (log|LCS| / log(|X| + |Y| − |LCS|)) mixes that evidence with the
book sizes and the lexicon's coverage, so no one threshold on it holds across books.

Where items repeat (one-to-many translation puts every translation of a word in its place),
the |LCS| under the null is larger than for ``n`` distinct items. That null is calibrated by
shuffling: the source words (each with all its translations, kept together) are put in a
random order, the |LCS| recomputed a few times, and its mean taken; the spread is the
Tracy–Widom one of the permutation whose LIS has that mean (a handful of shuffles estimates a
mean well but a standard deviation poorly). Shuffles are seeded from the sequences, so a
pair always gets the same z.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

__all__ = [
    "FINITE_N_MEAN",
    "TW_MEAN",
    "TW_SD",
    "OrderEvidence",
    "SequentialEvidence",
    "calibrated",
    "describe_order",
    "lis_null_mean",
    "lis_null_sd",
    "order_evidence",
    "sequential_evidence",
    "shuffled_evidence",
]

#: Mean and standard deviation of the Tracy–Widom GUE distribution (β = 2).
TW_MEAN = -1.7710868
TW_SD = 0.9018
#: Finite-size constant of the mean, measured on simulated permutations (400 each): the
#: asymptotic mean is 0.35–0.65 short for n from 10 to 6,400 (tests/bookdup/test_orderstat.py).
#: The asymptotic sd is kept as it is: it overstates the spread by 7–19 % at those sizes,
#: which only makes z conservative.
FINITE_N_MEAN = 0.5


@njit(cache=True)
def null_mean(n: float) -> float:
    """``lis_null_mean``, compiled (the kernels' and, cached, Python's)."""
    if n <= 1:
        return float(n)
    return max(1.0, 2.0 * math.sqrt(n) + TW_MEAN * n ** (1.0 / 6.0) + FINITE_N_MEAN)


@njit(cache=True)
def null_sd(n: int) -> float:
    """``lis_null_sd``, compiled."""
    return max(0.5, TW_SD * max(n, 1) ** (1.0 / 6.0))


@njit(cache=True)
def null_n(mean: float) -> int:
    """``_effective_n``, compiled."""
    lo, hi = 1, max(4, math.ceil(mean * mean))
    while lo < hi:
        mid = (lo + hi) // 2
        if null_mean(mid) < mean:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def z_at(lcs: int, mean: float) -> float:
    """z of ``lcs`` against a null of ``mean``, whose sd is the Tracy–Widom one there."""
    return (lcs - mean) / null_sd(null_n(mean))


@njit(cache=True)
def sequential_error(sd: float, k: int, shuffles: int, sigmas: float) -> float:
    """How far the mean of all ``shuffles`` may plausibly lie from that of the first ``k``:
    ``sigmas`` standard errors of the estimate plus the spread of the ``shuffles`` - k to
    come, each with the null's ``sd`` (``sequential_evidence``; the screen's kernel)."""
    rest = (shuffles - k) / shuffles
    return sigmas * sd * math.sqrt(rest * rest / k + rest / shuffles)


# The Python API over the compiled definitions, cached: the kernels and Python read one formula.
@lru_cache(maxsize=1 << 16)
def lis_null_mean(n: int) -> float:
    """Expected LIS of a uniform random permutation of ``n`` (BDJ asymptotics, exact at 0, 1)."""
    return float(null_mean(n))


@lru_cache(maxsize=1 << 16)
def lis_null_sd(n: int) -> float:
    """Standard deviation of that LIS (Tracy–Widom scale n^(1/6)); at least 0.5 for tiny n."""
    return float(null_sd(n))


@lru_cache(maxsize=1 << 16)
def _effective_n(mean: float) -> int:
    """The smallest permutation size whose expected LIS reaches ``mean`` (inverse of
    ``lis_null_mean``, which is non-decreasing): a bisection over the integers."""
    return int(null_n(mean))


@dataclass(frozen=True)
class OrderEvidence:
    """|LCS| of ``n`` shared items against its null: mean, sd and z in null sds.

    ``shuffles``: how many shuffles calibrated the null (0: the distinct-item formula).
    ``window``: when the evidence is from a window of the bigger book
    (``bookdup.orderscan``), which book ("x" or "y") and the window's start and end as
    fractions of its unique words; None for the whole pair.
    """

    n: int
    lcs: int
    null_mean: float
    null_sd: float
    z: float
    shuffles: int = 0
    window: tuple[str, float, float] | None = None

    def to_dict(self) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {
            "n": self.n,
            "lcs": self.lcs,
            "null_mean": round(self.null_mean, 2),
            "null_sd": round(self.null_sd, 3),
            "z": round(self.z, 2),
            "shuffles": self.shuffles,
        }
        if self.window is not None:
            side, start, end = self.window
            out |= {"window_of": side, "window_start": round(start, 4), "window_end": round(end, 4)}
        return out


def order_evidence(lcs: int, n: int) -> OrderEvidence:
    """z of an |LCS| over ``n`` shared *distinct* items (both sequences without repeats)."""
    mean, sd = lis_null_mean(n), lis_null_sd(n)
    return OrderEvidence(n, lcs, mean, sd, (lcs - mean) / sd if n else 0.0)


def _shuffled_lcs(
    groups: np.ndarray, lcs_of_order: Callable[[np.ndarray], int], seed: int
) -> Iterator[int]:
    """|LCS| of x's groups in one random order after another (the seed fixes the stream)."""
    rng = np.random.default_rng(seed)
    if groups.size > 1 and bool(np.all(groups[1:] >= groups[:-1])):
        # groups in runs (x in reading order, the verifier's case): lay the runs out in the
        # permuted order directly, O(n) instead of a sort
        start = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        length = np.diff(np.r_[start, groups.size])
        order = np.empty(start.size, dtype=np.int64)
        ranks = np.arange(start.size)
        while True:
            order[rng.permutation(start.size)] = ranks  # the inverse: argsort of a permutation
            size = length[order]
            base = np.repeat(start[order] - (np.cumsum(size) - size), size)
            yield lcs_of_order(base + np.arange(groups.size))
    ids = np.unique(groups)
    rank = np.searchsorted(ids, groups)
    within = np.arange(groups.size)
    while True:
        key = rng.permutation(ids.size)[rank]
        yield lcs_of_order(np.lexsort((within, key)))


def calibrated(lcs: int, n: int, values: list[int]) -> OrderEvidence:
    """z of an |LCS| over ``n`` shared items against the shuffled |LCS| ``values``."""
    # sum / len, not np.mean (~5 us on a short list): the sum of ints is exact, so the same mean
    mean = max(sum(values) / len(values), lis_null_mean(n))  # repeats only add chance matches
    sd = lis_null_sd(_effective_n(mean))
    return OrderEvidence(n, lcs, mean, sd, (lcs - mean) / sd, len(values))


def shuffled_evidence(
    lcs: int,
    n: int,
    groups: np.ndarray,
    lcs_of_order: Callable[[np.ndarray], int],
    *,
    shuffles: int = 8,
    seed: int = 0,
) -> OrderEvidence:
    """z of an |LCS| whose items may repeat, its null calibrated by shuffling groups.

    ``groups``: the group (source word) of each item of the restricted x sequence, in order;
    ``lcs_of_order(order)`` is the |LCS| of x's items taken in ``order`` (an index array) with
    y. Each shuffle puts the groups in a random order and keeps each group's items together.
    """
    if n == 0 or groups.size == 0:
        return OrderEvidence(n, lcs, 0.0, lis_null_sd(0), 0.0, 0)
    stream = _shuffled_lcs(groups, lcs_of_order, seed)
    return calibrated(lcs, n, [next(stream) for _ in range(shuffles)])


#: How many standard errors the fully calibrated null mean may lie from a partial one before
#: a sequential decision stops early (``sequential_evidence``): 4 leaves about 3 in 100,000
#: per pair to chance, and the decisions are checked equal to the full calibration's on every
#: real pair (tests/bookdup/test_order_decision.py).
SEQUENTIAL_SIGMAS = 4.0


@dataclass(frozen=True)
class SequentialEvidence:
    """The outcome of ``sequential_evidence``.

    ``evidence``: from the shuffles run (all of them when the decision stayed open, then
    equal to ``shuffled_evidence``'s); ``verdict``: "below" (the full calibration's z would
    be below ``below``), "above" (at least ``above``) or "open"; ``mean_low``: the lowest
    null mean the full calibration could plausibly give (its own mean when open).
    """

    evidence: OrderEvidence
    verdict: str
    mean_low: float


def sequential_evidence(
    lcs: int,
    n: int,
    groups: np.ndarray,
    lcs_of_order: Callable[[np.ndarray], int],
    *,
    below: float,
    above: float,
    shuffles: int = 8,
    seed: int = 0,
    sigmas: float = SEQUENTIAL_SIGMAS,
    min_below: int = 1,
) -> SequentialEvidence:
    """``shuffled_evidence`` that stops as soon as its z is surely below ``below`` or above
    ``above`` — the calibration of a decision, which only needs z against its thresholds.

    The shuffles are those of ``shuffled_evidence`` with the same seed, drawn one at a time.
    After k of ``shuffles``, the full calibration's mean is the k values' mean plus the
    unknown rest: its standard error combines the uncertainty of the mean estimated from k
    values and the spread of the ``shuffles`` − k to come, each with the null's sd (the
    Tracy–Widom one of the estimated mean, or the values' own spread if larger). The
    decision stops when z at ``sigmas`` standard errors either side is on one side of
    [below, above]. ``min_below``: the fewest shuffles before a "below" verdict (a tighter
    ``mean_low`` for a caller that goes on with it).
    """
    if n == 0 or groups.size == 0:
        return SequentialEvidence(OrderEvidence(n, lcs, 0.0, lis_null_sd(0), 0.0, 0), "below", 0)
    floor = lis_null_mean(n)
    stream = _shuffled_lcs(groups, lcs_of_order, seed)
    values: list[int] = []
    for k in range(1, shuffles):
        values.append(next(stream))
        mean = max(float(np.mean(values)), floor)
        sd = lis_null_sd(_effective_n(mean))
        if k > 1:
            sd = max(sd, float(np.std(values, ddof=1)))
        error = sequential_error(sd, k, shuffles, sigmas)
        low, high = max(mean - error, floor), max(mean + error, floor)
        z_low, z_high = sorted((z_at(lcs, low), z_at(lcs, high)))
        if z_high < below and k >= min_below:
            return SequentialEvidence(calibrated(lcs, n, values), "below", low)
        if z_low >= above:
            return SequentialEvidence(calibrated(lcs, n, values), "above", low)
    values.append(next(stream))
    evidence = calibrated(lcs, n, values)
    return SequentialEvidence(evidence, "open", evidence.null_mean)


def describe_order(order: dict[str, Any] | None, names: tuple[str, str] = ("x", "y")) -> str:
    """One sentence for a reader: how ordered the shared items are, against chance.

    ``order``: ``OrderEvidence.to_dict()`` of a comparison (None: not computed); ``names``:
    what to call the compared books x and y.
    """
    if not order:
        return "Order of the shared words: not computed (pruned below the floor)."
    text = (
        f"Order of the shared words: {order['lcs']} of {order['n']} in order, where random "
        f"order gives {order['null_mean']:.0f} ± {order['null_sd']:.1f}: z = {order['z']:.1f}"
    )
    if order.get("window_of"):
        book = names[0] if order["window_of"] == "x" else names[1]
        start, end = 100 * float(order["window_start"]), 100 * float(order["window_end"])
        text += f", strongest in {start:.0f}–{end:.0f} % of {book} (the part that matches)"
    return text + "."
