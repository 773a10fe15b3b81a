"""Unique words: reading order, hashes, page numbers, degenerate books."""

import mmh3
import numpy as np

from bookdup.uniquewords import encode_pages, hash_words, unique_words, word_hash


def _byte(word: str) -> int:
    return word_hash(word) % 15 + 1


def test_word_hash_is_mmh3_unsigned():
    assert word_hash("abc") == mmh3.hash("abc", 0, signed=False) == 3017643002
    h = hash_words(["abc", "über", "мир"])
    assert h.dtype == np.uint32
    assert h.tolist() == [word_hash(w) for w in ["abc", "über", "мир"]]


def test_unique_words_order_and_pages():
    pages = [["the", "cat", "sat"], [], ["on", "the", "mat"], ["cat", "zebra"]]
    u = unique_words(pages)
    assert u.words == ["sat", "on", "mat", "zebra"]
    assert u.pages.tolist() == [0, 2, 2, 3]
    assert u.pages.dtype == np.int32
    assert u.hashes.tolist() == [word_hash(w) for w in u.words]


def test_matches_python_reference():
    rng = np.random.default_rng(3)
    pages = [[f"w{x}" for x in rng.zipf(1.3, 200) % 5000] for _ in range(50)]
    flat = [(w, p) for p, ws in enumerate(pages) for w in ws]
    counts = {}
    for w, _ in flat:
        counts[w] = counts.get(w, 0) + 1
    expected = [(w, p) for w, p in flat if counts[w] == 1]
    u = unique_words(pages)
    assert list(zip(u.words, u.pages.tolist(), strict=True)) == expected
    assert len(expected) > 100


def test_degenerate():
    assert len(unique_words([])) == 0
    assert len(unique_words([[], []])) == 0
    u = unique_words([["a", "a", "b", "b"]])
    assert u.words == [] and u.hashes.dtype == np.uint32 and u.pages.dtype == np.int32


def test_encode_pages_lengths():
    enc = encode_pages([["a", "b"], [], ["b", "c", "a"]])
    assert enc.page_lengths.tolist() == [2, 0, 3]
    assert enc.vocab == ["a", "b", "c"]
    assert enc.ids.tolist() == [0, 1, 1, 2, 0]
    assert enc.counts().tolist() == [2, 2, 1]


def test_neighbour_context_keeps_repeated_neighbours_only():
    # "the" and "cat" repeat; "sat", "on", "mat", "zebra" are unique
    pages = [["the", "cat", "sat"], [], ["on", "the", "mat"], ["cat", "zebra"]]
    u = unique_words(pages)
    assert u.context is not None and u.context.dtype == np.uint8
    low, high = (u.context & 0xF).tolist(), (u.context >> 4).tolist()
    # sat: after "cat" (repeated), before "on" (unique: left out)
    # on: after "sat" (unique), before "the"; mat: after "the", last word of its page but the
    # text runs on to "cat"; zebra: after "cat", nothing after it
    assert low == [_byte("cat"), 0, _byte("the"), _byte("cat")]
    assert high == [0, _byte("the"), _byte("cat"), 0]
