"""Word-shingle min-hash signatures: one-permutation hashing (OPH) with optimal densification.

Fingerprints: each distinct word is hashed once (mmh3 x64, 64 bits); a k-shingle at position i is
``fmix64(sum_j h[i+j] * M_j)`` in wrapping uint64 arithmetic, with fixed odd multipliers M_j
(so order matters: "a b" != "b a") and the murmur3 64-bit finaliser to spread the bits. That is
k vectorised multiply-adds over the whole book instead of one Python hash call per shingle.

Signatures: one hash function instead of ``num_perm`` (Li, Owen & Zhang 2012): the high 32 bits
of a fingerprint pick its bin (``(hi * K) >> 32``), the low 32 bits are its value, and each bin
keeps its minimum. Empty bins are filled by *optimal densification* (Shrivastava 2017): empty bin
i probes bins ``g(i, 0), g(i, 1), ...`` (a fixed hash sequence, the same for every set) and copies
the first non-empty one, which keeps the estimator unbiased with low variance even for sets much
smaller than K. Page signatures are computed for all pages at once (``np.minimum.at`` over
``page * K + bin``) and stored b-bit (Li & König 2010): only the low ``bits`` bits of each
minimum, which ``jaccard`` corrects for accidental collisions.

Short input: a book or page with fewer than k (but at least one) words uses its words as
1-shingles, so short pages and books still get a meaningful signature. A book or page with no
words at all gets the all-``EMPTY`` signature (all bits set); ``extract_features`` flags such
books ``"empty"`` and ``page_jaccard_matrix`` scores empty pages 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import mmh3
import numpy as np
from numba import njit

_M = np.random.default_rng(0x5EED_B00C).integers(0, 2**63, size=64, dtype=np.uint64) * np.uint64(
    2
) + np.uint64(1)  # fixed odd multipliers, one per shingle position (k <= 64)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_PROBE_A = np.uint64(0x9E3779B97F4A7C15)
_PROBE_B = 0xD6E8FEB86659FD93
_MASK32 = np.uint64(0xFFFFFFFF)
_EMPTY = np.uint64(1 << 32)  # above every 32-bit value: marks an empty bin while densifying


def fmix64(x: np.ndarray) -> np.ndarray:
    """murmur3 64-bit finaliser (a bijection that spreads every input bit over the output)."""
    x = x ^ (x >> np.uint64(33))
    x = x * _C1
    x = x ^ (x >> np.uint64(33))
    x = x * _C2
    return x ^ (x >> np.uint64(33))


def word_hashes64(words: Sequence[str]) -> np.ndarray:
    """64-bit mmh3 hash of each word (uint64)."""
    return np.fromiter((mmh3.hash64(w, 0, signed=False)[0] for w in words), np.uint64, len(words))


def fingerprints_from_hashes(h: np.ndarray, k: int = 5) -> np.ndarray:
    """k-shingle fingerprints from per-position word hashes (1-shingles if 0 < len < k)."""
    n = len(h)
    if not 1 <= k <= len(_M):
        raise ValueError(f"k must be in 1..{len(_M)}")
    if n == 0:
        return np.zeros(0, np.uint64)
    if n < k:
        k = 1
    m = n - k + 1
    acc = h[:m] * _M[0]
    for j in range(1, k):
        acc += h[j : j + m] * _M[j]
    return fmix64(acc)


def _probe(cols: np.ndarray, attempts: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin probed by empty bin ``cols`` at ``attempts``: g(i, t), the same for every set."""
    key = cols.astype(np.uint64) * _PROBE_A + attempts.astype(np.uint64) * np.uint64(_PROBE_B)
    return (fmix64(key) % np.uint64(n_bins)).astype(np.intp)


@cache
def _probe_table(n_bins: int) -> np.ndarray:
    """g(i, t) for the first 4 * n_bins attempts of every bin, shape (n_bins, 4 * n_bins)."""
    t = np.arange(4 * n_bins)
    return _probe(np.arange(n_bins)[:, None], t[None, :], n_bins)


