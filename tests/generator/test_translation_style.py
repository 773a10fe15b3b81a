"""The realistic translation style: every effect is seeded and changes the text by its rate.

Each effect is switched on alone (the others at 0) against the same seed with it off, so the
random draws line up and the difference is that effect's alone.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from generator import GeneratorConfig, generate_corpus
from generator.translate import (
    REALISTIC,
    STYLES,
    TranslationContext,
    TranslationStyle,
    name_set,
    translate_prose,
    transliterate,
    untranslated_word_map,
    word_options,
)
from generator.wordmodel import SENTENCE_END, Prose, load_wordmodel
from readers.dictionaries import available_pairs, load_dictionary

pytestmark = pytest.mark.skipif(
    ("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed"
)

#: every departure from the lexicon off, names treated as names; each test turns one on
OFF = TranslationStyle(swap=0.0, realistic_names=True)


@pytest.fixture(scope="module")
def setup():
    en, de = load_wordmodel("en"), load_wordmodel("de")
    lex = load_dictionary("en", "de")
    ctx = TranslationContext.build(en, de, lex, [de, load_wordmodel("fr")])
    src = en.words(np.random.default_rng(3), 20000)
    return src, lex, untranslated_word_map(en, de), ctx


def _run(setup, style: TranslationStyle, seed: int = 9) -> Prose:
    src, lex, fw, ctx = setup
    return translate_prose(
        src, lex, np.random.default_rng(seed), fw, style=style, context=ctx, cache={}
    )


def _sentences(p: Prose) -> list[tuple[str, ...]]:
    ends = np.flatnonzero(p.punct >= SENTENCE_END) + 1
    return [tuple(s) for s in np.split(p.words, ends[:-1])]


def test_same_seed_same_translation(setup) -> None:
    a, b = _run(setup, REALISTIC, 4), _run(setup, REALISTIC, 4)
    assert a.words.tolist() == b.words.tolist()
    assert a.punct.tolist() == b.punct.tolist() and a.para_end.tolist() == b.para_end.tolist()
    assert _run(setup, REALISTIC, 5).words.tolist() != a.words.tolist()


def test_faithful_style_is_the_old_translation(setup) -> None:
    """The faithful style draws exactly what the word-by-word translation always drew."""
    src, lex, fw, _ = setup
    old = translate_prose(src, lex, np.random.default_rng(1), fw, 0.1, {})
    new = translate_prose(src, lex, np.random.default_rng(1), fw, 0.0, {}, style=STYLES["faithful"])
    assert old.words.tolist() == new.words.tolist()


@pytest.mark.parametrize("rate", [0.05, 0.2])
def test_dropped_words_at_their_rate(setup, rate: float) -> None:
    src = setup[0]
    base, out = _run(setup, OFF), _run(setup, replace(OFF, drop=rate))
    assert len(base) == len(src)
    droppable = int(((src.punct < SENTENCE_END) & ~src.para_end).sum())
    measured = (len(base) - len(out)) / droppable
    assert abs(measured - rate) < 0.15 * rate + 0.005
    # the text that stays is the same words in the same order, sentence ends kept
    assert int((out.punct >= SENTENCE_END).sum()) == int((base.punct >= SENTENCE_END).sum())
    assert int(out.para_end.sum()) == int(base.para_end.sum())


@pytest.mark.parametrize("rate", [0.05, 0.2])
def test_added_words_at_their_rate(setup, rate: float) -> None:
    src = setup[0]
    out = _run(setup, replace(OFF, add=rate))
    measured = (len(out) - len(src)) / len(src)
    assert abs(measured - rate) < 0.1 * rate
    de = set(load_wordmodel("de").vocab.tolist())
    base = Counter(_run(setup, OFF).words.tolist())
    extra = Counter(out.words.tolist()) - base
    assert sum(extra.values()) == len(out) - len(src)  # nothing else changed
    assert set(extra) <= de  # added words are target-language words


def test_synonyms_leave_the_lexicon_at_their_rate(setup) -> None:
    src, lex, fw, _ = setup
    rate = 0.4
    out = _run(setup, replace(OFF, synonyms=rate))
    known = outside = 0
    for s, t in zip(src.words.tolist(), out.words.tolist(), strict=True):
        if not lex.translate(s.casefold()):
            continue
        known += 1
        outside += t not in word_options(s, lex, fw)
    # a neighbour's translation is sometimes also one of the word's own
    assert 0.7 * rate < outside / known <= rate * 1.05


def test_sentences_reordered_within_paragraphs(setup) -> None:
    rate = 0.3
    base, out = _run(setup, OFF), _run(setup, replace(OFF, reorder=rate))
    assert out.para_end.tolist() == base.para_end.tolist()
    assert sorted(_sentences(out)) == sorted(_sentences(base))  # whole sentences move
    cuts = np.flatnonzero(base.para_end) + 1
    for pa, pb in zip(np.split(base.words, cuts), np.split(out.words, cuts), strict=True):
        assert sorted(pa.tolist()) == sorted(pb.tolist())  # never across a paragraph end
    moved = sum(a != b for a, b in zip(_sentences(base), _sentences(out), strict=True))
    ends = np.flatnonzero(base.punct >= SENTENCE_END)
    eligible = int((~base.para_end[ends]).sum())  # not the last sentence of its paragraph
    # a swapped pair moves two sentences; a sentence swapped with the one before stays put
    assert 0.6 * rate < moved / 2 / eligible <= rate


def test_paraphrase_rewrites_spans_of_sentences(setup) -> None:
    rate = 0.5
    base, out = _run(setup, OFF), _run(setup, replace(OFF, paraphrase=rate))
    assert len(out) == len(base)
    sb, so = _sentences(base), _sentences(out)
    changed = [(a, b) for a, b in zip(sb, so, strict=True) if a != b]
    eligible = sum(len(s) > 1 for s in sb)
    assert 0.8 * rate < len(changed) / eligible < 1.05 * rate
    lo, hi = OFF.paraphrase_span
    for a, b in changed:
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        assert diff[-1] - diff[0] + 1 <= hi  # one contiguous span at most this long
        assert len(diff) < len(a)  # never the whole sentence


def test_names_kept_or_transliterated(setup) -> None:
    src, _, _, ctx = setup
    rate = 0.5
    out = _run(setup, replace(OFF, names=rate))
    names = {w.casefold() for w in src.words.tolist()} & ctx.names
    assert len(names) > 30
    spelled: dict[str, set[str]] = {}
    for s, t in zip(src.words.tolist(), out.words.tolist(), strict=True):
        if s.casefold() in names:
            spelled.setdefault(s.casefold(), set()).add(t)
    assert all(len(v) == 1 for v in spelled.values())  # one spelling per name in a book
    changed = [k for k, v in spelled.items() if next(iter(v)).casefold() != k]
    assert abs(len(changed) / len(spelled) - rate) < 0.2
    for k in changed:
        assert next(iter(spelled[k])) == transliterate(k, "de")


@pytest.mark.parametrize("target", ["en", "de", "fr", "es", "it"])
def test_transliteration_always_changes_the_spelling(target: str) -> None:
    en = load_wordmodel("en")
    names = name_set(en, load_dictionary("en", "de"), [load_wordmodel("de")])
    assert {"quixote", "valjean"} <= names
    for name in sorted(names):
        assert transliterate(name, target).casefold() != name
    assert transliterate("Quixote", "es") == "Quijote"


def test_realistic_corpus_is_deterministic_and_harder(tmp_path: Path) -> None:
    small = dict(n_books=16, words_min=800, words_max=1500, languages=("en", "de"))
    cfg = GeneratorConfig(seed=2, **small, translation_fraction=1.0, translation_style="realistic")
    generate_corpus(cfg, tmp_path / "a")
    generate_corpus(cfg, tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.*"))
    assert any(
        json.loads(x)["kind"] == "translation"
        for x in (tmp_path / "a" / "books.jsonl").read_text().splitlines()
    )
    for rel in files:
        if rel.name != "corpus.json":
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    config = json.loads((tmp_path / "a" / "corpus.json").read_text())["config"]
    assert config["translation_style"] == "realistic"


def test_unknown_style_or_parameter_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="translation style"):
        generate_corpus(GeneratorConfig(n_books=2, translation_style="poetic"), tmp_path)
    with pytest.raises(ValueError, match="unknown translation parameters"):
        REALISTIC.with_overrides({"rhyme": 0.5})
