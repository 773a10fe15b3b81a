"""Translations on the 80 real Gutenberg books (../shared/data/gutenberg), as the dedup job
decides them: boilerplate found from the collection, the canonical lexicon of each pair, the
order statistic. No Elasticsearch: the policy (``bookdup.relate``) is the same one the dedup
job and the lookup of a new text call, so the index only changes which pairs are candidates
(measured by benchmarks/eval_gutenberg.py).

Checks every translation of the README's pair table in both argument orders (the same
answer either way), and every cross-language pair involving a distractor (never a
translation).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bookdup.boilerplate import drop_common_words, frequent_df
from bookdup.features import BookFeatures, extract_features
from bookdup.relate import relate
from readers import iter_books
from readers.dictionaries import Dictionaries, available_pairs

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def books(gutenberg: Path) -> dict[str, BookFeatures]:
    feats = {}
    for book in iter_books(sorted(gutenberg.glob("*.txt"))):
        f = extract_features(book)  # type: ignore[arg-type]
        feats[f.book_id] = f
    df: Counter[int] = Counter()
    for f in feats.values():
        df.update(set(f.unique.hashes.tolist()))
    held = sorted(h for h, n in df.items() if n >= frequent_df(len(feats)))
    frequent = np.array(held, dtype=np.uint32)
    none = np.zeros(0, dtype=np.uint32)
    return {k: drop_common_words(f, none, frequent) for k, f in feats.items()}


@pytest.fixture(scope="module")
def truth(gutenberg: Path) -> list:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from eval_gutenberg import parse_truth

    return parse_truth(gutenberg / "README.md")


@pytest.fixture(scope="module")
def lexicons() -> Dictionaries:
    if not available_pairs():
        pytest.skip("no FreeDict dictionaries installed (scripts/install_dictionaries.sh)")
    return Dictionaries(True)


def test_every_real_translation_in_both_orders(books, truth, lexicons) -> None:
    found, missed = [], []
    for t in truth:
        if t.type not in ("translation", "translation-partial"):
            continue
        a, b = books[t.a], books[t.b]
        ab, ba = relate(a, b, lexicons), relate(b, a, lexicons)
        # argument order never changes the decision nor the evidence
        assert (ab is None) == (ba is None), (t.a, t.b)
        if ab is not None and ba is not None:
            ab_doc, ba_doc = ab.to_dict(), ba.to_dict()
            assert ab.relation == ba.relation and ab_doc["order"]["z"] == ba_doc["order"]["z"]
            if "window_of" in ab_doc["order"]:  # the same window, named from each side
                assert {ab_doc["order"]["window_of"], ba_doc["order"]["window_of"]} == {"x", "y"}
            assert ab.x == ba.y and ab.languages == ba.languages[::-1]
        ok = ab is not None and ab.relation == "TRANSLATION"
        (found if ok else missed).append((t.a, t.b))
    assert not missed  # all 53 (before candidate retrieval; 50 before stems and windows)
    assert len(found) == 53


def test_a_translated_part_says_which_part_of_the_whole(books, lexicons) -> None:
    # chapters 1-3 of Tom Sawyer in English against the whole German book: z 5 over the
    # whole (the chapters' words meet the whole book by chance), far above the floor within
    # the first part of the German book, which the evidence names
    whole, part = books["tomsawyer-de-hellwag-pg30165"], books["tomsawyer-en-part1-pg7193"]
    r = relate(whole, part, lexicons)
    assert r is not None and r.relation == "TRANSLATION"
    order = r.to_dict()["order"]
    assert order["z"] > 15 and order["window_of"] == "x"  # x: the German book, translated
    assert order["window_start"] == 0.0 and order["window_end"] <= 0.25


def test_no_translation_between_unrelated_books(books, truth, lexicons) -> None:
    related = {frozenset((t.a, t.b)) for t in truth}
    distractors = [k for k in books if k.split("-pg")[0] in DISTRACTORS]
    false = []
    for d in distractors:
        for other, f in books.items():
            if f.language == books[d].language or frozenset((d, other)) in related:
                continue
            r = relate(books[d], f, lexicons)
            if r is not None and r.relation == "TRANSLATION":
                false.append((d, other, r.order))
    assert not false


DISTRACTORS = {
    "verwandlung-de",
    "walden-en",
    "scarletletter-en",
    "wuthering-en",
    "effibriest-de",
    "rougeetnoir-fr",
    "germinal-fr",
    "pazos-es",
    "barraca-es",
    "designato-it",
    "rassegnazione-it",
}
