"""Verification (and, last, index extraction) on a Dask cluster gives what the in-process path
gives, without a node, and survives its workers dying.

One `LocalCluster` of two worker processes serves the module (reached by its address, as
``--scheduler tcp://...`` would), with ``allowed-failures`` 1 so that a chunk killing its
worker twice is given up on quickly; one test starts its own through ``--scheduler local``.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bookdup.features import BookFeatures
from bookdup.verify import Verification
from indexer import verify_dask
from indexer.index_dask import DaskExtractor
from indexer.index_worker import Outcome
from indexer.verify_dask import DaskVerifier, require_distributed
from indexer.verify_pool import Planned, open_verifier, verify_here
from indexer.verify_worker import PairTask, hold, verify_chunk
from readers import Source
from tests.indexer.verify_cases import FAKE, needs_lexicon, odd_pair, planned_pairs, same

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def planned() -> list[Planned]:
    return planned_pairs()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    import dask

    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
        ) as local,
    ):
        yield local


def _all_same(got: list[Any], want: list[Any]) -> bool:
    return all(same(g, w) for g, w in zip(got, want, strict=True))


@needs_lexicon
def test_dask_gives_the_in_process_results_in_order(planned, cluster) -> None:
    want = verify_here(planned)
    assert want[-2] is not None and want[-1] is None  # the translation found, not the other
    with DaskVerifier(cluster.scheduler_address, 2, min_chunk=1) as dask_verifier:
        assert dask_verifier.workers == 2
        got = dask_verifier.verify(planned + planned[::-1])
        assert dask_verifier.fallbacks == 0
        assert dask_verifier.verify([]) == []
    assert _all_same(got, want + want[::-1])


def test_a_local_cluster_is_started_and_stopped_for_the_job(planned) -> None:
    verifier = open_verifier(2, "local")
    try:
        assert isinstance(verifier, DaskVerifier) and verifier.workers == 2
        got = verifier.verify(planned[:4])
        assert verifier.fallbacks == 0
    finally:
        verifier.close()
    assert verifier.client is None and verifier._cluster is None
    assert _all_same(got, verify_here(planned[:4]))


def test_a_failing_chunk_is_verified_in_the_job(planned, cluster) -> None:
    """A lexicon the workers cannot load raises in the worker; that chunk is verified again in
    the job's process, and every other chunk still comes back from the cluster."""
    jobs = [*planned[:4], odd_pair(planned), *planned[:4]]
    with DaskVerifier(cluster.scheduler_address, 2, min_chunk=1) as dask_verifier:
        got = dask_verifier.verify(jobs)
        assert dask_verifier.fallbacks == 1
    assert _all_same(got, verify_here(jobs))


def _held_once(log: str, book: BookFeatures) -> BookFeatures:
    """hold, writing down each time a worker receives a book."""
    with open(log, "a") as out:
        out.write(book.book_id + "\n")
    return hold(book)


def test_a_book_goes_to_the_cluster_once_however_many_chunks_hold_it(
    planned, cluster, monkeypatch, tmp_path: Path
) -> None:
    """Twelve chunks of one pair each, every book in six of them, two batches: each book is
    received by the cluster once, and the results are the in-process ones."""
    log = tmp_path / "held"
    monkeypatch.setattr(verify_dask, "hold", functools.partial(_held_once, str(log)))
    jobs = planned[:4] * 3
    books = sorted({x.book_id for a, b, _ in jobs for x in (a, b)})
    with DaskVerifier(cluster.scheduler_address, 2, chunks_per_worker=6, min_chunk=1) as v:
        got = v.verify(jobs) + v.verify(jobs[::-1])
        assert v.books.written == len(books) == 4 and v.fallbacks == 0
    assert sorted(log.read_text().split()) == books
    want = verify_here(jobs)
    assert _all_same(got, want + want[::-1])


