"""OCR-like character noise: uniform insertion, deletion and replacement at a given rate.

This is the noise model of the DUPNIQ / TRANS experiments: every character is independently
edited with probability ``rate``, the edit being an insert (before it), a delete or a replace, each
equally likely; inserted and replacement characters are drawn uniformly from the book's alphabet.
Line and page breaks are never edited, so pagination survives as it does in real OCR output.
"""

from __future__ import annotations

import numpy as np

_PROTECTED = (ord("\n"), ord("\f"))


def add_noise(pages: list[str], rate: float, rng: np.random.Generator) -> list[str]:
    """Return noisy copies of ``pages``; the expected edit distance is ``rate`` x characters."""
    if rate <= 0 or not pages:
        return list(pages)
    text = "\f".join(pages)
    a = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    editable = ~np.isin(a, _PROTECTED)
    alphabet = np.unique(a[editable])
    if len(alphabet) < 2:
        return list(pages)
    n = len(a)
    edit = (rng.random(n) < rate) & editable
    kind = rng.integers(0, 3, n)
    delete = edit & (kind == 0)
    replace = edit & (kind == 1)
    insert = edit & (kind == 2)
    out = a.copy()
    pos = np.searchsorted(alphabet, a[replace])
    shift = rng.integers(1, len(alphabet), int(replace.sum()))  # never the same character
    out[replace] = alphabet[(pos + shift) % len(alphabet)]
    slots = (~delete).astype(np.int64) + insert
    last = np.cumsum(slots) - 1  # output index of each kept character
    result = np.empty(int(slots.sum()), dtype=np.uint32)
    result[last[~delete]] = out[~delete]
    result[last[insert] - 1] = alphabet[rng.integers(0, len(alphabet), int(insert.sum()))]
    return result.tobytes().decode("utf-32-le").split("\f")
