"""Snowball stems for translated comparison: inflected forms meet their dictionary headword.

A bilingual lexicon lists lemmas ("house" → "Haus"), but most words of a real text are
inflected ("houses", "Häusern"), and unique words — words seen once — are more often
inflected forms than lemmas. Matched as they are, a translation and its original meet only
where both happen to use the headword form; through stems ("hous" → "haus"), every form of a
word meets every form of its translation. Measured on the 53 real Gutenberg translations
(docs/EVALUATION.md): the aligned words of a pair roughly double, and the order statistic of
the unrelated cross-language pairs stays low, because the shuffle-calibrated null absorbs the
extra chance matches.

Stems are used only where a lexicon is (books in two languages); same-language comparison
keeps exact words, whose order is the evidence there. The stemmers are the Snowball ones
shipped in C by PyStemmer (~1.5M words/s): a book's few thousand unique words take a few
milliseconds, a 280K-entry lexicon ~2 s once per process.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from functools import cache

import numpy as np
import Stemmer

from bookdup.dictionary import Dictionary
from bookdup.uniquewords import hash_words

__all__ = [
    "SNOWBALL",
    "remember_stem_lexicon",
    "stem_hashes",
    "stem_lexicon",
    "stem_words",
    "stemmer_version",
]

#: Snowball algorithm of each language code the project identifies.
SNOWBALL = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian"}


@cache
def _stemmer(language: str) -> Stemmer.Stemmer | None:
    """The language's stemmer, without PyStemmer's word cache: a book's unique words each occur
    once and lexicons are stemmed once, so its default 10,000-word cache only missed and
    evicted (stemming the 80 real books' 348K unique words: 0.55 s with it, 0.16 s without;
    the stems are the same)."""
    name = SNOWBALL.get(language)
    return Stemmer.Stemmer(name, 0) if name else None


def stemmer_version() -> str:
    """The Snowball stemmers' version (PyStemmer's): stems cached on disk are keyed by it."""
    return str(Stemmer.version())


def stem_words(words: Sequence[str], language: str) -> list[str] | None:
    """The Snowball stem of each word; None for a language without a stemmer."""
    stemmer = _stemmer(language)
    return None if stemmer is None else stemmer.stemWords(list(words))


def stem_hashes(words: Sequence[str], language: str) -> np.ndarray | None:
    """uint32 hashes (``hash_words``) of the words' stems; None without a stemmer."""
    stems = stem_words(words, language)
    return None if stems is None else hash_words(stems)


_LEXICONS: weakref.WeakKeyDictionary[Dictionary, Dictionary] = weakref.WeakKeyDictionary()


def remember_stem_lexicon(dictionary: Dictionary, stemmed: Dictionary) -> None:
    """Give `stem_lexicon` the stem lexicon of ``dictionary`` computed earlier (a reader's disk
    cache: stemming a 280K-entry lexicon costs ~2 s, reading it back ~0.1 s)."""
    _LEXICONS[dictionary] = stemmed


def stem_lexicon(dictionary: Dictionary) -> Dictionary | None:
    """The lexicon between stems: each source stem → the stems of every translation of every
    headword with that stem (first seen first). None when a language has no stemmer.
    Computed once per lexicon object (or given by `remember_stem_lexicon`)."""
    cached = _LEXICONS.get(dictionary)
    if cached is not None:
        return cached
    heads = stem_words(dictionary.words, dictionary.source)
    flat = " ".join(dictionary.translations).split(" ") if dictionary.words else []
    targets = stem_words(flat, dictionary.target)
    if heads is None or targets is None:
        return None
    merged: dict[str, dict[str, None]] = {}
    start = 0
    for head, translations in zip(heads, dictionary.translations, strict=True):
        end = start + translations.count(" ") + 1
        merged.setdefault(head, {}).update(dict.fromkeys(targets[start:end]))
        start = end
    origin = f"{dictionary.origin} (stems)" if dictionary.origin else "stems"
    out = Dictionary.from_mapping(
        dictionary.source, dictionary.target, {k: tuple(v) for k, v in merged.items()}, origin
    )
    _LEXICONS[dictionary] = out
    return out
