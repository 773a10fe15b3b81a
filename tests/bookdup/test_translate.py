"""In-place one-to-many translation of unique-word sequences."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bookdup.dictionary import Dictionary
from bookdup.features import extract_features
from bookdup.translate import in_lexicon, translate_unique
from bookdup.uniquewords import word_hash
from readers import iter_books
from readers.dictionaries import load_dictionary

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


def test_in_lexicon_names_the_words_kept_as_they_are() -> None:
    words = ["night", "egmont", "king", "nigth"]
    hashes = np.array([word_hash(w) for w in words], dtype=np.uint32)
    assert in_lexicon(LEX, hashes).tolist() == [True, False, True, False]
    empty = Dictionary.from_mapping("en", "de", {})
    assert in_lexicon(empty, hashes).tolist() == [False] * 4


def _reference(words: list[str], dictionary: Dictionary) -> list[int]:
    """Word-by-word lookup, the definition the vectorised gathers must reproduce."""
    out: list[int] = []
    for w in words:
        out.extend(word_hash(t) for t in dictionary.translate(w) or (w,))
    return out


def test_matches_word_by_word_lookup_on_freedict(gutenberg: Path) -> None:
    dictionary = load_dictionary("de", "en")
    book = next(iter_books([gutenberg / "werther-de-b1-pg2407.txt"]))
    words = extract_features(book).unique.words
    hashes, pages = translate_unique(words, np.arange(len(words)), dictionary)
    assert hashes.tolist() == _reference(words, dictionary)
    assert pages.size == hashes.size and np.all(np.diff(pages) >= 0)
    assert hashes.size > len(words)  # one-to-many: the lexicon has several senses per word
