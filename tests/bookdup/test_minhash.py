"""Min-hash signatures: accuracy against exact Jaccard, densification, b-bit correction."""

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.minhash import (
    fingerprints_from_hashes,
    jaccard,
    minhash,
    page_jaccard_matrix,
    page_minhashes,
    word_hashes64,
)

K = 5


def shingle_fingerprints(words: Sequence[str], k: int = 5) -> np.ndarray:
    """64-bit fingerprints of the word k-shingles, reading order (uint64): what
    ``bookdup.features`` computes from a book's word hashes, here from words."""
    index = dict.fromkeys(words)
    distinct = list(index)
    hashes = word_hashes64(distinct)
    index.update(zip(distinct, range(len(distinct)), strict=True))
    ids = np.fromiter(map(index.__getitem__, words), np.int64, len(words))
    return fingerprints_from_hashes(hashes[ids], k)


def _words(rng: np.random.Generator, n: int) -> list[str]:
    """n distinct random words: every 5-shingle of the sequence is distinct."""
    return [f"w{x}" for x in rng.choice(10**9, size=n, replace=False)]


def _true_jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(shingle_fingerprints(a, K).tolist()), set(shingle_fingerprints(b, K).tolist())
    return len(sa & sb) / len(sa | sb)


def test_fingerprints_shape_order_and_short_input():
    fp = shingle_fingerprints(list("abcdefg"), 5)
    assert fp.dtype == np.uint64 and len(fp) == 3 and len(set(fp.tolist())) == 3
    assert shingle_fingerprints(list("abcde"))[0] != shingle_fingerprints(list("abced"))[0]
    # fewer than k words: the words themselves are the (1-)shingles
    assert len(shingle_fingerprints(["a", "b"], 5)) == 2
    assert len(shingle_fingerprints([], 5)) == 0


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    n_a=st.integers(20, 3000),
    n_b=st.integers(20, 3000),
    shared=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_book_estimate_within_error(n_a, n_b, shared, seed):
    rng = np.random.default_rng(seed)
    common = _words(rng, int(shared * min(n_a, n_b)))
    a = _words(rng, n_a - len(common)) + common
    b = common + _words(rng, n_b - len(common))
    j = _true_jaccard(a, b)
    est = jaccard(minhash(shingle_fingerprints(a)), minhash(shingle_fingerprints(b)), 32)
    se = math.sqrt(j * (1 - j) / 128)
    assert abs(est - j) <= 4 * se + 0.02, (j, est)


def test_book_estimate_unbiased_on_average():
    rng = np.random.default_rng(7)
    errors = []
    for _ in range(200):
        common = _words(rng, 600)
        a = _words(rng, 400) + common
        b = common + _words(rng, 400)
        j = _true_jaccard(a, b)
        sa, sb = minhash(shingle_fingerprints(a)), minhash(shingle_fingerprints(b))
        errors.append(jaccard(sa, sb, 32) - j)
    # standard error of the mean: sqrt(0.42 * 0.58 / 128) / sqrt(200) ~= 0.003
    assert abs(np.mean(errors)) < 0.012
    assert np.std(errors) < 1.5 * math.sqrt(0.42 * 0.58 / 128)


def test_densification_tiny_sets():
    """Sets far smaller than 128 bins still give unbiased, sensible estimates."""
    rng = np.random.default_rng(11)
    one = ["solitary"]
    assert jaccard(minhash(shingle_fingerprints(one)), minhash(shingle_fingerprints(one)), 32) == 1
    sig = minhash(shingle_fingerprints(one))
    assert len(np.unique(sig)) == 1 and sig[0] != 0xFFFFFFFF  # every bin densified
    ests = []
    for _ in range(300):
        x, y, z = _words(rng, 3)
        ests.append(
            jaccard(
                minhash(shingle_fingerprints([x, y])), minhash(shingle_fingerprints([x, z])), 32
            )
        )
    assert abs(np.mean(ests) - 1 / 3) < 0.04
    disjoint = [
        jaccard(
            minhash(shingle_fingerprints(_words(rng, 3))),
            minhash(shingle_fingerprints(_words(rng, 3))),
            32,
        )
        for _ in range(50)
    ]
    assert max(disjoint) == 0.0


def test_empty_signature():
    sig = minhash(np.zeros(0, np.uint64))
    assert sig.dtype == np.uint32 and len(sig) == 128 and (sig == 0xFFFFFFFF).all()


def test_page_minhashes_shape_and_pages():
    rng = np.random.default_rng(5)
    p1, p2 = _words(rng, 300), _words(rng, 300)
    pages = [p1, [], ["short", "page"], p1, p2, p1[:150] + p2[:150]]
    sig = page_minhashes(pages, 32, 5)
    assert sig.shape == (6, 32) and sig.dtype == np.uint16
    assert (sig[1] == 0xFFFF).all()  # empty page
    assert (sig[0] == sig[3]).all()
    m = page_jaccard_matrix(sig, sig, 16)
    assert m[0, 3] == 1.0 and m[0, 4] < 0.15 and m[1, 1] == 0.0
    assert 0.15 < m[0, 5] < 0.55  # true J = 146 / 450 = 0.32
    # shingles do not cross page boundaries: the same words split differently differ
    whole = page_minhashes([p1], 32, 5)[0]
    assert (whole == sig[0]).all()


def test_page_jaccard_matrix_equals_the_broadcast_mean_bit_for_bit():
    # the compiled agreement must give the float32 the relations were classified on before
    rng = np.random.default_rng(11)
    a = rng.integers(0, 4, (37, 32)).astype(np.uint16)
    b = rng.integers(0, 4, (23, 32)).astype(np.uint16)
    a[3], b[5] = 0xFFFF, 0xFFFF  # empty pages
    share = (a[:, None, :] == b[None, :, :]).mean(axis=2).astype(np.float32)
    r = 2.0**-16
    want = np.clip((share - r) / (1.0 - r), 0.0, 1.0)
    want[3], want[:, 5] = 0.0, 0.0
    got = page_jaccard_matrix(a, b, 16)
    assert got.dtype == np.float32 and got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert 0.0 < got.max() < 1.0  # some slots agree, none fully


def test_b_bit_correction_removes_accidental_collisions():
    rng = np.random.default_rng(9)
    pages_a = [_words(rng, 200) for _ in range(200)]
    pages_b = [_words(rng, 200) for _ in range(200)]
    sa, sb = page_minhashes(pages_a, 32, 5, bits=2), page_minhashes(pages_b, 32, 5, bits=2)
    raw = np.mean([np.mean(x == y) for x, y in zip(sa, sb, strict=True)])
    assert abs(raw - 0.25) < 0.02  # unrelated 2-bit values agree 1/4 of the time
    corrected = [jaccard(x, y, 2) for x, y in zip(sa, sb, strict=True)]
    assert np.mean(corrected) < 0.05
    same = [jaccard(x, x, 2) for x in sa]
    assert min(same) == 1.0


def test_jaccard_validates_shapes():
    with pytest.raises(ValueError):
        jaccard(np.zeros(3, np.uint32), np.zeros(4, np.uint32), 32)
    assert jaccard(np.zeros(0, np.uint32), np.zeros(0, np.uint32), 32) == 0.0