def _densify(bins: np.ndarray) -> None:
    """Optimal densification in place over rows of ``bins`` (uint64, ``_EMPTY`` = empty).

    The first probes come from a cached table, tried for many empty bins at once (a block
    of candidates and ``argmax`` of the first filled one); the rare bins still empty after
    4K probes continue one attempt at a time.
    """
    n_bins = bins.shape[1]
    filled = bins != _EMPTY
    has_any = filled.any(axis=1)
    rows, cols = np.nonzero(~filled & has_any[:, None])
    table = _probe_table(n_bins)
    attempt = 0
    for width in (8, table.shape[1]):
        left_r, left_c = [], []
        step = max(1, 2**22 // width)  # bounds the candidate block to ~4M entries
        for i in range(0, rows.size, step):
            r, c = rows[i : i + step], cols[i : i + step]
            cand = table[c, attempt:width]
            ok = filled[r[:, None], cand]
            found = ok.any(axis=1)
            src = cand[np.arange(len(cand)), ok.argmax(axis=1)]
            bins[r[found], c[found]] = bins[r[found], src[found]]
            left_r.append(r[~found])
            left_c.append(c[~found])
        if not left_r:
            return
        rows, cols, attempt = np.concatenate(left_r), np.concatenate(left_c), width
    while rows.size:
        src = _probe(cols, np.full(cols.shape, attempt), n_bins)
        ok = filled[rows, src]
        bins[rows[ok], cols[ok]] = bins[rows[ok], src[ok]]
        rows, cols = rows[~ok], cols[~ok]
        attempt += 1


def _oph(fp: np.ndarray, groups: np.ndarray | None, n_groups: int, num_perm: int) -> np.ndarray:
    """OPH signatures (uint64 values < 2^32, or ``_EMPTY``) of fingerprints grouped by row."""
    bins = np.full(n_groups * num_perm, _EMPTY, dtype=np.uint64)
    slot = ((fp >> np.uint64(32)) * np.uint64(num_perm)) >> np.uint64(32)
    if groups is not None:
        slot = slot + groups.astype(np.uint64) * np.uint64(num_perm)
    np.minimum.at(bins, slot.astype(np.intp), fp & _MASK32)
    signatures = bins.reshape(n_groups, num_perm)
    _densify(signatures)
    return signatures


def minhash(fingerprints: np.ndarray, num_perm: int = 128) -> np.ndarray:
    """Book signature: OPH + densification, uint32[num_perm]; all 0xFFFFFFFF when empty."""
    fp = np.asarray(fingerprints, dtype=np.uint64)
    sig = _oph(fp, None, 1, num_perm)[0]
    return np.minimum(sig, _MASK32).astype(np.uint32)


def page_fingerprints(
    h: np.ndarray, page_lengths: np.ndarray, k: int = 5
) -> tuple[np.ndarray, np.ndarray]:
    """Fingerprints of shingles lying within one page, and the page of each (all pages at once).

    ``h`` is the per-position word hash of the whole book (pages concatenated).
    Pages shorter than k words contribute their words as 1-shingles.
    """
    lengths = np.asarray(page_lengths, dtype=np.int64)
    n_pages = len(lengths)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    page_of_pos = np.repeat(np.arange(n_pages, dtype=np.int64), lengths)
    parts_fp, parts_pg = [], []
    if len(h) >= k:
        fp = fingerprints_from_hashes(h, k)
        pos = np.arange(len(fp))
        inside = pos + k <= ends[page_of_pos[: len(fp)]]
        parts_fp.append(fp[inside])
        parts_pg.append(page_of_pos[: len(fp)][inside])
    short = (lengths > 0) & (lengths < k)
    if short.any():
        pos = np.concatenate(
            [np.arange(s, e) for s, e in zip(starts[short], ends[short], strict=True)]
        )
        parts_fp.append(fingerprints_from_hashes(h[pos], 1))
        parts_pg.append(page_of_pos[pos])
    if not parts_fp:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    return np.concatenate(parts_fp), np.concatenate(parts_pg)


def page_minhashes_from_hashes(
    h: np.ndarray, page_lengths: np.ndarray, num_perm: int = 32, k: int = 5, bits: int = 16
) -> np.ndarray:
    """b-bit page signatures, shape (n_pages, num_perm), from per-position word hashes."""
    if not 1 <= bits <= 16:
        raise ValueError("page signatures are stored as uint16: bits must be in 1..16")
    n_pages = len(page_lengths)
    fp, pages = page_fingerprints(h, page_lengths, k)
    sig = _oph(fp, pages, n_pages, num_perm)
    mask = np.uint64((1 << bits) - 1)
    return np.where(sig == _EMPTY, mask, sig & mask).astype(np.uint16)


def page_minhashes(
    pages_words: Sequence[Sequence[str]], num_perm: int = 32, k: int = 5, bits: int = 16
) -> np.ndarray:
    """b-bit min-hash of each page's word k-shingles: uint16[n_pages, num_perm]."""
    words = [w for page in pages_words for w in page]
    lengths = np.fromiter(map(len, pages_words), np.int64, len(pages_words))
    index = dict.fromkeys(words)
    distinct = list(index)
    index.update(zip(distinct, range(len(distinct)), strict=True))
    ids = np.fromiter(map(index.__getitem__, words), np.int64, len(words))
    return page_minhashes_from_hashes(word_hashes64(distinct)[ids], lengths, num_perm, k, bits)


def jaccard(sig_a: np.ndarray, sig_b: np.ndarray, bits: int) -> float:
    """Jaccard estimate from two signatures, corrected for b-bit accidental collisions.

    Two b-bit values of different minima still agree with probability 2^-b, so
    P(equal) = J + (1 - J) 2^-b and J = (P - 2^-b) / (1 - 2^-b) (Li & König), clipped to [0, 1].
    """
    a, b = np.asarray(sig_a), np.asarray(sig_b)
    if a.shape != b.shape:
        raise ValueError(f"signature shapes differ: {a.shape} vs {b.shape}")
    if a.size == 0:
        return 0.0
    p = float(np.count_nonzero(a == b)) / a.size
    r = 2.0**-bits
    return min(1.0, max(0.0, (p - r) / (1.0 - r)))


@njit(cache=True, nogil=True)
def _agreement(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Share of equal slots of every page of a against every page of b, into ``out``: the
    broadcast compare and its mean took ~10 s of the job's 35 at 1,000 books of 50K-100K
    words (the same float64 share, rounded to float32 as before)."""
    width = a.shape[1]
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            equal = 0
            for k in range(width):
                equal += a[i, k] == b[j, k]
            out[i, j] = equal / width


def page_jaccard_matrix(pages_a: np.ndarray, pages_b: np.ndarray, bits: int) -> np.ndarray:
    """Estimated Jaccard of every page of a against every page of b: float32[n_a, n_b].

    Empty pages (all bits set in every slot) score 0 against everything.
    """
    a, b = np.asarray(pages_a), np.asarray(pages_b)
    if a.shape[1:] != b.shape[1:]:
        raise ValueError(f"page signature widths differ: {a.shape} vs {b.shape}")
    common = np.result_type(a, b)
    out = np.empty((len(a), len(b)), dtype=np.float32)
    _agreement(np.ascontiguousarray(a, common), np.ascontiguousarray(b, common), out)
    r = 2.0**-bits
    out = np.clip((out - r) / (1.0 - r), 0.0, 1.0)
    full = (1 << bits) - 1
    out[(a == full).all(axis=1)] = 0.0
    out[:, (b == full).all(axis=1)] = 0.0
    return out
