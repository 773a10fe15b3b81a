"""In-place one-to-many translation of unique-word sequences."""

from __future__ import annotations

import numpy as np

from bookdup.dictionary import Dictionary
from bookdup.translate import translate_unique
from bookdup.uniquewords import word_hash

LEX = Dictionary.from_mapping(
    "en", "de", {"king": ["könig"], "night": ["nacht", "abend"], "sword": ["schwert"]}
)


def test_one_to_many_in_place_with_pages() -> None:
    words = ["night", "egmont", "king", "sword"]
    pages = np.array([0, 1, 1, 3], dtype=np.int32)
    hashes, out_pages = translate_unique(words, pages, LEX)
    want = [word_hash(w) for w in ["nacht", "abend", "egmont", "könig", "schwert"]]
    assert hashes.dtype == np.uint32 and out_pages.dtype == np.int32
    assert hashes.tolist() == want
    assert out_pages.tolist() == [0, 0, 1, 1, 3]


def test_drop_untranslated() -> None:
    hashes, pages = translate_unique(["egmont", "king"], np.array([2, 5]), LEX, False)
    assert hashes.tolist() == [word_hash("könig")]
    assert pages.tolist() == [5]
    hashes, pages = translate_unique([], np.zeros(0, np.int32), LEX)
    assert hashes.size == 0 and pages.size == 0


def test_repeated_calls_use_cached_hashes() -> None:
    a = translate_unique(["king", "night"], np.array([0, 1]), LEX)
    b = translate_unique(["king", "night"], np.array([0, 1]), LEX)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
