"""The server's worker process: the lowest CPU priority, the work outside the server."""

from __future__ import annotations

import os

from server.workers import Workers, worker_pid, worker_priority


def test_one_worker_at_the_lowest_priority() -> None:
    workers = Workers(1)
    try:
        policy, nice = workers.run(worker_priority)
        assert workers.run(worker_pid) != os.getpid()
        assert len({workers.run(worker_pid) for _ in range(5)}) == 1  # one process
    finally:
        workers.close()
    idle = getattr(os, "SCHED_IDLE", None)
    assert policy == idle or nice == 19, (policy, nice)
