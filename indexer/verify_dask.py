"""Verification on a Dask cluster (`bookdup dedup --scheduler`): the process pool's chunks as
Dask tasks.

``local`` starts a `distributed.LocalCluster` of ``workers`` processes (one thread each: the
LCS holds the GIL) for the job and stops it after; any other value is the address of a running
scheduler (``tcp://host:8786``) whose workers can import bookdup and read the same FreeDict
files. The pairs go in the chunks `indexer.verify_pool` makes, through the same worker function
(`indexer.verify_worker.verify_chunk`): each Dask worker loads a lexicon once, by its (source,
target) key, and keeps it for the job. Results come back in input order.

A worker lost mid-chunk is Dask's to handle: the scheduler runs the chunk again elsewhere (a
`LocalCluster`'s nanny also restarts the process). A chunk that fails anyway — it raised, or
killed `distributed.scheduler.allowed-failures` + 1 workers — is verified again in the job's
process and counted in ``fallbacks``, as with the process pool.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bookdup.relate import VerifiedPair
from indexer.verify_pool import Closing, Planned, chunk_pairs, split_planned, verify_here
from indexer.verify_worker import to_task, verify_chunk

__all__ = ["LOCAL", "DaskVerifier", "require_distributed"]

#: The ``--scheduler`` value that starts a `LocalCluster` for the job.
LOCAL = "local"

MISSING = (
    "--scheduler needs the 'distributed' package (Dask): pip install 'bookdup[dask]' "
    "or pip install distributed"
)


def require_distributed() -> None:
    """Raise ValueError with the install line when `distributed` cannot be imported."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ValueError(MISSING) from exc


class DaskVerifier(Closing):
    """One job's verification on a Dask cluster, with `VerifyPool`'s chunks and fallbacks."""

    def __init__(
        self,
        scheduler: str,
        workers: int,
        chunks_per_worker: int = 8,
        min_chunk: int = 4,
        timeout: float = 60.0,
    ) -> None:
        require_distributed()
        from distributed import Client, LocalCluster

        self.chunks_per_worker = chunks_per_worker
        self.min_chunk = min_chunk
        self.fallbacks = 0  # chunks verified again in-process after a worker failed
        self._cluster: Any = None
        self.client: Any = None
        if scheduler == LOCAL:
            self._cluster = LocalCluster(
                n_workers=max(1, workers),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,  # no dashboard for a job, and its small HTTP server
                scheduler_kwargs={"dashboard_address": ":0"},  # on a free port, not 8787
                silence_logs=logging.ERROR,
            )
            self.client = Client(self._cluster, timeout=timeout)
        else:
            try:
                self.client = Client(scheduler, timeout=timeout)
            except OSError as exc:  # unreachable address, or no scheduler answering there
                raise ValueError(f"no Dask scheduler at {scheduler}: {exc}") from exc
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:
            self.close()
            raise

    @property
    def workers(self) -> int:
        """The cluster's workers now (a remote cluster may grow or shrink during the job)."""
        return len(self.client.scheduler_info().get("workers", {})) or 1

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

    def close(self) -> None:
        """Disconnect; a `LocalCluster` started for the job is stopped with its workers."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
