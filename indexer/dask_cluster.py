"""The Dask cluster a job runs its tasks on (`--scheduler`), shared by `bookdup dedup`
(`indexer.verify_dask`) and `bookdup index` (`indexer.index_dask`).

``local`` starts a `distributed.LocalCluster` of ``workers`` processes (one thread each: the
work holds the GIL) for the job and stops it after; any other value is the address of a running
scheduler (``tcp://host:8786``) whose workers can import bookdup (and read what the job's tasks
read: the FreeDict files for verification, the input files for indexing).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["LOCAL", "MISSING", "DaskCluster", "require_distributed"]

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


def _silence_dask() -> list[tuple[logging.Logger, int]]:
    """Dask's loggers at ERROR for the cluster's life, and their levels before: the in-process
    scheduler of a `LocalCluster` (which ``silence_logs`` leaves alone) and the client log a
    dozen INFO lines at the start and at the end that would bury the command's own output."""
    loggers = [
        logging.getLogger(name)
        for name in list(logging.root.manager.loggerDict)
        if name == "distributed" or name.startswith("distributed.")
    ]
    before = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    return before


def _connect(client: Any, scheduler: str, timeout: float) -> Any:
    """A `Client` of the running scheduler at ``scheduler``, or one clear ValueError."""
    try:
        return client(scheduler, timeout=timeout)
    except OSError as exc:  # unreachable address, or no scheduler answering there
        raise ValueError(f"no Dask scheduler at {scheduler}: {exc}") from exc


class DaskCluster:
    """A connected `distributed.Client`: to a `LocalCluster` started for the job
    (``scheduler`` ``local``, ``workers`` processes) or to the scheduler at an address.
    ValueError when `distributed` is missing or no scheduler answers at the address."""

    def __init__(self, scheduler: str, workers: int, timeout: float = 60.0) -> None:
        require_distributed()
        from distributed import Client, LocalCluster

        self._cluster: Any = None
        self.client: Any = None
        self._log_levels = _silence_dask()
        try:
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
                self.client = _connect(Client, scheduler, timeout)
            self.client.wait_for_workers(1, timeout=timeout)
        except Exception:
            self.close()  # the cluster started, if any, and Dask's loggers as they were
            raise

    @property
    def workers(self) -> int:
        """The cluster's workers now (a remote cluster may grow or shrink during the job)."""
        return len(self.client.scheduler_info().get("workers", {})) or 1

    def close(self) -> None:
        """Disconnect; a `LocalCluster` started for the job is stopped with its workers."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        for logger, level in self._log_levels:
            logger.setLevel(level)
        self._log_levels = []
