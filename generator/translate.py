"""Synthetic translations: word by word through a bilingual dictionary, and what translators do
beyond it.

The faithful style mimics exactly what TRANS can and cannot see: every source word becomes one
of its dictionary translations (chosen at random, so the target text uses the lexicon's
one-to-many choices) and a word without one becomes what a translator's own choice would be to
the detector: function words, which dictionaries leave out and TRANS ignores, map to the target
language's function word of the same frequency rank (so that stop-word language identification
sees the target language); a word the target language writes the same way (names, loanwords,
cognates) stays; any other word becomes the target word of the same frequency rank, which the
dictionary cannot link back. Real translations share few words verbatim — an earlier generator
kept every untranslatable word, a quarter of the text, and its translations looked like copied
front matter to the boilerplate rule. Adjacent words inside a sentence swap with a small
probability, so the order is only locally preserved.

That is still a flattering translation: it goes through the very lexicon the detector uses, so
every word the lexicon knows comes back (issue 12 item 5). The realistic style
(`TranslationStyle`, ``REALISTIC``) adds what real translators do, each effect a seeded rate:

* synonyms — a word the lexicon knows is rendered by a translation of another source word near
  it in frequency (a different word of the same register, or another sense), which the
  lexicon does not list for it;
* paraphrase — a span of 3–8 words of a sentence is rewritten in other target words;
* words dropped and words added (target words of the language's unigram distribution);
* sentence-level reordering — a sentence changes places with the next one of its paragraph;
* names — proper names are kept as names (not replaced by a target word), and a share of
  them is transliterated by small per-language spelling rules (Quixote → Quijote).

The defaults are calibrated by ``benchmarks/calibrate_translations.py`` so that generated
translation pairs score where the real Gutenberg translations score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

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


@dataclass(frozen=True)
class TranslationStyle:
    """How freely a translation departs from the lexicon; every rate is per word, sentence or
    name as stated, and 0 turns the effect off (the faithful style is all zeros but ``swap``)."""

    #: adjacent words of a sentence swapped (local word order), per word
    swap: float = 0.1
    #: words the lexicon knows rendered by a translation of a frequency neighbour, per word
    synonyms: float = 0.0
    #: how far in frequency rank (either way) that neighbour lies, at most
    synonym_reach: int = 20
    #: source words left out, per word (a sentence's last word is never dropped)
    drop: float = 0.0
    #: target words added, per source word (inserted at random places)
    add: float = 0.0
    #: sentences that change places with the next sentence of their paragraph, per sentence
    reorder: float = 0.0
    #: sentences with a span rewritten in other target words, per sentence
    paraphrase: float = 0.0
    #: length of a rewritten span in words (inclusive range; never the whole sentence)
    paraphrase_span: tuple[int, int] = (3, 8)
    #: proper names transliterated (per distinct name in a book); the others are kept as they
    #: are. Only when ``realistic_names``: the faithful style treats names as any other word.
    names: float = 0.0
    realistic_names: bool = False
    #: translators differ: each translation scales the rates above (all but ``swap``) by one
    #: factor drawn uniformly from [1 - spread, 1 + spread]
    spread: float = 0.0

    def scaled(self, factor: float) -> TranslationStyle:
        """The style with its departures from the lexicon scaled by ``factor`` (at most 1)."""
        rates = ("synonyms", "drop", "add", "reorder", "paraphrase", "names")
        return replace(self, **{k: min(1.0, getattr(self, k) * factor) for k in rates})

    def with_overrides(
        self, overrides: dict[str, float] | tuple[tuple[str, float], ...]
    ) -> TranslationStyle:
        """This style with some parameters replaced (names as the fields)."""
        items = dict(overrides)
        known = {f.name: f.type for f in fields(self)}
        unknown = set(items) - set(known)
        if unknown:
            raise ValueError(f"unknown translation parameters: {sorted(unknown)}")
        values: dict[str, Any] = {
            k: (int(v) if k == "synonym_reach" else v) for k, v in items.items()
        }
        return replace(self, **values)


FAITHFUL = TranslationStyle()
#: Calibrated on the 53 real Gutenberg translation pairs (benchmarks/calibrate_translations.py,
#: 120 books of 15K-60K words, seed 1; docs/TRANSLATION_CALIBRATION.md) with the detector as it
#: decides now (stems, window scan): generated medians of |LCS|/shared, z/sqrt(shared) and z
#: 0.303 / 1.51 / 40.6 against real 0.318 / 1.74 / 62.6 — a little harder than the real ones.
#: Translations are drawn in proportion to how common they are (``_pick_common``).
REALISTIC = TranslationStyle(
    swap=0.1,
    synonyms=0.25,
    drop=0.06,
    add=0.06,
    reorder=0.15,
    paraphrase=0.1,
    names=0.3,
    realistic_names=True,
    spread=0.8,
)
STYLES: dict[str, TranslationStyle] = {"faithful": FAITHFUL, "realistic": REALISTIC}


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


# -- names ------------------------------------------------------------------------------------

#: Spelling rules a translator into each language applies to a foreign name, tried in order;
#: the first that changes the name is used (Quixote → Quijote, Sophia → Sofia, Karl → Carl).
_TRANSLITERATION: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        ("ñ", "n"),
        ("é", "e"),
        ("è", "e"),
        ("ü", "u"),
        ("ö", "o"),
        ("ä", "a"),
        ("k", "c"),
        ("j", "y"),
        ("ie", "y"),
    ),
    "de": (
        ("c(?=[aou])", "k"),
        ("ph", "f"),
        ("th", "t"),
        ("y", "i"),
        ("é", "e"),
        ("ñ", "n"),
        ("sh", "sch"),
    ),
    "fr": (
        ("k", "c"),
        ("y", "i"),
        ("ñ", "gn"),
        ("th", "t"),
        ("ö", "eu"),
        ("ü", "u"),
        ("w", "v"),
    ),
    "es": (
        ("x", "j"),
        ("ph", "f"),
        ("th", "t"),
        ("y", "i"),
        ("k", "c"),
        ("qu", "cu"),
        ("w", "v"),
        ("é", "e"),
        ("ll", "l"),
        ("ss", "s"),
        ("ch", "c"),
    ),
    "it": (
        ("x", "s"),
        ("ph", "f"),
        ("th", "t"),
        ("y", "i"),
        ("k", "c"),
        ("j", "g"),
        ("w", "v"),
        ("é", "e"),
    ),
}
_ENDINGS = {"en": "", "de": "e", "fr": "e", "es": "o", "it": "a"}
_VOWELS = set("aeiouáéíóúàèìòùâêîôûäöü")


def transliterate(name: str, target: str) -> str:
    """``name`` spelled as a ``target``-language translator would; always another spelling."""
    low = name.casefold()
    for pattern, repl in _TRANSLITERATION.get(target, ()):
        out = re.sub(pattern, repl, low, count=1)
        if out != low:
            return out[:1].upper() + out[1:]
    # no rule applies: the language's ending for the last vowel or after the last consonant
    # (Marius → Mariuso, Alice → Alica), else the last vowel dropped or the last letter doubled
    ending = _ENDINGS.get(target, "")
    stem = low[:-1] if low[-1] in _VOWELS else low
    out = stem + ending
    if out == low:
        out = stem if low[-1] in _VOWELS and len(stem) > 2 else low + low[-1]
    return out[:1].upper() + out[1:]


def name_set(
    source: WordModel, lexicon: Lexicon, others: list[WordModel], n_skip: int = 30
) -> set[str]:
    """Proper names of ``source``'s vocabulary (case-folded): written with a capital, not in the
    lexicon, not among the ``n_skip`` most frequent words (I, O, Mr), 3+ letters; a German word
    (nouns are capitalised) only if another language also writes it capitalised."""
    capital_elsewhere = {w.casefold() for m in others for w in m.vocab if w[:1].isupper()}
    out = set()
    for rank, w in enumerate(source.vocab.tolist()):
        if rank < n_skip or len(w) < 3 or not w[:1].isupper() or not w.isalpha():
            continue
        key = w.casefold()
        if lexicon.translate(key):
            continue
        if source.language == "de" and key not in capital_elsewhere:
            continue
        out.add(key)
    return out


# -- translation ------------------------------------------------------------------------------


@dataclass
class TranslationContext:
    """What a direction's realistic translation needs besides the lexicon, built once."""

    source: WordModel
    target: WordModel
    rank: dict[str, int]  # case-folded source word -> frequency rank
    names: set[str]
    known: dict[str, bool] = field(default_factory=dict)  # ranked and in the lexicon (memo)
    #: case-folded target word -> its count in the target word model (how common it is)
    target_counts: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def build(
        source: WordModel, target: WordModel, lexicon: Lexicon, others: list[WordModel]
    ) -> TranslationContext:
        rank: dict[str, int] = {}
        for i, w in enumerate(source.vocab.tolist()):
            rank.setdefault(w.casefold(), i)
        counts: dict[str, float] = {}
        for w, c in zip(target.vocab.tolist(), target.counts.tolist(), strict=True):
            counts[w.casefold()] = counts.get(w.casefold(), 0.0) + c
        names = name_set(source, lexicon, others)
        return TranslationContext(source, target, rank, names, target_counts=counts)


