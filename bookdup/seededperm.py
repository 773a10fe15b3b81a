"""``np.random.default_rng(seed).permutation(n)``, compiled: the same permutations, drawn
inside a kernel.

The order screen (``bookdup.screenkernel``) draws its two shuffles from a generator seeded by
the pair's counts; building that generator in Python (SeedSequence, PCG64, Generator) took
18 µs of a ~160 µs screen, more than the shuffles' |LCS| (issue 28). This is numpy's
algorithm step for step — SeedSequence's entropy mixing into 4 pool words, PCG64 (XSL-RR
128/64) seeded from 4 of its 64-bit words, ``random_interval`` on the buffered 32-bit halves
and the Fisher–Yates loop of ``Generator.shuffle`` — so every permutation is numpy's
(tests/bookdup/test_seededperm.py), and a screen's z does not change.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["permutations", "seed_state"]

_M32 = np.uint64(0xFFFFFFFF)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_L = np.uint64(0xCA01F9DD)
_MIX_R = np.uint64(0x4973F715)
_XSHIFT = np.uint64(16)
_MUL_HI = np.uint64(2549297995355413924)  # PCG's default 128-bit multiplier
_MUL_LO = np.uint64(4865540595714422341)


@njit(cache=True, nogil=True)
def _hashmix(value: np.uint64, const: np.ndarray) -> np.uint64:
    value = (value ^ const[0]) & _M32
    const[0] = (const[0] * _MULT_A) & _M32
    value = (value * const[0]) & _M32
    return value ^ (value >> _XSHIFT)


@njit(cache=True, nogil=True)
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    result = (_MIX_L * x - _MIX_R * y) & _M32
    return result ^ (result >> _XSHIFT)


@njit(cache=True, nogil=True)
def seed_state(seed: int) -> np.ndarray:
    """``SeedSequence(seed).generate_state(4, np.uint64)`` for 0 <= seed < 2**63."""
    s = np.uint64(seed)
    entropy = np.empty(2, dtype=np.uint64)
    entropy[0] = s & _M32
    entropy[1] = s >> np.uint64(32)
    n_entropy = 2 if entropy[1] else 1
    const = np.empty(1, dtype=np.uint64)
    const[0] = _INIT_A
    pool = np.empty(4, dtype=np.uint64)
    for i in range(4):
        pool[i] = _hashmix(entropy[i] if i < n_entropy else np.uint64(0), const)
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], const))
    words = np.empty(8, dtype=np.uint64)
    hash_const = _INIT_B
    for i in range(8):
        value = (pool[i % 4] ^ hash_const) & _M32
        hash_const = (hash_const * _MULT_B) & _M32
        value = (value * hash_const) & _M32
        words[i] = value ^ (value >> _XSHIFT)
    out = np.empty(4, dtype=np.uint64)
    for i in range(4):
        out[i] = words[2 * i] | (words[2 * i + 1] << np.uint64(32))
    return out


@njit(cache=True, nogil=True)
def _mul64(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """(high, low) 64-bit words of the 128-bit product a * b."""
    a0, a1 = a & _M32, a >> np.uint64(32)
    b0, b1 = b & _M32, b >> np.uint64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> np.uint64(32)) + (p01 & _M32) + (p10 & _M32)
    high = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (mid >> np.uint64(32))
    return high, a * b


@njit(cache=True, nogil=True)
def _step(st: np.ndarray) -> None:
    """state = state * multiplier + inc (mod 2**128); st = [state hi, lo, inc hi, lo]."""
    high, low = _mul64(st[1], _MUL_LO)
    high = high + st[1] * _MUL_HI + st[0] * _MUL_LO
    new_low = low + st[3]
    st[0] = high + st[2] + (np.uint64(1) if new_low < low else np.uint64(0))
    st[1] = new_low


@njit(cache=True, nogil=True)
def _next64(st: np.ndarray) -> np.uint64:
    _step(st)
    x = st[0] ^ st[1]
    rot = st[0] >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True, nogil=True)
def _next32(st: np.ndarray, buf: np.ndarray) -> np.uint64:
    """numpy's ``pcg64_next32``: the two halves of one 64-bit draw, low half first."""
    if buf[0]:
        buf[0] = 0
        return buf[1]
    nxt = _next64(st)
    buf[0] = 1
    buf[1] = nxt >> np.uint64(32)
    return nxt & _M32


@njit(cache=True, nogil=True)
def _interval(st: np.ndarray, buf: np.ndarray, top: int) -> int:
    """numpy's ``random_interval(top)`` for top < 2**32: a masked draw, rejected above top."""
    mask = np.uint64(top)
    for shift in (1, 2, 4, 8, 16):
        mask |= mask >> np.uint64(shift)
    value = _next32(st, buf) & mask
    while value > np.uint64(top):
        value = _next32(st, buf) & mask
    return int(value)


@njit(cache=True, nogil=True)
def permutations(seed: int, n: int, count: int) -> np.ndarray:
    """``rng = np.random.default_rng(seed)``, then ``count`` of ``rng.permutation(n)``, one a
    row (n < 2**32)."""
    words = seed_state(seed)
    st = np.zeros(4, dtype=np.uint64)  # pcg_setseq_128_srandom_r
    st[2] = (words[2] << np.uint64(1)) | (words[3] >> np.uint64(63))
    st[3] = (words[3] << np.uint64(1)) | np.uint64(1)
    _step(st)
    low = st[1] + words[1]
    st[0] = st[0] + words[0] + (np.uint64(1) if low < st[1] else np.uint64(0))
    st[1] = low
    _step(st)
    buf = np.zeros(2, dtype=np.uint64)
    out = np.empty((count, n), dtype=np.int64)
    for s in range(count):
        for i in range(n):
            out[s, i] = i
        for i in range(n - 1, 0, -1):
            j = _interval(st, buf, i)
            if j != i:
                out[s, i], out[s, j] = out[s, j], out[s, i]
    return out
