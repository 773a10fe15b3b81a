"""Relation classes on generated books with known truth: abridgements under OCR noise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bookdup.compare import compare_features
from bookdup.features import BookFeatures, extract_features
from generator import GeneratorConfig, generate_corpus
from readers import iter_books


def _abridged_corpus(
    out: Path, **config: Any
) -> tuple[list[dict[str, Any]], dict[str, BookFeatures]]:
    """Truth and features of a generated corpus of abridged works (``config`` overrides):
    two languages, every book noisy, no translations or anthologies."""
    base: dict[str, Any] = {
        "languages": ("en", "de"),
        "clean_fraction": 0.0,
        "abridged_fraction": 1.0,
        "translation_fraction": 0.0,
        "anthology_fraction": 0.0,
    }
    generate_corpus(GeneratorConfig(**{**base, **config}), out)
    truth = [json.loads(x) for x in (out / "ground_truth.jsonl").read_text().splitlines()]
    return truth, {b.id: extract_features(b) for b in iter_books([out / "books"])}


@pytest.mark.parametrize("noise", [(0.0, 0.0), (0.05, 0.10)])
def test_generated_abridgements_are_abridged_with_the_shorter_named(
    tmp_path: Path, noise: tuple[float, float]
) -> None:
    truth, feats = _abridged_corpus(
        tmp_path,
        seed=9,
        n_books=30,
        words_min=3000,
        words_max=8000,
        noise=noise,
        volume_fraction=0.0,
    )
    cut = [t for t in truth if t["relation"] == "ABRIDGED"]
    assert len(cut) >= 8
    found = []
    for t in cut:
        r = compare_features(feats[t["a"]], feats[t["b"]], dictionary=None)
        want = "x_in_y" if t["direction"] == "a_in_b" else "y_in_x"
        found.append((r.relation, r.direction) == ("ABRIDGED", want))
    assert sum(found) >= 0.95 * len(found), found
    # and the editions of those works stay editions
    editions = [t for t in truth if t["relation"] == "DIFFERENT_PAGINATION"]
    for t in editions:
        r = compare_features(feats[t["a"]], feats[t["b"]], dictionary=None)
        assert r.relation != "ABRIDGED", t


def test_small_noisy_volumes_and_abridgements_of_one_work_overlap(tmp_path: Path) -> None:
    """Books of 3K-6K words (4-16 pages) at 10 % noise, every work in volumes and abridged:
    a volume against an abridgement of its whole work shares text, neither holds the other
    (OVERLAPPING_TEXT), while the volumes stay parts of their work and the abridgements
    abridged. A page fit cannot read such small books' text ratio (0.64 of these overlaps in
    their class before stop 52, 0.86 over eight seeds since), and chance matches beside the
    shared text read its share as most of the book. Compared with the dedup job's floors."""
    truth, feats = _abridged_corpus(
        tmp_path,
        seed=6,
        n_books=60,
        words_min=3000,
        words_max=6000,
        noise=(0.1, 0.1),
        volume_fraction=1.0,
        edition_fraction=0.3,
    )
    right: dict[str, list[bool]] = {}
    for t in truth:
        r = compare_features(feats[t["a"]], feats[t["b"]], threshold=0.45, min_z=8.0)
        right.setdefault(t["relation"], []).append(r.relation == t["relation"])
    share = {relation: sum(hits) / len(hits) for relation, hits in right.items()}
    assert len(right["OVERLAPPING_TEXT"]) >= 20 and share["OVERLAPPING_TEXT"] >= 0.85, share
    assert share["CONTIGUOUS_SUBSET"] >= 0.97 and share["ABRIDGED"] >= 0.95, share
