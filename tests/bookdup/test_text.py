"""Normalisation: what counts as a word, hyphenation, pages, scripts, speed."""

import unicodedata

from bookdup.text import PAGE_BREAK, normalise_joined, normalise_pages, tokenize


def test_case_punctuation_digits_dropped():
    assert tokenize("Chapter 12. THE End—of it; 1999!") == ["chapter", "the", "end", "of", "it"]


def test_nfkc_and_casefold():
    # ligature fi, full-width letters, German sharp s
    assert tokenize("ﬁne ＡＢＣ Straße STRASSE") == ["fine", "abc", "strasse", "strasse"]


def test_apostrophes_split_words():
    assert tokenize("don't l'homme dell’anima") == ["don", "t", "l", "homme", "dell", "anima"]


def test_line_end_hyphenation_rejoined():
    assert tokenize("an exam-\n   ple and a co-\r\nop") == ["an", "example", "and", "a", "coop"]
    assert tokenize("soft\u00adly") == ["softly"]
    # a hyphen inside a line separates words; digits before a line-end hyphen do not join
    assert tokenize("well-known 3-\nx") == ["well", "known", "x"]


def test_cyrillic_and_greek():
    assert tokenize("Война и МИР, 1869") == ["война", "и", "мир"]
    # casefold folds final sigma and iota subscript, so spelling variants meet
    expected = ["ἐν", "ἀρχῆι", "ἦν", "ὁ", "λόγοσ", "λόγοσ"]
    expected = [unicodedata.normalize("NFC", w) for w in expected]
    assert tokenize("Ἐν ἀρχῇ ἦν ὁ ΛΌΓΟΣ λόγος") == expected


def test_pages_kept_including_empty():
    pages = ["First page wor-", "ds here", "", "12", "Last"]
    assert normalise_pages(pages) == [["first", "page", "wor"], ["ds", "here"], [], [], ["last"]]
    assert normalise_pages([]) == []
    assert normalise_pages(["only one"]) == [["only", "one"]]


def test_page_break_character_in_text_does_not_split_pages():
    assert normalise_pages([f"a{PAGE_BREAK}b", "c"]) == [["a", "b"], ["c"]]
    assert tokenize(f"a{PAGE_BREAK}b") == ["a", "b"]


def test_joined_matches_pages():
    pages = ["Un été", "", "à Paris — 1900", "fin"]
    joined = normalise_joined(pages)
    assert joined == ["un", "été", PAGE_BREAK, PAGE_BREAK, "à", "paris", PAGE_BREAK, "fin"]


def test_a_100k_word_book_normalises_page_by_page():
    """Speed is measured by benchmarks/bench_features.py, not asserted here (noisy machines)."""
    text = ("Alice was beginning to get very tired of sitting by her sister’s bank, " * 7200) + "é"
    pages = [text[i : i + 3000] for i in range(0, len(text), 3000)]
    words = normalise_pages(pages)
    assert len(words) == len(pages)
    assert sum(map(len, words)) >= 100_000
    assert words[0][:4] == ["alice", "was", "beginning", "to"]
