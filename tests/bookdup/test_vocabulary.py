"""One vocabulary (issue 26): every class and direction worded by ``bookdup.vocabulary``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookdup.vocabulary import direction_words, part_direction, relation_sentence, verdict_sentence

ROOT = Path(__file__).resolve().parents[2]


def test_the_part_is_named_in_every_spelling_of_a_direction() -> None:
    for first in ("x_in_y", "a_in_b", "this_in_other"):
        assert relation_sentence("ABRIDGED", first) == "A is an abridgement of B"
    for second in ("y_in_x", "b_in_a", "other_in_this"):
        assert relation_sentence("CONTIGUOUS_SUBSET", second) == "B is contained in A"
    assert verdict_sentence("EXACT", None) == "A and B are exact duplicates."


def test_directions_from_one_side_differ_by_class() -> None:
    assert direction_words("other_in_this", "ABRIDGED") == (
        "the other book is an abridgement of this one"
    )
    assert direction_words("this_in_other", "CONTIGUOUS_SUBSET") == (
        "this book is contained in the other"
    )
    assert direction_words("this_in_other", "TRANSLATION").startswith(
        "this book is a partial translation"
    )
    assert direction_words(None, "ABRIDGED") == ""
    assert direction_words("this_in_other", "EXACT") == ""


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        # Werther book 1 (de, 56 pages) against the complete English (112 pages)
        ({"coverage_x": 0.85, "coverage_y": 0.63, "n_pages_x": 56, "n_pages_y": 112}, "x_in_y"),
        # Tom Sawyer in German (221 pages) against the English Part 1 (31 pages)
        ({"coverage_x": 0.35, "coverage_y": 0.69, "n_pages_x": 221, "n_pages_y": 31}, "y_in_x"),
        # complete translations: a French text running longer, or noisy coverage
        ({"coverage_x": 0.94, "coverage_y": 0.64, "n_pages_x": 112, "n_pages_y": 163}, None),
        ({"coverage_x": 0.79, "coverage_y": 0.81, "n_pages_x": 105, "n_pages_y": 94}, None),
        ({}, None),
    ],
)
def test_a_partial_translation_gets_a_direction(signals, expected) -> None:
    assert part_direction("TRANSLATION", None, signals) == expected


def test_classifier_directions_pass_through() -> None:
    assert part_direction("ABRIDGED", "y_in_x", {}) == "y_in_x"
    assert part_direction("EXACT", None, {"coverage_x": 1.0, "n_pages_x": 1}) is None


def test_the_review_page_words_no_direction_of_its_own() -> None:
    script = (ROOT / "server" / "static" / "app.js").read_text(encoding="utf-8")
    assert "direction_text" in script
    for own in ("contained in", "abridgement", "this_in_other", "other_in_this"):
        assert own not in script, own


def test_every_signal_has_a_plain_name() -> None:
    """The review page's signals table and `compare` name every signal from one place."""
    import dataclasses

    from bookdup.signals import RelationSignals
    from bookdup.vocabulary import SIGNAL_LABELS, SIGNAL_LINES, signal_label

    fields = {f.name for f in dataclasses.fields(RelationSignals)}
    assert fields == set(SIGNAL_LABELS)
    for _label, keys in SIGNAL_LINES:
        assert set(keys if isinstance(keys, tuple) else (keys,)) <= fields
    assert signal_label("coverage_x") == "share of A covered by shared text"
    assert "_" not in "".join(SIGNAL_LABELS.values())
