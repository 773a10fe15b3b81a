"""compare_books on constructed cases from real Gutenberg text: every relation class."""

from __future__ import annotations

import json

import pytest

from bookdup.compare import compare_books, compare_features
from bookdup.features import extract_features
from readers.dictionaries import available_pairs, load_dictionary
from tests.bookdup.test_signals import (
    GUTENBERG,
    book,
    gutenberg_lines,
    needs_data,
    ocr_noise,
)

pytestmark = needs_data

KEYS = {"x", "y", "shared", "lcs", "cs", "its", "relation", "confidence", "direction"}


@pytest.fixture(scope="module")
def alice() -> list[str]:
    if not GUTENBERG.is_dir():
        pytest.skip("Gutenberg corpus absent")
    return gutenberg_lines("alice-en-pg11")


def check(result: dict, relation: str, direction: str | None = None) -> None:
    assert KEYS | {"signals", "languages", "confidences"} <= set(result)
    assert (result["relation"], result["direction"]) == (relation, direction), result
    assert result["confidence"] > 0.6
    json.dumps(result)


def test_identical_copy_is_exact(alice):
    r = compare_books(book("a", alice), book("b", alice))
    check(r, "EXACT")
    assert r["cs"] == r["its"] == 1.0 and r["x"] == r["y"] == r["lcs"]


def test_repaginated_copy_is_different_pagination(alice):
    r = compare_books(book("a", alice, 40), book("b", alice, 55))
    check(r, "DIFFERENT_PAGINATION")
    assert r["cs"] == 1.0  # same text: only the pages differ
    assert r["signals"]["slope"] == pytest.approx(40 / 55, abs=0.02)


def test_noisy_copy_same_pages_is_same_pagination(alice):
    r = compare_books(book("noisy", ocr_noise(alice, 0.05)), book("clean", alice))
    check(r, "SAME_PAGINATION")
    assert r["x"] > 2 * r["y"]  # noise makes new unique words ...
    assert r["its"] > 0.7  # ... its stays high (DUPNIQ's robust score)


@pytest.mark.parametrize("order", ["volume_first", "set_first"])
def test_volume_of_set_is_contiguous_subset(alice, order):
    volume = book("vol", alice[: int(len(alice) * 0.4)])
    full = book("set", alice)
    if order == "volume_first":
        check(compare_books(volume, full), "CONTIGUOUS_SUBSET", "x_in_y")
    else:
        check(compare_books(full, volume), "CONTIGUOUS_SUBSET", "y_in_x")


