"""Pair keys, the three wordings of a direction, and a relation result flipped and stored."""

from __future__ import annotations

import pytest

from bookdup.orderstat import OrderEvidence
from bookdup.pairs import orient, pair_id, pair_key, part_index
from bookdup.result import RelationResult


def test_a_pair_is_keyed_alike_whichever_book_comes_first() -> None:
    assert pair_key("b", "a") == pair_key("a", "b") == ("a", "b")
    assert pair_id("b", "a") == "a|b"


@pytest.mark.parametrize(
    ("direction", "first", "expected"),
    [
        ("x_in_y", True, "this_in_other"),
        ("x_in_y", False, "other_in_this"),
        ("a_in_b", True, "this_in_other"),
        ("b_in_a", True, "other_in_this"),
        ("b_in_a", False, "this_in_other"),
        (None, True, None),
    ],
)
def test_direction_is_worded_from_either_side(direction, first, expected) -> None:
    assert orient(direction, "side", flip=not first) == expected


def test_stored_direction_names_the_pair_as_the_index_does() -> None:
    assert orient("x_in_y", "stored") == "a_in_b"
    assert orient("y_in_x", "stored") == "b_in_a"
    assert orient(None, "stored") is None
    assert (part_index("a_in_b"), part_index("other_in_this"), part_index(None)) == (0, 1, None)


def _result(**changes) -> RelationResult:
    fields = dict(
        x=100,
        y=300,
        shared=90,
        lcs=80,
        cs=0.9,
        its=0.3,
        order=OrderEvidence(90, 80, 20.0, 3.0, 20.0, 8, ("x", 0.0, 0.25)),
        scores="TRANS",
        relation="TRANSLATION",
        confidence=1.0,
        direction="x_in_y",
        confidences={"TRANSLATION": 1.0},
        signals={"coverage_x": 0.9, "coverage_y": 0.3, "slope": 2.0, "offset": 4.0},
        languages=("de", "en"),
        dictionary="de-en",
        translated="x",
    )
    return RelationResult(**(fields | changes))


def test_a_flipped_result_names_each_side_from_the_other() -> None:
    r = _result()
    back = r.flipped().to_dict()
    assert (back["x"], back["y"], back["languages"]) == (300, 100, ["en", "de"])
    assert (back["direction"], back["translated"], back["order"]["window_of"]) == (
        "y_in_x",
        "y",
        "y",
    )
    assert back["signals"] == {"coverage_x": 0.3, "coverage_y": 0.9, "slope": 0.5, "offset": -2.0}
    assert r.flipped().flipped() == r


def test_a_pruned_result_names_no_translated_side() -> None:
    assert "translated" not in _result(pruned=True, translated=None).to_dict()
    assert list(_result().to_dict())[-2:] == ["translated", "pruned"]


def test_the_stored_document_words_the_direction_for_the_index() -> None:
    doc = _result().to_doc("a", "b")
    assert (doc["a"], doc["b"], doc["direction"], doc["translated"]) == ("a", "b", "a_in_b", True)
    assert doc["evidence"] == {} and doc["signals"] == _result().signals
