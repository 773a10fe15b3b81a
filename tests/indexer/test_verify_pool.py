"""Verification in worker processes gives what the in-process path gives, without a node.

Real text (Gutenberg bodies, as in tests.fixtures_books): editions, an unrelated book, and the
German translation of Alice through the installed FreeDict lexicon, which each worker loads
itself from its (source, target) key.
"""

from __future__ import annotations

import dataclasses
import os
import pickle

import numpy as np
import pytest

from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.relate import VerifiedPair, plan_pair, verify_detached, verify_planned
from bookdup.verify import Verification
from indexer import verify_pool
from indexer.verify_pool import Planned, VerifyPool, verify_here
from indexer.verify_worker import PairTask, verify_chunk
from readers.dictionaries import DICTD_DIR, Dictionaries
from tests.fixtures_books import add_noise, gutenberg_body, paginate, word_slice

needs_lexicon = pytest.mark.skipif(
    not (DICTD_DIR / "freedict-eng-deu.index").exists(), reason="dict-freedict-eng-deu missing"
)


def _book(book_id: str, language: str, pages: list[str]) -> BookFeatures:
    return dataclasses.replace(extract_features(Book(book_id, pages)), language=language)


@pytest.fixture(scope="module")
def planned() -> list[Planned]:
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
    out = []
    for a, b in pairs:
        plan = plan_pair(books[a], books[b], lexicons)
        assert plan is not None
        out.append((books[a], books[b], plan))
    return out


def _arrays_equal(p: object, q: object) -> bool:
    if p is None or q is None:
        return p is q
    assert isinstance(p, tuple) and isinstance(q, tuple)
    return all(np.array_equal(u, v) for u, v in zip(p, q, strict=True))


def _same_verification(g: Verification, w: Verification) -> bool:
    """Equal in every field the classifier reads, the alignment included."""
    scalars = ("x", "y", "shared", "lcs", "cs", "its", "order")
    return (
        all(getattr(g, f) == getattr(w, f) for f in scalars)
        and _arrays_equal(g.neighbours, w.neighbours)
        and _arrays_equal(g.alignment, w.alignment)
    )


def _same(got: VerifiedPair | None, want: VerifiedPair | None) -> bool:
    if got is None or want is None:
        return got is want
    return (
        _same_verification(got.verification, want.verification)
        and got.a is want.a
        and got.b is want.b
        and got.dictionary is want.dictionary
    )


def test_the_detached_verification_pickles_and_equals_the_serial_one(planned) -> None:
    found = 0
    for a, b, plan in planned:
        want, got = verify_planned(a, b, plan), verify_detached(a, b, plan)
        assert _same(got, want)
        if got is not None:
            found += 1
            back: Verification = pickle.loads(pickle.dumps(got.verification))
            assert _same_verification(back, got.verification)
    assert found >= 2  # the editions at least


@needs_lexicon
def test_a_pool_gives_the_in_process_results_in_order(planned) -> None:
    want = verify_here(planned)
    assert want[-2] is not None and want[-1] is None  # the translation found, not the other
    with VerifyPool(2, min_chunk=1) as pool:
        got = pool.verify(planned + planned[::-1])
        assert pool.fallbacks == 0
    assert all(_same(g, w) for g, w in zip(got, want + want[::-1], strict=True))


def test_a_failing_worker_loses_no_pair(planned) -> None:
    """A lexicon the workers cannot load fails its chunk in the worker; the chunk is verified
    again in the job's process, and every other chunk still comes back from the pool."""
    jobs = [*planned[:4], _odd_pair(planned), *planned[:4]]
    with VerifyPool(2, min_chunk=1) as pool:
        got = pool.verify(jobs)
        assert pool.fallbacks == 1
    assert all(_same(g, w) for g, w in zip(got, verify_here(jobs), strict=True))


FAKE = ("xx", "yy")


def _odd_pair(planned: list[Planned]) -> Planned:
    """A pair planned through a made-up lexicon the workers cannot load."""
    a, b, plan = planned[0]
    fake = Dictionary.from_mapping(*FAKE, {"haus": ("house",)})
    return a, b, dataclasses.replace(plan, dictionary=fake, threshold=None)


def _dies_on_the_odd_pair(tasks: list[PairTask]) -> list[Verification | None]:
    """verify_chunk, except that the worker process dies on the odd pair."""
    if any(t.lexicon == FAKE for t in tasks):
        os._exit(3)
    return verify_chunk(tasks)


def test_a_crashed_worker_loses_no_pair(planned, monkeypatch) -> None:
    """A worker process dying breaks the pool: every chunk in flight is verified again in the
    job's process, and the next batch gets a new pool."""
    monkeypatch.setattr(verify_pool, "verify_chunk", _dies_on_the_odd_pair)
    jobs = [*planned[:4], _odd_pair(planned), *planned[:4]]
    with VerifyPool(2, min_chunk=1, max_restarts=1) as pool:
        got = pool.verify(jobs)
        assert pool.fallbacks >= 1 and pool.restarts_left == 0 and pool._pool is not None
        fallbacks = pool.fallbacks
        again = pool.verify(planned[:4])  # the new pool works
        assert pool.fallbacks == fallbacks
    assert all(_same(g, w) for g, w in zip(got, verify_here(jobs), strict=True))
    assert all(_same(g, w) for g, w in zip(again, verify_here(planned[:4]), strict=True))


def test_one_worker_means_no_pool(planned) -> None:
    with VerifyPool(1) as pool:
        assert pool.verify(planned[:2]) and pool._pool is None
