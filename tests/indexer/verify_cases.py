"""The planned pairs the verification tests share (the process pool's and Dask's), and how
their results are compared with the in-process path's.

Real text (Gutenberg bodies, as in tests.fixtures_books): editions, an unrelated book, and the
German translation of Alice through the installed FreeDict lexicon, which each worker loads
itself from its (source, target) key.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.relate import Planner, VerifiedPair
from bookdup.verify import Verification
from indexer.verify_pool import Planned
from readers.dictionaries import DICTD_DIR, Dictionaries
from tests.fixtures_books import add_noise, gutenberg_body, paginate, word_slice

needs_lexicon = pytest.mark.skipif(
    not (DICTD_DIR / "freedict-eng-deu.index").exists(), reason="dict-freedict-eng-deu missing"
)


def _book(book_id: str, language: str, pages: list[str]) -> BookFeatures:
    return dataclasses.replace(extract_features(Book(book_id, pages)), language=language)


def planned_pairs() -> list[Planned]:
    """Same-language pairs (related and not) and, with the lexicon, the translated Alice."""
    pride = paginate(word_slice(gutenberg_body("pride-en-pg1342"), 6000, 2000), 40)
    frank = paginate(word_slice(gutenberg_body("frankenstein-en-1831-pg84"), 6000, 3000), 40)
    books = {
        "pride": _book("pride", "en", pride),
        "noisy": _book("noisy", "en", [add_noise(p, 0.02, seed=7) for p in pride]),
        "vol": _book("vol", "en", pride[: len(pride) // 2]),
        "frank": _book("frank", "en", frank),
    }
    pairs = [("pride", "noisy"), ("pride", "frank"), ("noisy", "vol"), ("frank", "vol")]
    lexicons = Dictionaries(DICTD_DIR.joinpath("freedict-eng-deu.index").exists())
    if lexicons.targets("en"):
        books["en"] = _book("en", "en", paginate(gutenberg_body("alice-en-pg11"), 40))
        de = paginate(gutenberg_body("alice-de-zimmermann-pg19778"), 40)
        books["de"] = _book("de", "de", de)
        pairs += [("de", "en"), ("de", "frank")]
    out, planner = [], Planner(lexicons)  # shared plans, as the job's
    for a, b in pairs:
        plan = planner.plan(books[a], books[b])
        assert plan is not None
        out.append((books[a], books[b], plan))
    return out


def arrays_equal(p: object, q: object) -> bool:
    if p is None or q is None:
        return p is q
    assert isinstance(p, tuple) and isinstance(q, tuple)
    return all(np.array_equal(u, v) for u, v in zip(p, q, strict=True))


def same_verification(g: Verification, w: Verification) -> bool:
    """Equal in every field the classifier reads, the alignment included."""
    scalars = ("x", "y", "shared", "lcs", "cs", "its", "order")
    return (
        all(getattr(g, f) == getattr(w, f) for f in scalars)
        and arrays_equal(g.neighbours, w.neighbours)
        and arrays_equal(g.alignment, w.alignment)
    )


def same(got: VerifiedPair | None, want: VerifiedPair | None) -> bool:
    if got is None or want is None:
        return got is want
    return (
        same_verification(got.verification, want.verification)
        and got.a is want.a
        and got.b is want.b
        and got.dictionary is want.dictionary
    )


FAKE = ("xx", "yy")


def odd_pair(planned: list[Planned]) -> Planned:
    """A pair planned through a made-up lexicon the workers cannot load."""
    a, b, plan = planned[0]
    fake = Dictionary.from_mapping(*FAKE, {"haus": ("house",)})
    return a, b, dataclasses.replace(plan, dictionary=fake, threshold=None)
