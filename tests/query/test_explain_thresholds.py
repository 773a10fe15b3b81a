"""`explain`'s sentences quote the classifier's thresholds from ``ClassifierParams``, not
figures of their own (no node)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import query.explain
from bookdup.classify import CLASSIFIER_PARAMS
from query.explain import verdict


def _same_work(agreement: float) -> dict[str, Any]:
    region = {"a_pages": [3, 40], "b_pages": [2, 38], "boilerplate": False}
    return {
        "relation": "SAME_WORK",
        "direction": None,
        "lcs": 120,
        "alignment": {"regions": [region]},
        "signals": {"coverage_x": 0.7, "coverage_y": 0.6, "neighbour_agreement": agreement},
    }


def test_same_work_verdict_quotes_the_agreement_threshold() -> None:
    said = verdict(_same_work(0.55))
    editions = max(CLASSIFIER_PARAMS.same_work_agreement)
    assert "only 55 % of the words around them" in said, said
    assert f"over {100 * editions:.0f} %" in said, said


def test_same_work_verdict_follows_the_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    moved = dataclasses.replace(CLASSIFIER_PARAMS, same_work_agreement=(0.93, 0.61))
    monkeypatch.setattr(query.explain, "CLASSIFIER_PARAMS", moved)
    said = verdict(_same_work(0.55))
    assert "over 93 %" in said, said
