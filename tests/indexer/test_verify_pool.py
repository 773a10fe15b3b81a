"""Verification in worker processes gives what the in-process path gives, without a node.

The pairs and the comparison are `tests.indexer.verify_cases`'s (shared with the Dask tests).
"""

from __future__ import annotations

import os
import pickle
from collections import Counter
from types import SimpleNamespace
from typing import cast

import pytest

from bookdup.relate import verify_detached, verify_planned
from bookdup.verify import Verification
from indexer import verify_pool
from indexer.feature_shelf import FeatureShelf
from indexer.verify_pool import AffineRouter, Planned, VerifyPool, chunk_pairs, verify_here
from indexer.verify_worker import PairTask, to_tasks, verify_chunk
from tests.indexer.verify_cases import (
    FAKE,
    needs_lexicon,
    odd_pair,
    planned_pairs,
    same,
    same_verification,
)


@pytest.fixture(scope="module")
def planned() -> list[Planned]:
    return planned_pairs()


def test_the_detached_verification_pickles_and_equals_the_serial_one(planned) -> None:
    found = 0
    for a, b, plan in planned:
        want, got = verify_planned(a, b, plan), verify_detached(a, b, plan)
        assert same(got, want)
        if got is not None:
            found += 1
            back: Verification = pickle.loads(pickle.dumps(got.verification))
            assert same_verification(back, got.verification)
    assert found >= 2  # the editions at least


def test_a_chunk_carries_each_plan_once(planned) -> None:
    tasks = to_tasks(planned)
    plans = {id(plan) for *_, plan in planned}
    assert len(plans) < len(planned)  # the same-language pairs share one plan
    assert len({id(light) for _, _, light, _ in tasks}) == len(plans)
    back = pickle.loads(pickle.dumps(tasks))
    assert len({id(light) for _, _, light, _ in back}) == len(plans)  # pickled once each
    assert all(light.dictionary is None for _, _, light, _ in back)
    got, want = chunk_pairs(planned, verify_chunk(back)), verify_here(planned)
    assert all(same(g, w) for g, w in zip(got, want, strict=True))


@needs_lexicon
def test_a_pool_gives_the_in_process_results_in_order(planned) -> None:
    want = verify_here(planned)
    assert want[-2] is not None and want[-1] is None  # the translation found, not the other
    with VerifyPool(2, min_chunk=1) as pool:
        got = pool.verify(planned + planned[::-1])
        assert pool.fallbacks == 0
        shelf = pool._shelf
        assert shelf is not None  # each book went to the workers once, by reference
        assert shelf.written == len({b.book_id for p in planned for b in p[:2]})
    assert not os.path.exists(shelf.dir)
    assert all(same(g, w) for g, w in zip(got, want + want[::-1], strict=True))


@needs_lexicon
def test_batches_in_flight_together_give_the_in_process_results(planned, monkeypatch) -> None:
    """The dedup job hands a batch over before the one before it is read: each batch's
    results are its own, and a shelf over its bound keeps the books a batch still reads."""
    monkeypatch.setattr(verify_pool, "FeatureShelf", lambda: FeatureShelf(max_bytes=1))
    want = verify_here(planned)
    with VerifyPool(2, min_chunk=1) as pool:
        first = pool.submit(planned)
        second = pool.submit(planned[::-1])
        third = pool.submit(planned[:3])
        got = [first.result(), second.result(), third.result()]
        assert pool.fallbacks == 0  # no worker missed a book the shelf dropped
        shelf = pool._shelf
        assert shelf is not None and len(shelf._held) == 1  # all landed: trimmed to its bound
    for results, expected in zip(got, [want, want[::-1], want[:3]], strict=True):
        assert all(same(g, w) for g, w in zip(results, expected, strict=True))


def test_a_failing_worker_loses_no_pair(planned) -> None:
    """A lexicon the workers cannot load fails its chunk in the worker; the chunk is verified
    again in the job's process, and every other chunk still comes back from the pool."""
    jobs = [*planned[:4], odd_pair(planned), *planned[:4]]
    with VerifyPool(2, min_chunk=1) as pool:
        got = pool.verify(jobs)
        assert pool.fallbacks == 1
    assert all(same(g, w) for g, w in zip(got, verify_here(jobs), strict=True))


