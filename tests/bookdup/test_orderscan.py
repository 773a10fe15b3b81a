"""The order statistic over windows of the bigger book: its null, and the part it finds."""

from __future__ import annotations

import numpy as np
from rapidfuzz.distance import LCSseq

from bookdup.lcs import encode_ranks
from bookdup.orderscan import ScanInput, scan_windows, windows
from bookdup.orderstat import OrderEvidence, order_evidence


def test_windows_cover_every_size_half_overlapping() -> None:
    got = list(windows(160))
    assert got[0] == (0, 160)
    assert (0, 80) in got and (40, 120) in got and (80, 160) in got
    assert (0, 10) in got and (150, 160) in got  # sixteenths
    assert len(got) == len(set(got)) == 1 + 3 + 7 + 15 + 31
    for start, end in got:
        assert 0 <= start < end <= 160


def _scan(x: np.ndarray, y: np.ndarray) -> tuple[float, float, object]:
    """(whole z, scanned z, window) of two distinct-item sequences (items: ints)."""
    shared = np.intersect1d(x, y)
    px = np.flatnonzero(np.isin(x, shared))
    py = np.flatnonzero(np.isin(y, shared))
    cx = np.searchsorted(shared, x[px])
    cy = np.searchsorted(shared, y[py])
    lcs = int(LCSseq.similarity(encode_ranks(cx), encode_ranks(cy)))
    whole = order_evidence(lcs, int(shared.size))
    best = scan_windows(ScanInput(px, cx, py, cy, x.size, y.size), whole)
    return whole.z, best.z, best.window


def test_a_translated_part_of_a_bigger_book_is_found_in_its_window() -> None:
    rng = np.random.default_rng(1)
    big = rng.permutation(20_000)  # the bigger book: 4,000 unique words ...
    big = big[:4000]
    # ... its first tenth translated in order, with a third of the words lost, and words
    # matching the rest of the big book by chance, in random order
    part = big[:400][rng.random(400) < 0.67]
    noise = rng.choice(big[400:], 700, replace=False)
    small = np.concatenate([part, noise])
    small = small[np.argsort(np.concatenate([np.arange(part.size) * 2.5, rng.random(700) * 1000]))]
    whole_z, best_z, window = _scan(big, small)
    assert best_z > whole_z + 10
    assert window is not None and window[0] == "x" and window[1] == 0.0 and window[2] <= 0.125


def test_random_orders_stay_near_chance_after_the_scan() -> None:
    rng = np.random.default_rng(2)
    zs = []
    for _ in range(60):
        vocab = rng.permutation(50_000)
        x, y = vocab[:3000], rng.permutation(vocab[:6000])[:1500]
        zs.append(_scan(x, y)[1])
    z = np.array(zs)
    # the best of 61 windows lifts the null by a couple of sds, never near the TRANSLATION
    # floor (6)
    assert z.max() < 5.0
    assert np.median(z) < 3.0


def _partly_translated(rng: np.random.Generator, part_size: int, noise_size: int, spread: float):
    """A big book and a small one holding an ordered part of it among chance matches."""
    big = rng.permutation(30_000)[:2000]
    part = big[:part_size][rng.random(part_size) < 0.6]
    noise = rng.choice(big, noise_size, replace=False)
    small = np.concatenate([part, noise])
    small = small[
        np.argsort(
            np.concatenate([np.arange(part.size), rng.random(noise_size) * part.size * spread])
        )
    ]
    _, first = np.unique(small, return_index=True)
    return big, small[np.sort(first)]


