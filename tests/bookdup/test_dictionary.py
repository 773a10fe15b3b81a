"""Lexicons from dictd entry texts: parsing rules (TRANS §3.3.2), merging, inversion, lookup.

Reading FreeDict files and the parsed-table cache are tested in tests/readers/test_dictionaries.py.
"""

from __future__ import annotations

from bookdup.dictionary import STOP_WORDS, Dictionary, invert, parse_entries, parse_entry


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


def test_parse_entries_merges_one_word_entries_in_order() -> None:
    entries = [
        "house /hˈaʊs/\nHaus <neu>, Gebäude\n",
        "to house\nbeherbergen; Haus\n",  # same headword again: merged, duplicates once
        "the big house\nGroßhaus\n",  # two content words on the source side: dropped
        "nothing\n   Note: no translation line\n",  # no translation left: dropped
        "King\n1. König\n2. [Schach] König\n",
    ]
    table = parse_entries("en", "de", entries)
    assert table == {
        "house": ("haus", "gebäude", "beherbergen"),
        "king": ("könig",),
    }
    assert parse_entries("en", "de", []) == {}


def test_invert_lists_every_source_word_per_target() -> None:
    table = {"house": ("haus", "gebäude"), "home": ("haus", "heim"), "king": ("könig",)}
    assert invert(table) == {
        "haus": ("house", "home"),
        "gebäude": ("house",),
        "heim": ("home",),
        "könig": ("king",),
    }
    d = Dictionary.from_mapping("de", "en", invert(table))
    assert d.words == ["gebäude", "haus", "heim", "könig"]  # sorted for bisecting
    assert d.translate("haus") == ("house", "home")