def _dies_on_the_odd_pair(tasks: list[PairTask]) -> list[Verification | None]:
    """verify_chunk, except that the worker process dies on the odd pair."""
    if any(lexicon == FAKE for *_, lexicon in tasks):
        os._exit(3)
    return verify_chunk(tasks)


def test_a_crashed_worker_loses_no_pair(planned, monkeypatch) -> None:
    """A worker process dying breaks the pool: every chunk in flight is verified again in the
    job's process, and the next batch gets a new pool."""
    monkeypatch.setattr(verify_pool, "verify_chunk", _dies_on_the_odd_pair)
    jobs = [*planned[:4], odd_pair(planned), *planned[:4]]
    with VerifyPool(2, min_chunk=1, max_restarts=1) as pool:
        got = pool.verify(jobs)
        assert pool.fallbacks >= 1 and pool.restarts_left == 0 and pool._pools
        fallbacks = pool.fallbacks
        again = pool.verify(planned[:4])  # the new pool works
        assert pool.fallbacks == fallbacks
    assert all(same(g, w) for g, w in zip(got, verify_here(jobs), strict=True))
    assert all(same(g, w) for g, w in zip(again, verify_here(planned[:4]), strict=True))


def test_no_shelf_sends_the_books_with_their_chunks(planned, monkeypatch) -> None:
    """Where shared memory takes no shelf (read-only, or full), the pool still verifies."""

    def unwritable() -> None:
        raise PermissionError("read-only /dev/shm")

    monkeypatch.setattr(verify_pool, "FeatureShelf", unwritable)
    with VerifyPool(2, min_chunk=1) as pool:
        assert pool._shelf is None and pool._pools
        got = pool.verify(planned)
        assert pool.fallbacks == 0
    assert all(same(g, w) for g, w in zip(got, verify_here(planned), strict=True))


def test_one_worker_means_no_pool(planned) -> None:
    with VerifyPool(1) as pool:
        assert pool.verify(planned[:2]) and not pool._pools


def _pair(x: str, y: str, lexicon: bool = True) -> Planned:
    """A planned pair as the router reads it: ``x`` (French) translated into ``y``'s English."""
    fr, en = (
        SimpleNamespace(book_id=i, content_hash="h" + i, language=lang)
        for i, lang in ((x, "fr"), (y, "en"))
    )
    lexicon_used = SimpleNamespace(source="fr", target="en") if lexicon else None
    plan = SimpleNamespace(dictionary=lexicon_used)
    return cast(Planned, (en, fr, plan))  # the translated book second: routed by it all the same


def test_a_translated_books_pairs_go_to_one_worker_batch_after_batch() -> None:
    router = AffineRouter(2)
    batch = [_pair(x, f"e{i}") for i in range(6) for x in ("x1", "x2")]
    lanes = router.route(batch)
    by_book: dict[str, set[int]] = {}
    for (_, fr, _), lane in zip(batch, lanes, strict=True):
        by_book.setdefault(fr.book_id, set()).add(lane)
    assert by_book == {"x1": {0}, "x2": {1}}
    later = [_pair("x2", "e9"), _pair("x1", "e9"), _pair("x3", "e9", lexicon=False)]
    assert router.route(later)[:2] == [1, 0]  # the same workers in a later batch


def test_a_book_met_by_a_whole_batch_is_shared_out() -> None:
    """An incremental run's one new book meets every candidate: both workers verify."""
    lanes = AffineRouter(2).route([_pair("new", f"e{i}") for i in range(40)])
    assert sorted(Counter(lanes).values()) == [19, 21]


@needs_lexicon
def test_pairs_routed_to_their_workers_come_back_in_order(planned) -> None:
    """A batch spread over both workers by book gives the in-process results in order."""
    jobs = [p for p in planned for _ in range(3)] + planned[::-1]
    with VerifyPool(2, min_chunk=1) as pool:
        batch = pool.submit(jobs)
        assert isinstance(batch, verify_pool._PoolBatch)
        assert {c.lane for c in batch.chunks} == {0, 1}
        got = batch.result()
        assert pool.fallbacks == 0
    assert all(same(g, w) for g, w in zip(got, verify_here(jobs), strict=True))