def _reference_scan(data: ScanInput, whole, floor: float | None = None):
    """The scan as first written: every window cut out and restricted on its own, its |LCS|
    from rapidfuzz, its best window calibrated through rapidfuzz too."""
    from dataclasses import replace

    from bookdup.orderscan import _pairs, _restricted
    from bookdup.orderstat import lis_null_mean, lis_null_sd, shuffled_evidence

    on_x = data.nx >= data.ny
    pos, n = (data.gx, data.nx) if on_x else (data.py, data.ny)
    k = int(max(data.cx.max(initial=-1), data.cy.max(initial=-1))) + 1
    whole_mean = whole.null_mean if whole.shuffles else lis_null_mean(whole.n)
    lift = whole_mean / max(lis_null_mean(_pairs(data.cx, data.cy, k)), 1.0)
    limit = max(whole.z, floor if floor is not None else -np.inf)
    best = None
    for start, end in windows(n):
        if (start, end) == (0, n):
            continue
        inside = (pos >= start) & (pos < end)
        if on_x:
            gx, cx, cy = data.gx[inside], data.cx[inside], data.cy
        else:
            gx, cx, cy = data.gx, data.cx, data.cy[inside]
        gx, cx, cy, shared = _restricted(gx, cx, cy, k)
        if shared == 0:
            continue
        lcs = int(LCSseq.similarity(encode_ranks(cx), encode_ranks(cy)))
        mean = max(lis_null_mean(shared), lift * lis_null_mean(_pairs(cx, cy, k)))
        estimate = (lcs - mean) / lis_null_sd(shared)
        if best is None or estimate > best[0]:
            best = (estimate, (start, end), (gx, cx, cy), lcs, shared)
    if best is None or best[0] <= limit:
        return whole
    _, (start, end), (gx, cx, cy), lcs, shared = best
    sy = encode_ranks(cy)
    evidence = shuffled_evidence(
        lcs,
        shared,
        gx,
        lambda o: int(LCSseq.similarity(encode_ranks(cx[o]), sy)),
        seed=lcs * 7919 + shared,
    )
    if evidence.z <= whole.z:
        return whole
    return replace(evidence, window=("x" if on_x else "y", start / n, end / n))


def test_the_compiled_scan_equals_the_window_by_window_scan() -> None:
    """Windows read off shared passes of the compiled kernel give the evidence of cutting
    out every window and aligning it alone, related or not, windows on x or on y."""
    rng = np.random.default_rng(3)
    cases = [_partly_translated(rng, 50 + 10 * i, 300 + 20 * i, i % 3) for i in range(40)]
    won = 0
    for big, small in cases:
        for x, y in ((big, small), (small, big)):
            shared = np.intersect1d(x, y)
            px, py = np.flatnonzero(np.isin(x, shared)), np.flatnonzero(np.isin(y, shared))
            cx, cy = np.searchsorted(shared, x[px]), np.searchsorted(shared, y[py])
            lcs = int(LCSseq.similarity(encode_ranks(cx), encode_ranks(cy)))
            whole = order_evidence(lcs, int(shared.size))
            data = ScanInput(px, cx, py, cy, x.size, y.size)
            got = scan_windows(data, whole)
            assert got == _reference_scan(data, whole)
            won += got.window is not None
    assert won >= 20  # windows won often


def _general_scan(rng: np.random.Generator) -> tuple[ScanInput, OrderEvidence]:
    """The verifier's translated path: x's items repeat (several source words, one
    translation), the whole pair's null calibrated by shuffling, an optional floor."""
    from bookdup.orderstat import shuffled_evidence

    k = 600
    gx = np.sort(rng.choice(5000, 1500, replace=False))  # x's source words, in reading order
    cx = rng.integers(0, k, gx.size)  # their translations: codes that repeat
    part = int(rng.choice([0, 0, 40, 150, 300]))  # y translates a part of x (or none) ...
    cy = np.concatenate([cx[:part][rng.random(part) < 0.6], rng.permutation(k)[:300]])
    cy = cy[np.argsort(np.concatenate([np.arange(cy.size - 300), rng.random(300) * 400]))]
    _, first = np.unique(cy, return_index=True)
    cy = cy[np.sort(first)]  # ... and its own words are distinct
    keep = np.isin(cx, cy)
    gx, cx = gx[keep], cx[keep]
    py = np.arange(cy.size)
    sy = encode_ranks(cy)
    lcs = int(LCSseq.similarity(encode_ranks(cx), sy))
    shared = int(np.intersect1d(cx, cy).size)
    whole = shuffled_evidence(
        lcs, shared, gx, lambda o: int(LCSseq.similarity(encode_ranks(cx[o]), sy)), seed=lcs
    )
    return ScanInput(gx, cx, py, cy, 5000, cy.size), whole


def test_the_compiled_scan_equals_it_with_repeated_items_shuffled_nulls_and_floors() -> None:
    """The same with items repeating on x, as a translated book's do, and the verifier's
    floors: every field of the evidence, the window included, is unchanged."""
    found = []
    for seed in range(12):
        for floor in (None, 4.0, 9.0):
            data, whole = _general_scan(np.random.default_rng(seed))
            found.append(scan_windows(data, whole, floor))
            assert found[-1] == _reference_scan(data, whole, floor)
    assert sum(e.window is not None for e in found) >= 5  # windows won often ...
    assert sum(e.window is None for e in found) >= 5  # ... and lost (unrelated pairs)
