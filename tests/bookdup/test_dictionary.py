"""FreeDict lexicons: entry parsing rules (TRANS §3.3.2), real entry counts, cache, errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bookdup.dictionary import (
    DICTD_DIR,
    STOP_WORDS,
    Dictionary,
    available_pairs,
    load_dictionary,
    parse_entry,
)

needs_freedict = pytest.mark.skipif(
    not (DICTD_DIR / "freedict-eng-deu.index").exists(), reason="dict-freedict-eng-deu missing"
)


def test_parse_entry_rules() -> None:
    entry = (
        "to acquisition spree /ɐkwɪsˈɪʃən/\n"
        "Expansionstour <fem>, Einkaufstour <fem>\n"
        "         Note: einer Firma\n"
        " see: {spree}, {burglary spree}\n"
    )
    # Two content words remain on the source side: the entry is dropped.
    assert parse_entry(entry, STOP_WORDS["en"], STOP_WORDS["de"]) is None
    entry = (
        "to house /hˈaʊs/ <v>\n"
        "1. jdn. beherbergen <v, trans> [geh.]\n"
        "2. das Geschlecht (eines Tieres) bestimmen; Straße\n"
        '      "Each bird."  - Ein Vogel.\n'
        "   Synonyms: {lodge}\n"
    )
    word, translations = parse_entry(entry, STOP_WORDS["en"], STOP_WORDS["de"])
    assert word == "house"  # "to" is a stop word
    # Phrases split into words, stop words and bracketed notes dropped, casefolded (ß -> ss).
    assert translations == ["beherbergen", "geschlecht", "bestimmen", "strasse"]


def test_from_mapping_and_translate() -> None:
    d = Dictionary.from_mapping("en", "de", {"king": ["könig"], "night": ["nacht", "abend"]})
    assert len(d) == 2
    assert d.translate("night") == ("nacht", "abend")
    assert d.translate("nothing") == ()


@needs_freedict
def test_real_dictionaries_entry_counts() -> None:
    en_de = load_dictionary("en", "de")
    # TRANS used a 62K-entry English-German lexicon; FreeDict eng-deu gives ~100K one-word entries.
    assert 80_000 < len(en_de) < 150_000
    assert "könig" in en_de.translate("king")
    assert "herz" in en_de.translate("heart")
    assert "nacht" in en_de.translate("night")
    fr_en = load_dictionary("fr", "en")
    assert 5_000 < len(fr_en) < 10_000
    assert fr_en.translate("roi") == ("king",)
    assert all(" " not in t for ts in en_de.translations[:1000] for t in ts.split(" "))


@needs_freedict
def test_second_load_is_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = load_dictionary("en", "de")
    assert list((tmp_path / "bookdup" / "dict").glob("freedict-eng-deu-*.pkl"))
    t = time.perf_counter()
    second = load_dictionary("en", "de")
    assert time.perf_counter() - t < 0.2
    assert second.words == first.words and second.translations == first.translations


@needs_freedict
def test_inverts_when_only_reverse_exists() -> None:
    # No freedict-deu-spa: de->es is built by inverting spa-deu.
    assert not (DICTD_DIR / "freedict-deu-spa.index").exists()
    de_es = load_dictionary("de", "es")
    assert len(de_es) > 5_000
    assert "rey" in de_es.translate("könig")


def test_missing_pair_names_package(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dict-freedict-eng-deu"):
        load_dictionary("en", "de", directory=tmp_path)
    with pytest.raises(ValueError, match="en->en"):
        load_dictionary("en", "en")
    assert available_pairs(tmp_path) == []


@needs_freedict
def test_available_pairs_lists_both_directions() -> None:
    pairs = available_pairs()
    assert ("en", "de") in pairs and ("de", "en") in pairs
    assert ("de", "es") in pairs  # via spa-deu
    assert ("fr", "es") not in pairs
