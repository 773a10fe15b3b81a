"""Variants of real books: the pages each variant prints and the truth it states."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from generator.real_variants import VariantConfig, generate_variants, real_prose
from tests.bookdup.test_signals import GUTENBERG, needs_data


def test_real_prose_keeps_paragraphs_and_cuts_at_one() -> None:
    text = "One two three.\n\nFour five\nsix.\n\n\nSeven eight nine ten."
    prose = real_prose(text)
    assert list(prose.words) == [
        "One",
        "two",
        "three.",
        "Four",
        "five",
        "six.",
        "Seven",
        "eight",
        "nine",
        "ten.",
    ]
    assert prose.para_end.nonzero()[0].tolist() == [2, 5, 9]
    assert len(real_prose(text, max_words=7)) == 6  # the third paragraph would pass 7


@needs_data
def test_variants_of_real_books_state_their_relations(tmp_path: Path) -> None:
    config = VariantConfig(GUTENBERG, works=2, max_words=3000, collection_variants=20)
    summary = generate_variants(config, tmp_path)
    books = [json.loads(x) for x in (tmp_path / "books.jsonl").open(encoding="utf-8")]
    truth = [json.loads(x) for x in (tmp_path / "ground_truth.jsonl").open(encoding="utf-8")]
    assert summary["n_books"] == len(books) == 2 * 8 + 1 + 20
    assert {b["id"] for b in books} == {p.stem for p in (tmp_path / "books").glob("*.txt")}
    assert sum(b["id"].startswith("coll") for b in books) == 20
    rel = {(t["a"], t["b"]): t["relation"] for t in truth}
    assert rel[("w00-a-scan02", "w00-a-scan05")] == "SAME_PAGINATION"  # rescans of one page set
    assert rel[("w00-a-scan02", "w00-edition")] == "SAME_PAGINATION"
    assert rel[("w00-edition", "w00-repaged")] == "DIFFERENT_PAGINATION"
    assert rel[("w00-edition", "w00-vol1")] == "CONTIGUOUS_SUBSET"
    assert rel[("w00-abridged", "w00-edition")] == "ABRIDGED"
    assert rel[("anth00", "w00-edition")] == "OVERLAPPING_TEXT"
    assert not any(a.startswith("w00") and b.startswith("w01") for a, b in rel)  # works apart
    # two volumes of one set share nothing: unrelated, as a catalogue must keep them
    vols = sorted(b["id"] for b in books if b["id"].startswith("coll") and b["kind"] == "volume")
    assert any((a, b) not in rel for a in vols for b in vols if a < b)
    languages = Counter(t["languages"][0] == t["languages"][1] for t in truth)
    assert languages == {True: len(truth)}  # anthologies take works of one language
    noisy = (tmp_path / "books" / "w00-a-scan10.txt").read_text(encoding="utf-8")
    clean = (tmp_path / "books" / "w00-edition.txt").read_text(encoding="utf-8")
    assert noisy.count("\f") == clean.count("\f") and noisy != clean  # same pages, rescanned


@needs_data
def test_variants_at_one_noise_level(tmp_path: Path) -> None:
    """``noise_levels=(0.1,)`` puts every variant but the rescans at 10 %, so both books of an
    overlap are as noisy as in a generated set at 10 %."""
    config = VariantConfig(GUTENBERG, works=2, max_words=3000, collection_variants=0,
                           noise_levels=(0.1,))  # fmt: skip
    generate_variants(config, tmp_path)
    books = [json.loads(x) for x in (tmp_path / "books.jsonl").open(encoding="utf-8")]
    drawn = {b["id"]: b["noise"] for b in books if b["kind"] in ("volume", "abridged", "anthology")}
    assert len(drawn) == 2 * 3 + 1 and set(drawn.values()) == {0.1}
    assert {b["noise"] for b in books if b["kind"] == "reprint"} == {0.02, 0.05, 0.1}
