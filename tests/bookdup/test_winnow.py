"""Winnowed keys: the shared-run guarantee, document frequencies, consistent samples."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from bookdup.features import hex_terms, terms_to_hashes
from bookdup.minhash import word_hashes64
from bookdup.winnow import (
    NGRAM,
    PREFIX,
    WINDOW,
    KeyFrequencies,
    consistent_sample,
    text_keys,
    winnow,
)


def _words(rng: np.random.Generator, n: int, vocab: int = 50_000) -> list[str]:
    return [f"w{i}" for i in rng.integers(0, vocab, n)]


def _keys(words: list[str]) -> np.ndarray:
    return winnow(word_hashes64(words))


def _letter_words(rng: np.random.Generator, n: int) -> list[str]:
    """Words of 3-10 letters a-z: word-like prefixes (``_words``' all start with 'w')."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, int(rng.integers(3, 11)))) for _ in range(n)]


def _text_keys(words: list[str]) -> np.ndarray:
    vocabulary, ids = np.unique(np.array(words), return_inverse=True)
    return text_keys(vocabulary.tolist(), ids)


Words = Callable[[np.random.Generator, int], list[str]]
Keys = Callable[[list[str]], np.ndarray]
#: winnow() on whole-word hashes, and the index's keys (``text_keys``) on letter words
KINDS = pytest.mark.parametrize(
    ("words", "keys"), [(_words, _keys), (_letter_words, _text_keys)], ids=["words", "prefixes"]
)


@KINDS
def test_any_shared_run_of_window_plus_n_minus_1_words_gives_a_common_key(
    words: Words, keys: Keys
) -> None:
    rng = np.random.default_rng(1)
    run = WINDOW + NGRAM - 1
    for trial in range(100):
        shared = words(rng, run)
        a = words(rng, int(rng.integers(0, 300))) + shared + words(rng, 200)
        b = words(rng, int(rng.integers(0, 300))) + shared + words(rng, 50)
        assert np.intersect1d(keys(a), keys(b)).size >= 1, trial


@KINDS
def test_unrelated_texts_share_no_key_and_density_is_about_2_over_window(
    words: Words, keys: Keys
) -> None:
    rng = np.random.default_rng(2)
    a, b = words(rng, 20_000), words(rng, 20_000)
    ka, kb = keys(a), keys(b)
    assert np.intersect1d(ka, kb).size == 0
    assert 1.6 / (WINDOW + 1) < ka.size / len(a) < 2.4 / (WINDOW + 1)
    assert np.all(np.diff(ka.astype(np.int64)) > 0)  # sorted and distinct


def test_a_copy_keeps_its_keys_where_it_keeps_the_text() -> None:
    rng = np.random.default_rng(3)
    book = _words(rng, 30_000)
    volume = book[10_000:20_000]
    kb, kv = _keys(book), _keys(volume)
    # every key of the volume away from its two cut edges is one of the book's keys
    assert np.isin(kv, kb).mean() > 0.99


def test_an_ocr_error_past_a_words_prefix_keeps_every_key() -> None:
    """A misread letter past a word's first ``PREFIX`` changes no key; the same errors in
    whole-word 3-grams (the keys before) change most of them."""
    rng = np.random.default_rng(6)
    words = _letter_words(rng, 5_000)
    misread = [
        w[:PREFIX] + w[PREFIX:].replace(w[-1], "#") if rng.random() < 0.3 else w for w in words
    ]
    assert np.array_equal(_text_keys(words), _text_keys(misread))
    whole = winnow(word_hashes64(words), n=3), winnow(word_hashes64(misread), n=3)
    assert np.intersect1d(*whole).size < 0.5 * whole[0].size


def test_short_texts_and_bad_arguments() -> None:
    words = [f"w{i}" for i in range(NGRAM + 1)]
    assert winnow(word_hashes64(words[: NGRAM - 1])).size == 0  # no whole n-gram
    assert winnow(word_hashes64(words)).size == 1  # under one window: its smallest n-gram
    with pytest.raises(ValueError, match="window"):
        winnow(word_hashes64(["a"] * 10), window=0)


def test_key_frequencies_count_books_across_chunk_merges() -> None:
    rng = np.random.default_rng(4)
    books = [np.unique(rng.integers(0, 500, 60).astype(np.uint32)) for _ in range(40)]
    table = KeyFrequencies.from_books(iter(books), chunk=150)  # a merge every ~3 books
    all_keys = np.concatenate(books)
    expected = {
        int(k): int(c) for k, c in zip(*np.unique(all_keys, return_counts=True), strict=True)
    }
    assert table.n_books == 40
    assert {int(k): int(c) for k, c in zip(table.keys, table.counts, strict=True)} == {
        k: c for k, c in expected.items() if c >= 2
    }
    probe = np.array(sorted(expected), dtype=np.uint32)
    assert table.df(probe).tolist() == [expected[k] if expected[k] >= 2 else 0 for k in probe]
    band = table.band(probe, 3, 5)
    assert set(band.tolist()) == {k for k, c in expected.items() if 3 <= c <= 5}
    with pytest.raises(ValueError, match="min_df"):
        table.band(probe, 1, 5)


def test_consistent_sample_picks_the_same_shared_keys_in_both_books() -> None:
    rng = np.random.default_rng(5)
    shared = rng.integers(0, 2**32, 2_000, dtype=np.uint64).astype(np.uint32)
    a = np.concatenate((shared, rng.integers(0, 2**32, 3_000, dtype=np.uint64).astype(np.uint32)))
    b = np.concatenate((shared, rng.integers(0, 2**32, 1_000, dtype=np.uint64).astype(np.uint32)))
    sa, sb = consistent_sample(a, 300), consistent_sample(b, 300)
    assert sa.size <= 300 and sb.size <= 300
    in_shared_a = set(sa.tolist()) & set(shared.tolist())
    # b samples with a modulus no larger than a's, so it holds every shared key a sampled
    assert in_shared_a <= set(sb.tolist())
    assert consistent_sample(a[:10], 300).size == 10


def test_hex_terms_round_trip() -> None:
    values = np.array([0, 1, 0xDEADBEEF, 0xFFFFFFFF, 0x0A0B0C0D], dtype=np.uint32)
    terms = hex_terms(values)
    assert terms[2] == "deadbeef"
    assert terms_to_hashes(terms).tolist() == values.tolist()
    assert terms_to_hashes([]).size == 0


def test_key_frequencies_keep_every_key_with_a_count_of_one() -> None:
    books = [np.array([1, 2, 3], np.uint32), np.array([2, 3], np.uint32), np.array([3], np.uint32)]
    table = KeyFrequencies.from_books(iter(books), min_count=1)
    assert table.df(np.array([1, 2, 3, 4], np.uint32)).tolist() == [1, 2, 3, 0]