def test_anthology_half_of_each_is_overlapping_text(alice):
    carol = gutenberg_lines("carol-en-pg46")
    anthology = book("anth", alice[: len(alice) // 2] + carol[len(carol) // 2 :])
    r = compare_books(anthology, book("alice", alice))
    check(r, "OVERLAPPING_TEXT")
    assert 0.3 < r["signals"]["coverage_x"] < 0.7 and 0.3 < r["signals"]["coverage_y"] < 0.7


def test_unrelated_books(alice):
    r = compare_books(book("alice", alice), book("sherlock", gutenberg_lines("sherlock-en-pg1661")))
    check(r, "UNRELATED")
    assert r["cs"] < 0.15


def test_real_editions_and_volume():
    """Real pairs from the corpus ground truth (not constructed)."""
    pairs = {
        ("alice-en-pg11", "alice-en-rackham-pg28885"): ("DIFFERENT_PAGINATION", None),
        ("tomsawyer-en-part1-pg7193", "tomsawyer-en-pg74"): ("CONTIGUOUS_SUBSET", "x_in_y"),
        ("alice-en-pg11", "lookingglass-en-pg12"): ("UNRELATED", None),
    }
    for (a, b), (relation, direction) in pairs.items():
        r = compare_books(book(a, gutenberg_lines(a)), book(b, gutenberg_lines(b)))
        check(r, relation, direction)


needs_en_de = pytest.mark.skipif(
    ("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed"
)


@pytest.fixture(scope="module")
def en_de():
    return load_dictionary("en", "de")


@needs_en_de
def test_translation_with_dictionary(alice, en_de):
    german = gutenberg_lines("alice-de-zimmermann-pg19778")
    r = compare_books(book("en", alice), book("de", german), dictionary=en_de)
    check(r, "TRANSLATION")
    assert r["languages"] == ["en", "de"] and r["dictionary"] == "en-de"
    assert r["scores"] == "TRANS" and r["its"] > 0.6


@needs_en_de
def test_unrelated_across_languages_is_not_translation(alice, en_de):
    german = gutenberg_lines("verwandlung-de-pg22367")
    r = compare_books(book("en", alice), book("de", german), dictionary=en_de)
    check(r, "UNRELATED")


def test_no_dictionary_compares_untranslated_words(alice):
    """The core never picks a lexicon itself: without one, a translation is not recognised."""
    fa = extract_features(book("en", alice))
    fb = extract_features(book("de", gutenberg_lines("alice-de-zimmermann-pg19778")))
    r = compare_features(fa, fb)
    assert r.languages == ("en", "de") and r.dictionary is None
    assert r.scores == "DUPNIQ" and r.relation == "UNRELATED"


def test_pruned_pair_reports_zero_lcs(alice):
    fa = extract_features(book("alice", alice))
    fb = extract_features(book("sherlock", gutenberg_lines("sherlock-en-pg1661")))
    r = compare_features(fa, fb, threshold=0.95)
    assert r.pruned and r.lcs == 0 and r.relation == "UNRELATED"


#: Two English translations of one work each (the corpus README's "different-translation"
#: pairs), and same-language pairs that share their text (editions, variants, a volume, an
#: abridgement, a story inside a collection).
DIFFERENT_TRANSLATIONS = [
    ("faust1-en-taylor-pg14591", "faust1-en-swanwick-pg3023"),
    ("20k-leagues-en-lewis-pg164", "20k-leagues-en-walter-pg2488"),
    ("journey-en-malleson-pg3748", "journey-en-1871-pg18857"),
    ("miserables-en-hapgood-pg135", "miserables-en-wraxall-v1-pg48731"),
    ("nathan-en-taylor-pg3820", "lessing-works-en-pg33435"),
]
SAME_TEXT = [
    ("hamlet-en-pg1524", "hamlet-en-folio-pg2265"),
    ("frankenstein-en-1831-pg84", "frankenstein-en-1818-pg41445"),
    ("alice-en-pg11", "alice-en-storyland-pg19033"),
    ("sleepyhollow-en-pg41", "sketchbook-en-pg2048"),
    ("commedia-it-pg1000", "commedia-it-inferno7bit-pg997"),
]


@pytest.mark.parametrize(("a", "b"), DIFFERENT_TRANSLATIONS)
def test_real_different_translations_are_same_work(a, b):
    """Same names in the same order, other words around them: one work, never one edition."""
    fa, fb = (extract_features(book(n, gutenberg_lines(n))) for n in (a, b))
    for x, y in ((fa, fb), (fb, fa)):
        r = compare_features(x, y, dictionary=None)
        assert r.relation == "SAME_WORK", r.confidences
        assert r.signals["neighbour_agreement"] < 0.72


@pytest.mark.parametrize(("a", "b"), SAME_TEXT)
def test_real_same_text_is_never_same_work(a, b):
    fa, fb = (extract_features(book(n, gutenberg_lines(n))) for n in (a, b))
    r = compare_features(fa, fb, dictionary=None)
    assert r.relation in ("DIFFERENT_PAGINATION", "CONTIGUOUS_SUBSET", "ABRIDGED"), r
    assert r.signals["neighbour_agreement"] > 0.85


@pytest.mark.parametrize("full", ["alice-en-pg11", "alice-en-rackham-pg28885"])
def test_real_abridgement_says_which_book_is_shorter(full):
    """The 1916 "Storyland" Alice (13K words) against the full text (30K): cut throughout, not
    a part of it nor another pagination of it; the direction names the shorter book."""
    short = "alice-en-storyland-pg19033"
    fa, fb = (extract_features(book(n, gutenberg_lines(n))) for n in (full, short))
    r = compare_features(fa, fb, dictionary=None)
    assert (r.relation, r.direction) == ("ABRIDGED", "y_in_x"), r.confidences
    assert 0.3 < r.signals["text_ratio"] < 0.6
    back = compare_features(fb, fa, dictionary=None)
    assert (back.relation, back.direction) == ("ABRIDGED", "x_in_y")


def test_noisy_edition_keeps_its_class(alice):
    """Heavy OCR noise misreads the words around the names too; the pair stays an edition."""
    noisy = ocr_noise(alice, 0.09, seed=4)
    r = compare_books(book("a", alice), book("b", noisy))
    assert r["relation"] in ("SAME_PAGINATION", "DIFFERENT_PAGINATION", "EXACT"), r
    assert r["relation"] != "SAME_WORK"
