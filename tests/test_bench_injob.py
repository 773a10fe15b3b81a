"""benchmarks/bench_injob.py: its replay must verify exactly the pairs the job verified, with
the job's decisions, or its in-job/isolated ratio compares different work."""

from __future__ import annotations

import sys
import uuid

from indexer.dedup_job import DedupParams
from indexer.index_job import IndexOptions, run_index
from store.candidates import CandidateParams
from store.schema import IndexNames, drop_indices
from tests.conftest import REPO
from tests.fixtures_books import build_corpus

sys.path.insert(0, str(REPO / "benchmarks"))

from bench_injob import record_job, replay, screened, warm  # noqa: E402


def test_the_replay_verifies_the_jobs_pairs_with_the_jobs_decisions(es_client, tmp_path) -> None:
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    try:
        run_index(es_client, names, build_corpus(tmp_path).paths, IndexOptions(workers=2))
        # every translated hit screened, a few query books a batch: both kinds, several batches
        screen_all = CandidateParams(max_translation_candidates=0)
        params = DedupParams(candidates=screen_all, batch_size=4, verify_workers=2)
        summary, _, recorder = record_job(es_client, names, params)
    finally:
        drop_indices(es_client, names)
    batches = [b for b in recorder.batches if b.planned]
    pairs = [p for b in batches for p in b.planned]
    assert len(pairs) == summary.verified_pairs
    assert sum(1 for p in pairs if screened(p)) == summary.screened_pairs > 0
    assert len(batches) > 1 and recorder.span > 0
    job = [b.decisions for b in batches]
    assert sum(d is not None for ds in job for d in ds) >= sum(summary.relations.values())
    warm(batches)
    planned = [b.planned for b in batches]
    for workers in (2, 1):
        assert replay(planned, workers, recorder.lexicons)[2] == job