def _options(
    words: list[str],
    lexicon: Lexicon,
    untranslated: dict[str, str],
    cache: dict[str, tuple[str, ...]],
) -> list[tuple[str, ...]]:
    options = []
    for word in words:
        o = cache.get(word)
        if o is None:
            o = cache[word] = word_options(word, lexicon, untranslated)
        options.append(o)
    return options


def _pick(options: list[tuple[str, ...]], rng: np.random.Generator) -> np.ndarray:
    u = rng.random(len(options)).tolist()
    return np.array([o[int(r * len(o))] for o, r in zip(options, u, strict=True)], dtype=object)


def _pick_common(
    options: list[tuple[str, ...]], rng: np.random.Generator, counts: dict[str, float]
) -> np.ndarray:
    """One option per word, in proportion to how common it is in the target language (+1).

    A translator renders "house" as "Haus", rarely as "Abbruchhaus": a lexicon lists every
    sense and compound, and a uniform choice among them (the faithful style) fills a text
    with rare words no real translation holds.
    """
    u = rng.random(len(options)).tolist()
    out = []
    for o, r in zip(options, u, strict=True):
        if len(o) == 1:
            out.append(o[0])
            continue
        weights = np.cumsum([counts.get(w, 0.0) + 1.0 for w in o])
        out.append(o[min(int(np.searchsorted(weights, r * weights[-1], side="right")), len(o) - 1)])
    return np.array(out, dtype=object)


