"""The job lock on a real node: one holder, a clear refusal, take-over of dead or expired ones."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from indexer.dedup_job import run_dedup
from store.locks import JobLock, JobLocked
from store.runs import last_runs, process_identity


def lock_doc(client, names) -> dict:
    return client.get(index=names.runs, id="lock-dedup")["_source"]


def test_one_holder_and_a_refusal_naming_it(es_client, index_names) -> None:
    with JobLock(es_client, index_names, "dedup", "dedup-first"):
        with pytest.raises(JobLocked, match="dedup-first") as refused:
            JobLock(es_client, index_names, "dedup", "dedup-second").acquire()
        assert "wait for it to finish" in str(refused.value)
        assert lock_doc(es_client, index_names)["run_id"] == "dedup-first"
    # released: the next job gets it
    with JobLock(es_client, index_names, "dedup", "dedup-third"):
        assert lock_doc(es_client, index_names)["run_id"] == "dedup-third"


def test_an_expired_lock_is_taken_over(es_client, index_names) -> None:
    JobLock(es_client, index_names, "dedup", "dedup-stuck", ttl_s=0.2).acquire()
    time.sleep(0.5)
    JobLock(es_client, index_names, "dedup", "dedup-next").acquire()
    assert lock_doc(es_client, index_names)["run_id"] == "dedup-next"


def test_a_lock_whose_process_died_is_taken_over(es_client, index_names) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    held = JobLock(es_client, index_names, "dedup", "dedup-killed").acquire()
    es_client.update(
        index=index_names.runs, id=held.lock_id, doc={"process": process_identity(child.pid)}
    )
    with pytest.raises(JobLocked):  # its process is alive: the lock holds
        JobLock(es_client, index_names, "dedup", "dedup-early").acquire()
    child.kill()
    child.wait()
    JobLock(es_client, index_names, "dedup", "dedup-after").acquire()
    assert lock_doc(es_client, index_names)["run_id"] == "dedup-after"


def test_renew_pushes_the_expiry(es_client, index_names) -> None:
    lock = JobLock(es_client, index_names, "dedup", "dedup-long", ttl_s=0.4).acquire()
    before = lock_doc(es_client, index_names)["expires_at"]
    time.sleep(0.15)  # more than ttl/4: the next renew writes
    lock.renew()
    assert lock_doc(es_client, index_names)["expires_at"] > before


def test_a_second_dedup_refuses_while_one_runs_and_leaves_no_run_record(
    es_client, index_names
) -> None:
    with (
        JobLock(es_client, index_names, "dedup", "dedup-busy"),
        pytest.raises(JobLocked, match="dedup-busy"),
    ):
        run_dedup(es_client, index_names)
    es_client.indices.refresh(index=index_names.runs)
    assert [r for r in last_runs(es_client, index_names) if r["kind"] == "dedup"] == []
    summary = run_dedup(es_client, index_names)  # free again
    assert summary.books == 0
