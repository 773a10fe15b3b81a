"""Verification on a Dask cluster (`bookdup dedup --scheduler`): the process pool's chunks as
Dask tasks.

``--scheduler`` is `indexer.dask_cluster`'s: ``local`` starts a `LocalCluster` of ``workers``
processes for the job, any other value is a running scheduler's address, whose workers must read
the same FreeDict files. The pairs go in the chunks `indexer.verify_pool` makes, through the
same worker function (`indexer.verify_worker.verify_chunk`): each Dask worker loads a lexicon
once, by its (source, target) key, and keeps it for the job. Results come back in input order.

A worker lost mid-chunk is Dask's to handle: the scheduler runs the chunk again elsewhere (a
`LocalCluster`'s nanny also restarts the process). A chunk that fails anyway — it raised, or
killed `distributed.scheduler.allowed-failures` + 1 workers — is verified again in the job's
process and counted in ``fallbacks``, as with the process pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from bookdup.relate import VerifiedPair
from indexer.dask_cluster import LOCAL, DaskCluster, require_distributed
from indexer.verify_pool import Closing, Planned, chunk_pairs, split_planned, verify_here
from indexer.verify_worker import to_task, verify_chunk

__all__ = ["LOCAL", "DaskVerifier", "require_distributed"]


class DaskVerifier(DaskCluster, Closing):
    """One job's verification on a Dask cluster, with `VerifyPool`'s chunks and fallbacks.
    The cluster is started or reached, and closed, by `indexer.dask_cluster.DaskCluster`."""

    def __init__(
        self,
        scheduler: str,
        workers: int,
        chunks_per_worker: int = 8,
        min_chunk: int = 4,
        timeout: float = 60.0,
    ) -> None:
        self.chunks_per_worker = chunks_per_worker
        self.min_chunk = min_chunk
        self.fallbacks = 0  # chunks verified again in-process after a worker failed
        super().__init__(scheduler, workers, timeout)

    def verify(self, planned: Sequence[Planned]) -> list[VerifiedPair | None]:
        """Each pair's `VerifiedPair` (None below its floor), in the order given."""
        if not planned:
            return []
        chunks = split_planned(planned, self.workers * self.chunks_per_worker, self.min_chunk)
        # one submit a chunk: each graph holds only its chunk's features, and no chunk's key
        # is shared with another job's (pure=False)
        futures = [
            self.client.submit(verify_chunk, [to_task(*p) for p in c], pure=False) for c in chunks
        ]
        out: list[VerifiedPair | None] = []
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                results = future.result()
            except Exception:  # raised in the worker, or KilledWorker: verify it here
                self.fallbacks += 1
                out.extend(verify_here(chunk))
            else:
                out.extend(chunk_pairs(chunk, results))
            future.release()
        return out