def _swap_neighbours(
    out: np.ndarray, punct: np.ndarray, rng: np.random.Generator, p: float
) -> None:
    swap = rng.random(len(out)) < p
    swap[-1:] = False
    swap &= punct < SENTENCE_END  # never across a sentence end
    swap[1:] &= ~swap[:-1]  # no overlapping swaps
    i = np.flatnonzero(swap)
    out[i], out[i + 1] = out[i + 1], out[i].copy()


def translate_prose(
    prose: Prose,
    lexicon: Lexicon,
    rng: np.random.Generator,
    untranslated: dict[str, str],
    swap_prob: float = 0.1,
    cache: dict[str, tuple[str, ...]] | None = None,
    style: TranslationStyle | None = None,
    context: TranslationContext | None = None,
) -> Prose:
    """Translate word by word (random choice among translations), then swap neighbours; with a
    realistic ``style`` (and the direction's ``context``), also the effects it sets.

    ``cache`` (word -> options, for this lexicon) may be shared between calls to save lookups.
    ``swap_prob`` is the faithful style's swap rate (a given ``style`` has its own).
    """
    cache = {} if cache is None else cache
    words = prose.words.tolist()
    if style is None or style == replace(FAITHFUL, swap=style.swap):
        out = _pick(_options(words, lexicon, untranslated, cache), rng)
        _swap_neighbours(out, prose.punct, rng, swap_prob if style is None else style.swap)
        return Prose(out, prose.punct.copy(), prose.para_end.copy())
    if context is None:
        raise ValueError("a realistic translation style needs a TranslationContext")
    return _translate_realistic(prose, words, lexicon, rng, untranslated, cache, style, context)


def _sentence_ids(punct: np.ndarray) -> np.ndarray:
    """Sentence number of every word (a sentence ends at a word with punct >= SENTENCE_END)."""
    ends = punct >= SENTENCE_END
    return np.concatenate([[0], np.cumsum(ends[:-1])]).astype(np.int64)


