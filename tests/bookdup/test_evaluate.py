"""Evaluation metrics on a tiny hand-made case, every expected number worked out by hand."""

from __future__ import annotations

import math

import pytest

from bookdup.evaluate import (
    average_precision,
    best_threshold,
    candidate_recall,
    confusion_matrix,
    direction_accuracy,
    evaluate,
    fraction_verified,
    pair_differences,
    recall_by_shared_words,
    relation_metrics,
    render_report,
    split_train_test,
    translation_map,
)

TRUTH = [
    {"a": "a", "b": "b", "relation": "DIFFERENT_PAGINATION", "direction": None},
    {"a": "a", "b": "c", "relation": "CONTIGUOUS_SUBSET", "direction": "b_in_a"},
    {"a": "d", "b": "e", "relation": "TRANSLATION", "direction": None},
    {"a": "a", "b": "e", "relation": "TRANSLATION", "direction": None},
]
PRED = [
    {"a": "b", "b": "a", "relation": "DIFFERENT_PAGINATION"},  # right (order does not matter)
    {"a": "c", "b": "a", "relation": "CONTIGUOUS_SUBSET", "direction": "a_in_b"},  # right + dir
    {"a": "d", "b": "e", "relation": "OVERLAPPING_TEXT"},  # related, wrong class
    {"a": "b", "b": "c", "relation": "CONTIGUOUS_SUBSET", "direction": "a_in_b"},  # false pair
    {"a": "c", "b": "d", "relation": "UNRELATED"},  # not a prediction
]


def test_precision_recall_f_per_class_and_related() -> None:
    m = relation_metrics(TRUTH, PRED)
    # related: predicted {ab, ac, de, bc}, true {ab, ac, de, ae}: 3 hits
    assert m["RELATED"]["precision"] == pytest.approx(3 / 4)
    assert m["RELATED"]["recall"] == pytest.approx(3 / 4)
    assert m["RELATED"]["f1"] == pytest.approx(3 / 4)
    # CONTIGUOUS_SUBSET: predicted ac, bc; true ac -> P 1/2, R 1, F 2/3
    cs = m["CONTIGUOUS_SUBSET"]
    assert (cs["precision"], cs["recall"], cs["f1"]) == pytest.approx((0.5, 1.0, 2 / 3))
    assert m["DIFFERENT_PAGINATION"]["f1"] == pytest.approx(1.0)
    # TRANSLATION: none predicted, two true
    tr = m["TRANSLATION"]
    assert (tr["precision"], tr["recall"], tr["f1"]) == (0.0, 0.0, 0.0)
    assert m["OVERLAPPING_TEXT"]["precision"] == 0.0
    assert "UNRELATED" not in m


def test_confusion_and_direction() -> None:
    c = confusion_matrix(TRUTH, PRED)
    assert c["TRANSLATION"] == {"OVERLAPPING_TEXT": 1, "UNRELATED": 1}
    assert c["UNRELATED"] == {"CONTIGUOUS_SUBSET": 1, "UNRELATED": 1}
    assert c["CONTIGUOUS_SUBSET"] == {"CONTIGUOUS_SUBSET": 1}
    # the pair (c, a) "a_in_b" is truth's (a, c) "b_in_a": right
    assert direction_accuracy(TRUTH, PRED) == 1.0


def test_translation_map_by_hand() -> None:
    languages = {"a": "en", "d": "en", "x": "en", "e": "de", "f": "de", "g": "de"}
    truth = TRUTH + [{"a": "d", "b": "g", "relation": "TRANSLATION", "direction": None}]
    scores = [
        ("a", "f", 0.9),  # query a: f, e, g -> relevant e at rank 2: AP = 1/2
        ("a", "e", 0.8),
        ("g", "a", 0.1),
        ("d", "e", 0.7),  # query d: e (rank 1), g unscored -> AP = (1/1 + 0) / 2 = 1/2
        ("x", "f", 0.99),  # x has no translation: not a query
    ]
    assert translation_map(truth, scores, languages, "en", "de") == pytest.approx(0.5)
    scores[3] = ("d", "e", 0.7)
    scores.append(("d", "g", 0.95))  # query d: g, e -> AP 1 -> MAP (0.5 + 1) / 2
    assert translation_map(truth, scores, languages, "en", "de") == pytest.approx(0.75)
    assert average_precision(["x", "r1", "y", "r2"], {"r1", "r2"}) == pytest.approx(
        (1 / 2 + 2 / 4) / 2
    )


