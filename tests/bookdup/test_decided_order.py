"""The order decision of a translated pair (``bookdup.verify._decided_order``) against the full
calibration (8 shuffles, then the window scan with the floor), on generated pairs: unrelated,
translating all or part of the other book, near the floor and far from it. The real pairs'
test is tests/bookdup/test_order_decision.py (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from bookdup.bitlcs import Pattern, lcs_stream
from bookdup.orderscan import ScanInput, scan_windows, window_counts
from bookdup.orderstat import shuffled_evidence
from bookdup.verify import _decided_order


def _pair(seed: int) -> tuple[int, int, np.ndarray, Pattern, ScanInput]:
    """x's items repeat (several translations per source word), y's are distinct; y
    translates none, a part or all of x, kept in order with some noise."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(150, 700))
    size = int(rng.integers(300, 2000))
    gx = np.sort(rng.choice(6000, size, replace=False))
    cx = rng.integers(0, k, gx.size)
    part = int(rng.choice([0, 0, 20, 60, 150, 400, size]))
    keep = float(rng.uniform(0.2, 0.9))
    start = int(rng.integers(0, max(1, size - part)))
    mine = cx[start : start + part][rng.random(min(part, size - start)) < keep]
    noise = rng.permutation(k)[: int(rng.integers(50, 300))]
    cy = np.concatenate([mine, noise])
    cy = cy[np.argsort(np.concatenate([np.arange(mine.size), rng.random(noise.size) * mine.size]))]
    _, first = np.unique(cy, return_index=True)
    cy = cy[np.sort(first)]
    inx = np.isin(cx, cy)
    gx, cx = gx[inx], cx[inx]
    cy = cy[np.isin(cy, cx)]
    pattern = Pattern(cy, k)
    lcs = lcs_stream(pattern, cx)
    shared = int(np.intersect1d(cx, cy).size)
    data = ScanInput(gx, cx, np.arange(cy.size), cy, 6000, int(rng.integers(cy.size, 4000)))
    return lcs, shared, gx, pattern, data


@pytest.mark.parametrize("min_z", [3.0, 6.0])
def test_the_decision_equals_the_full_calibration_on_generated_pairs(min_z: float) -> None:
    max_z = min_z + 6.0
    sides = {"below": 0, "between": 0, "above": 0}
    early = 0
    for seed in range(150):
        lcs, shared, gx, pattern, data = _pair(seed)
        if shared == 0:
            continue

        def of_order(o: np.ndarray, cx: np.ndarray = data.cx, p: Pattern = pattern) -> int:
            return lcs_stream(p, cx[o])

        s = lcs * 7919 + shared
        full = scan_windows(data, shuffled_evidence(lcs, shared, gx, of_order, seed=s), min_z)
        fast = _decided_order(lcs, shared, gx, of_order, s, data, min_z, max_z)
        if full.z < min_z:
            sides["below"] += 1
            assert fast.z < min_z
            early += fast.shuffles < 3
        elif full.z < max_z:
            sides["between"] += 1
            assert fast == full  # the classifier reads z between the lines: exactly
        else:
            sides["above"] += 1
            assert fast.z >= max_z
    assert min(sides.values()) >= 5, sides  # every side of the lines is exercised
    assert early >= 10  # and pairs below were decided on their first look


def test_the_scan_on_counts_computed_once_equals_the_scan() -> None:
    for seed in range(40):
        lcs, shared, gx, pattern, data = _pair(seed)
        if shared == 0:
            continue
        whole = shuffled_evidence(
            lcs, shared, gx, lambda o, cx=data.cx, p=pattern: lcs_stream(p, cx[o]), seed=seed
        )
        counts = window_counts(data)
        for floor in (None, 3.0, 6.0):
            assert scan_windows(data, whole, floor, counts) == scan_windows(data, whole, floor)


def test_restricting_by_rank_equals_gathering_and_sorting() -> None:
    """``_restrict`` reads codes through the cached rank: the same positions and codes as
    gathering each shared value's positions and sorting them (its former form)."""
    from bookdup.verify import _prepare, _restrict, _shared_indices, _Stems

    def reference(p, idx):  # type: ignore[no-untyped-def]
        lo, counts = p.starts[idx], np.diff(p.starts)[idx]
        codes = np.repeat(np.arange(idx.size), counts)
        offsets = np.arange(codes.size) - np.repeat(np.cumsum(counts) - counts, counts)
        pos = p.order[lo[codes] + offsets]
        by_pos = np.argsort(pos)
        return pos[by_pos], codes[by_pos]

    rng = np.random.default_rng(11)
    for _ in range(60):
        n, m = int(rng.integers(0, 3000)), int(rng.integers(0, 3000))
        hx = rng.integers(0, int(rng.integers(1, 4000)), n).astype(np.uint32)  # repeats
        hy = rng.permutation(5000)[:m].astype(np.uint32)  # distinct
        a = _prepare(_Stems(hx, np.zeros(n, dtype=np.int32)), None)
        b = _prepare(_Stems(hy, np.zeros(m, dtype=np.int32)), None)
        ia, ib = _shared_indices(a, b)
        px, py, cx, cy = _restrict(a, b, ia, ib)
        for (pos, codes), (p, idx) in zip(((px, cx), (py, cy)), ((a, ia), (b, ib)), strict=True):
            want_pos, want_codes = reference(p, idx)
            assert np.array_equal(pos, want_pos) and np.array_equal(codes, want_codes)
