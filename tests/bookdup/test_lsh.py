"""LSH banding: parameter choice, S-curve, band keys."""

import numpy as np
import pytest

from bookdup.lsh import band_keys, choose_bands


def s_curve(s: float, bands: int, rows: int) -> float:
    """P(two signatures with Jaccard s share at least one band) = 1 - (1 - s^r)^b."""
    return 1.0 - (1.0 - s**rows) ** bands


def test_choose_bands_defaults():
    assert choose_bands(128, 0.5) == (25, 5)
    b, r = choose_bands(100, 0.8)
    assert b * r <= 100 and r > 5  # higher threshold -> more rows per band


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7])
def test_s_curve_steps_at_threshold(threshold):
    b, r = choose_bands(128, threshold)
    assert s_curve(threshold - 0.25, b, r) < 0.25
    assert s_curve(min(threshold + 0.25, 1.0), b, r) > 0.9
    # the S-curve's midpoint is near the threshold
    assert abs((1 / b) ** (1 / r) - threshold) < 0.1


def test_s_curve_values():
    assert s_curve(0.0, 25, 5) == 0.0
    assert s_curve(1.0, 25, 5) == 1.0
    assert s_curve(0.5, 25, 5) == pytest.approx(1 - (1 - 0.5**5) ** 25)


def test_choose_bands_rejects_bad_input():
    with pytest.raises(ValueError):
        choose_bands(128, 1.5)


def test_band_keys_collide_only_on_equal_bands():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    b = a.copy()
    b[7] ^= 1  # band 1 (rows 5..9) differs
    ka, kb = band_keys(a, 25, 5), band_keys(b, 25, 5)
    assert len(ka) == 25 and len(set(ka)) == 25
    assert ka[0].startswith("0_") and len(ka[0].split("_")[1]) == 16
    differing = [i for i in range(25) if ka[i] != kb[i]]
    assert differing == [1]


def test_band_keys_include_band_number():
    sig = np.zeros(10, dtype=np.uint32)  # equal values in both bands
    k = band_keys(sig, 2, 5)
    assert k[0] != k[1] and k[0].split("_")[1] == k[1].split("_")[1]


def test_band_keys_too_short_signature():
    with pytest.raises(ValueError):
        band_keys(np.zeros(10, np.uint32), 3, 5)
