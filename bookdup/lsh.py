"""LSH banding of min-hash signatures into keyword terms ("super-shingles").

A signature of ``b * r`` values is cut into b bands of r rows; each band is hashed into one
keyword term. Two books whose signatures agree on a whole band share that term, so a term
query finds them. With Jaccard s, P(candidate) = 1 - (1 - s^r)^b: the S-curve.

Defaults (num_perm=128, threshold=0.5 -> ``choose_bands`` gives b=25, r=5, 125 values used):

======  ======  ======  ======  ======  ======  ======  ======  ======
s       0.1     0.2     0.3     0.4     0.5     0.6     0.7     0.8
P       0.0002  0.0080  0.0590  0.2269  0.5478  0.8678  0.9899  1.0000
======  ======  ======  ======  ======  ======  ======  ======  ======

So near-identical editions (s >= 0.7) are found with probability > 0.99 and unrelated books
(s <= 0.1, e.g. shared Gutenberg boilerplate) almost never become candidates by bands.
"""

from __future__ import annotations

from functools import cache

import mmh3
import numpy as np


@cache
def choose_bands(num_perm: int, threshold: float) -> tuple[int, int]:
    """(bands, rows) with bands * rows <= num_perm minimising FP + FN area around threshold.

    False-positive area: integral of P(s) over [0, threshold]; false-negative area: integral
    of 1 - P(s) over [threshold, 1]; equal weights (the idea of datasketch's _optimal_param).
    """
    if num_perm < 1 or not 0.0 < threshold < 1.0:
        raise ValueError("need num_perm >= 1 and 0 < threshold < 1")
    lo = np.linspace(0.0, threshold, 1001)
    hi = np.linspace(threshold, 1.0, 1001)
    best: tuple[float, int, int] | None = None
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = np.trapezoid(1.0 - (1.0 - lo**r) ** b, lo)
            fn = np.trapezoid((1.0 - hi**r) ** b, hi)
            if best is None or fp + fn < best[0]:
                best = (float(fp + fn), b, r)
    assert best is not None
    return best[1], best[2]


def band_keys(signature: np.ndarray, bands: int, rows: int) -> list[str]:
    """One keyword term per band: ``"<band>_<16 hex digits of mmh3 x64 of the band's bytes>"``.

    The band number is part of the term so equal values in different bands do not collide.
    """
    sig = np.ascontiguousarray(signature)
    if bands * rows > len(sig):
        raise ValueError(f"{bands} bands x {rows} rows need {bands * rows} values, got {len(sig)}")
    raw = sig.tobytes()
    width = sig.itemsize * rows
    return [
        f"{i}_{mmh3.hash64(raw[i * width : (i + 1) * width], 0, signed=False)[0]:016x}"
        for i in range(bands)
    ]