def test_candidates_and_verified_fraction() -> None:
    assert candidate_recall(TRUTH, [("b", "a"), ("e", "d"), ("x", "y")]) == pytest.approx(2 / 4)
    assert fraction_verified(9, 10) == pytest.approx(9 / 45)


def test_best_threshold_maximises_f() -> None:
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    labels = [True, True, False, True, False, False]
    # t=0.9: P1 R1/3 F.5; t=0.8: F 2*2/(2+3)=.8; t=0.7: 2*2/(3+3)=.667; t=0.6: 2*3/(4+3)=.857
    t, f = best_threshold(scores, labels)
    assert t == 0.6 and f == pytest.approx(6 / 7)
    # tied scores are one threshold: both 0.5s go in together
    t, f = best_threshold([0.5, 0.5, 0.2], [True, False, True])
    assert (t, f) == (0.2, pytest.approx(2 * 2 / (3 + 2)))
    assert best_threshold([0.3], [False]) == (math.inf, 0.0)


def test_split_is_seeded_and_partitions() -> None:
    items = list(range(20))
    train, test = split_train_test(items, seed=1)
    assert sorted(train + test) == items and len(test) == 10
    assert split_train_test(items, seed=1) == (train, test)
    assert split_train_test(items, seed=2) != (train, test)


def test_report_renders_all_sections() -> None:
    metrics = evaluate(TRUTH, PRED, n_books=5, candidates=[("a", "b")], n_verified=4)
    assert metrics["fraction_verified"] == pytest.approx(0.4)
    md = render_report(metrics)
    assert "| CONTIGUOUS_SUBSET | 0.500 | 1.000 | 0.667 |" in md
    assert "## Confusion" in md and "candidate_recall" in md


def test_pair_differences_name_each_missed_wrong_and_false_pair() -> None:
    truth = [
        {"a": "b", "b": "a", "relation": "EXACT"},
        {"a": "a", "b": "c", "relation": "ABRIDGED"},
        {"a": "d", "b": "e", "relation": "TRANSLATION"},
    ]
    predicted = [
        {"a": "a", "b": "b", "relation": "EXACT"},
        {"a": "c", "b": "a", "relation": "OVERLAPPING_TEXT"},
        {"a": "d", "b": "e", "relation": "UNRELATED"},  # counts as not found
        {"a": "f", "b": "a", "relation": "SAME_WORK"},
    ]
    assert pair_differences(truth, predicted) == {
        "missed": [("d", "e", "TRANSLATION", "UNRELATED")],
        "wrong": [("a", "c", "ABRIDGED", "OVERLAPPING_TEXT")],
        "false": [("a", "f", "UNRELATED", "SAME_WORK")],
    }


def test_overlap_recall_is_reported_by_the_words_each_pair_shares() -> None:
    """A paragraph, a chapter and a book's worth of shared text, each in its own bin."""
    truth = [
        {"a": "a", "b": "b", "relation": "OVERLAPPING_TEXT", "coverage_a": 0.1},  # 300 words
        {"a": "a", "b": "c", "relation": "OVERLAPPING_TEXT", "coverage_a": 0.5},  # 1,500
        {"a": "d", "b": "c", "relation": "OVERLAPPING_TEXT", "coverage_a": 0.25},  # 2,500
        {"a": "d", "b": "e", "relation": "OVERLAPPING_TEXT", "coverage_a": 0.5},  # 5,000
        {"a": "d", "b": "f", "relation": "EXACT", "coverage_a": 1.0},  # another class
        {"a": "x", "b": "e", "relation": "OVERLAPPING_TEXT", "coverage_a": 0.5},  # size unknown
    ]
    predicted = [
        {"a": "c", "b": "a", "relation": "OVERLAPPING_TEXT"},
        {"a": "d", "b": "c", "relation": "CONTIGUOUS_SUBSET"},  # found, another class
        {"a": "d", "b": "e", "relation": "OVERLAPPING_TEXT"},
    ]
    n_words = {"a": 3000, "d": 10_000}
    by_size = recall_by_shared_words(truth, predicted, n_words)
    assert by_size == {
        "< 500": {"recall": 0.0, "tp": 0, "true": 1},
        "1000-2000": {"recall": 1.0, "tp": 1, "true": 1},
        ">= 2000": {"recall": 0.5, "tp": 1, "true": 2},
    }
    md = render_report(evaluate(truth, predicted, n_books=6, n_words=n_words))
    assert "| >= 2000 | 0.500 | 1 | 2 |" in md
