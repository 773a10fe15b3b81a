"""Synthetic translations: word by word through a bilingual dictionary, plus local reordering.

This mimics exactly what TRANS can and cannot see: every source word becomes one of its dictionary
translations (chosen at random, so the target text uses the lexicon's one-to-many choices) and
a word without one becomes what a translator's own choice would be to the detector: function
words, which dictionaries leave out and TRANS ignores, map to the target language's function word
of the same frequency rank (so that stop-word language identification sees the target language);
a word the target language writes the same way (names, loanwords, cognates) stays; any other word
becomes the target word of the same frequency rank, which the dictionary cannot link back. Real
translations share few words verbatim — an earlier generator kept every untranslatable word,
a quarter of the text, and its translations looked like copied front matter to the boilerplate
rule. Adjacent words inside a sentence swap with a small probability, so the order is only
locally preserved. Phrase-level translation, dropped and added words are out of scope.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from bookdup.text import tokenize
from generator.wordmodel import SENTENCE_END, Prose, WordModel

# Directions with an installed FreeDict dictionary that the generator uses (TRANS's setting:
# English paired with each other language).
TRANSLATION_PAIRS: tuple[tuple[str, str], ...] = (
    ("en", "de"),
    ("en", "fr"),
    ("en", "es"),
    ("en", "it"),
    ("de", "en"),
    ("fr", "en"),
    ("es", "en"),
    ("it", "en"),
)


class Lexicon(Protocol):
    """What the generator needs of `bookdup.dictionary.Dictionary`."""

    def translate(self, word: str) -> tuple[str, ...]: ...


def untranslated_word_map(
    source: WordModel, target: WordModel, n_function: int = 200
) -> dict[str, str]:
    """What each source word becomes when the dictionary has no translation for it: the target
    word of the same frequency rank, except a word beyond the ``n_function`` most frequent that
    the target language also has (names, loanwords, cognates), which stays as it is."""
    n = min(len(source.vocab), len(target.vocab))
    shared = {t.casefold() for t in target.vocab}
    out = {}
    for rank, (s, t) in enumerate(zip(source.vocab[:n], target.vocab[:n], strict=True)):
        key = s.casefold()
        out[key] = key if rank >= n_function and key in shared else t
    return out


def word_options(word: str, lexicon: Lexicon, untranslated: dict[str, str]) -> tuple[str, ...]:
    """The possible renderings of ``word`` in the target language.

    Each normalised part (``l'homme`` has two) becomes one of its translations; a part without
    one becomes what ``untranslated`` maps it to, or else stays itself.
    Multi-part words cycle through their parts' options together rather than in all combinations.
    """
    parts = [lexicon.translate(part) or (untranslated.get(part, part),) for part in tokenize(word)]
    if not parts:
        return (word,)
    n = max(len(p) for p in parts)
    return tuple(" ".join(p[k % len(p)] for p in parts) for k in range(n))


def translate_prose(
    prose: Prose,
    lexicon: Lexicon,
    rng: np.random.Generator,
    untranslated: dict[str, str],
    swap_prob: float = 0.1,
    cache: dict[str, tuple[str, ...]] | None = None,
) -> Prose:
    """Translate word by word (random choice among translations), then swap neighbours.

    ``cache`` (word -> options, for this lexicon) may be shared between calls to save lookups.
    """
    cache = {} if cache is None else cache
    options = []
    for word in prose.words.tolist():
        o = cache.get(word)
        if o is None:
            o = cache[word] = word_options(word, lexicon, untranslated)
        options.append(o)
    u = rng.random(len(options)).tolist()
    out = np.array([o[int(r * len(o))] for o, r in zip(options, u, strict=True)], dtype=object)
    swap = rng.random(len(out)) < swap_prob
    swap[-1:] = False
    swap &= prose.punct < SENTENCE_END  # never across a sentence end
    swap[1:] &= ~swap[:-1]  # no overlapping swaps
    i = np.flatnonzero(swap)
    out[i], out[i + 1] = out[i + 1], out[i].copy()
    return Prose(out, prose.punct.copy(), prose.para_end.copy())
