"""Snowball stems: inflected forms meet their dictionary headwords across languages."""

from __future__ import annotations

import numpy as np

from bookdup.dictionary import Dictionary
from bookdup.features import extract_features
from bookdup.model import Book
from bookdup.stemming import stem_hashes, stem_lexicon, stem_words
from bookdup.translate import translate_unique
from bookdup.uniquewords import hash_words


def test_stems_of_each_language_and_none_without_a_stemmer() -> None:
    assert stem_words(["houses", "walked"], "en") == ["hous", "walk"]
    assert stem_words(["häuser", "häusern"], "de") == ["haus", "haus"]
    assert stem_words(["maisons"], "fr") == ["maison"]
    assert stem_words(["casas"], "es") == stem_words(["casa"], "es")
    assert stem_words(["word"], "und") is None
    assert stem_hashes(["word"], "und") is None
    h = stem_hashes(["houses"], "en")
    assert h is not None and h.dtype == np.uint32 and h[0] == hash_words(["hous"])[0]


def test_stem_lexicon_merges_headwords_with_one_stem() -> None:
    lexicon = Dictionary.from_mapping(
        "de", "en", {"haus": ("house",), "häuser": ("houses", "homes"), "gehen": ("walk",)}
    )
    stemmed = stem_lexicon(lexicon)
    assert stemmed is not None and stem_lexicon(lexicon) is stemmed  # built once
    assert set(stemmed.translate("haus")) == {"hous", "home"}
    assert stemmed.translate("geh") == ("walk",)


def test_an_inflected_form_meets_its_translation_only_through_stems() -> None:
    lexicon = Dictionary.from_mapping("de", "en", {"haus": ("house",)})
    source = ["häusern"]  # dative plural: not a headword
    pages = np.zeros(1, dtype=np.int32)
    target = hash_words(["houses"])
    plain, _ = translate_unique(source, pages, lexicon)
    assert not np.isin(plain, target).any()
    stemmed = stem_lexicon(lexicon)
    assert stemmed is not None
    through, _ = translate_unique(None, pages, stemmed, hashes=stem_hashes(source, "de"))
    assert np.isin(through, stem_hashes(["houses"], "en")).all()


def test_features_carry_stems_of_their_unique_words() -> None:
    book = Book("b", ["the houses were old and the walls were walking away"], language="en")
    f = extract_features(book)
    assert f.unique.stems is not None and f.unique.words is not None
    assert f.unique.stems.tolist() == stem_hashes(f.unique.words, "en").tolist()