def _translate_realistic(
    prose: Prose,
    words: list[str],
    lexicon: Lexicon,
    rng: np.random.Generator,
    untranslated: dict[str, str],
    cache: dict[str, tuple[str, ...]],
    style: TranslationStyle,
    ctx: TranslationContext,
) -> Prose:
    n = len(words)
    if n == 0:
        return Prose(prose.words.copy(), prose.punct.copy(), prose.para_end.copy())
    if style.spread > 0:
        style = style.scaled(float(rng.uniform(1 - style.spread, 1 + style.spread)))
    vocab = ctx.source.vocab
    keys = [w.casefold() for w in words]
    # synonyms: the translation of a frequency neighbour, for words the lexicon knows
    synonym = rng.random(n) < style.synonyms
    offsets = rng.integers(1, max(2, style.synonym_reach + 1), n) * rng.choice((-1, 1), n)
    chosen = list(words)
    for i in np.flatnonzero(synonym).tolist():
        key = keys[i]
        known = ctx.known.get(key)
        if known is None:
            known = ctx.known[key] = key in ctx.rank and bool(lexicon.translate(key))
        if not known:
            continue
        j = min(max(ctx.rank[key] + int(offsets[i]), 0), len(vocab) - 1)
        neighbour = vocab[j]
        if neighbour.casefold() != key:
            chosen[i] = neighbour
    options = _options(chosen, lexicon, untranslated, cache)
    out = _pick_common(options, rng, ctx.target_counts)
    # names: kept as names, a share of them (per distinct name) transliterated
    if style.realistic_names:
        present = sorted({k for k in keys if k in ctx.names})
        if present:
            mark = rng.random(len(present)) < style.names
            lang = ctx.target.language
            spelled = {
                k: (transliterate(k, lang) if m else k[:1].upper() + k[1:])
                for k, m in zip(present, mark.tolist(), strict=True)
            }
            for i, k in enumerate(keys):
                s = spelled.get(k)
                if s is not None and chosen[i] == words[i]:
                    out[i] = s
    punct = prose.punct.copy()
    para_end = prose.para_end.copy()
    sent = _sentence_ids(punct)
    n_sent = int(sent[-1]) + 1
    starts = np.flatnonzero(np.concatenate([[True], sent[1:] != sent[:-1]]))
    lengths = np.diff(np.append(starts, n))
    # paraphrase: a span of a sentence rewritten in other target words
    para_sent = np.flatnonzero(rng.random(n_sent) < style.paraphrase)
    lo, hi = style.paraphrase_span
    span = rng.integers(lo, hi + 1, len(para_sent))
    where = rng.random(len(para_sent))
    n_new = 0
    spans = []
    for si, length, u in zip(para_sent.tolist(), span.tolist(), where.tolist(), strict=True):
        m = min(length, int(lengths[si]) - 1)
        if m <= 0:
            continue
        first = int(starts[si]) + int(u * (int(lengths[si]) - m))
        spans.append((first, m))
        n_new += m
    if spans:
        fresh = ctx.target.unigram_words(rng, n_new)
        used = 0
        for first, m in spans:
            out[first : first + m] = fresh[used : used + m]
            used += m
    # local word order, then sentence order within a paragraph
    _swap_neighbours(out, punct, rng, style.swap)
    order = np.arange(n)
    last_in_para = para_end[starts + lengths - 1]
    movable = (rng.random(n_sent) < style.reorder) & ~last_in_para
    movable[-1:] = False
    movable[1:] &= ~movable[:-1]
    for si in np.flatnonzero(movable).tolist():
        a0, a1 = int(starts[si]), int(starts[si + 1])
        b1 = a1 + int(lengths[si + 1])
        order[a0:b1] = np.concatenate([order[a1:b1], order[a0:a1]])
    out, punct = out[order], punct[order]  # para_end stays positional: paragraphs keep bounds
    # words dropped (never a sentence's last word, which carries its punctuation) and added
    keep = (rng.random(n) >= style.drop) | (punct >= SENTENCE_END) | para_end
    n_add = int(rng.binomial(n, style.add)) if style.add > 0 else 0
    at = np.sort(rng.integers(0, n, n_add))  # each inserted before the word at this position
    kept = np.flatnonzero(keep)
    seq = np.argsort(np.concatenate([kept, at - 0.5]), kind="stable")
    words_out = np.concatenate([out[kept], ctx.target.unigram_words(rng, n_add)])[seq]
    # a dropped word's comma or semicolon goes with it; sentence and paragraph ends stay
    p_out = np.concatenate([punct[kept], np.zeros(n_add, dtype=np.uint8)])[seq]
    e_out = np.concatenate([para_end[kept], np.zeros(n_add, dtype=bool)])[seq]
    return Prose(words_out, p_out, e_out)