def _settles(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Whether ``check`` holds within ``seconds``: releases reach the scheduler a little later."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_books_kept_on_the_cluster_are_bounded(planned, cluster) -> None:
    """Past the byte bound, a settled batch's older books are released, and sent again when a
    later batch needs them; the results do not change."""
    with DaskVerifier(cluster.scheduler_address, 2, min_chunk=1, max_bytes=1) as v:
        got = v.verify(planned[:4]) + v.verify(planned[:4])
        assert v.books.written == 4 + 3  # only the last book sent was kept
        assert _settles(lambda: len(v.client.who_has()) == 1)  # that book, no chunk's result
    assert _all_same(got, verify_here(planned[:4]) * 2)


def _dies_once(marker: str, tasks: list[PairTask], *books: Any) -> list[Verification | None]:
    """verify_chunk, except that the first chunk to run (on any worker) kills its process."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return verify_chunk(tasks, *books)
    os._exit(3)


def _dies_on_the_odd_pair(tasks: list[PairTask], *books: Any) -> list[Verification | None]:
    """verify_chunk, except that the worker process dies on the odd pair, every time."""
    if any(lexicon == FAKE for *_, lexicon in tasks):
        os._exit(3)
    return verify_chunk(tasks, *books)


def test_a_worker_killed_mid_run_is_rescheduled_by_dask(
    planned, cluster, monkeypatch, tmp_path: Path
) -> None:
    """The first chunk kills its worker; the scheduler runs it again on a worker the nanny
    restarted or on the other one: same results, nothing verified in the job's process."""
    marker = tmp_path / "died"
    monkeypatch.setattr(verify_dask, "verify_chunk", functools.partial(_dies_once, str(marker)))
    with DaskVerifier(cluster.scheduler_address, 2, min_chunk=1) as dask_verifier:
        got = dask_verifier.verify(planned[:4] + planned[:4])
        assert marker.exists() and dask_verifier.fallbacks == 0
    assert _all_same(got, verify_here(planned[:4] + planned[:4]))


def test_a_chunk_that_keeps_killing_workers_is_verified_in_the_job(
    planned, cluster, monkeypatch
) -> None:
    """A chunk that kills every worker it runs on is given up by Dask (KilledWorker, past
    ``allowed-failures``); the job verifies it itself and the cluster works on."""
    monkeypatch.setattr(verify_dask, "verify_chunk", _dies_on_the_odd_pair)
    jobs = [*planned[:4], odd_pair(planned), *planned[:4]]
    with DaskVerifier(cluster.scheduler_address, 2, min_chunk=1) as dask_verifier:
        got = dask_verifier.verify(jobs)
        # the odd chunk at least; a chunk queued behind it on a dying worker may be given up too
        fallbacks = dask_verifier.fallbacks
        assert fallbacks >= 1
        again = dask_verifier.verify(planned[:4])
        assert dask_verifier.fallbacks == fallbacks
    assert _all_same(got, verify_here(jobs))
    assert _all_same(again, verify_here(planned[:4]))


def test_without_distributed_the_error_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    with pytest.raises(ValueError, match=r"pip install 'bookdup\[dask\]'"):
        require_distributed()
    with pytest.raises(ValueError, match="distributed"):
        open_verifier(2, "local")


def test_no_scheduler_at_the_address_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="no Dask scheduler at tcp://127.0.0.1:9"):
        DaskVerifier("tcp://127.0.0.1:9", 2, timeout=2)


def _kills_its_worker(source: Source) -> Outcome:
    os._exit(3)


def _raises(source: Source) -> Outcome:
    raise RuntimeError(f"a bug while reading {source.path}")


def test_an_extraction_task_that_fails_on_dask_is_that_books_failure(cluster, tmp_path) -> None:
    """`bookdup index --scheduler` (`indexer.index_dask`): a work item whose task raises or
    keeps killing its worker comes back as a failure naming its file; the next one works."""
    good, bad = Source(tmp_path / "good.txt", "txt"), Source(tmp_path / "bad.txt", "txt")
    with DaskExtractor(cluster.scheduler_address, 2) as extractor:
        assert extractor.workers == 2
        killed = extractor.submit(_kills_its_worker, bad).result()
        raised = extractor.submit(_raises, bad).result()
        fine = extractor.submit(Outcome, str(good.path)).result()
    assert killed.where == str(bad.path) and killed.book_id is None
    assert killed.verdict and "KilledWorker" in killed.verdict
    assert raised.where == str(bad.path) and raised.verdict
    assert raised.verdict.startswith("extraction failed on the Dask cluster: RuntimeError")
    assert fine == Outcome(str(good.path))
