"""benchmarks/cpu_split.py: the soak's CPU split must name the right processes and count their
CPU, or its verdict on where the cores went (issue 30) is wrong."""

from __future__ import annotations

import os
import socket
import sys
import time

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

from cpu_split import cpu_seconds, listening_pid, machine_busy, split_line  # noqa: E402


def test_the_listening_process_is_found_by_its_port() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert listening_pid(port) == os.getpid()
    assert listening_pid(port) is None  # closed: nobody listens


def test_cpu_seconds_count_a_busy_process_and_not_a_sleeping_one() -> None:
    before, machine = cpu_seconds(os.getpid()), machine_busy()
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    busy = cpu_seconds(os.getpid()) - before
    assert 0.2 <= busy <= 1.0
    assert machine_busy() - machine >= 0.2  # the machine saw it too
    slept = cpu_seconds(os.getpid())
    time.sleep(0.3)
    assert cpu_seconds(os.getpid()) - slept < 0.1
    assert cpu_seconds(2**22 + 1) == 0.0  # past pid_max: gone


def test_the_split_shows_what_the_named_processes_did_not_as_other() -> None:
    line = split_line({"server": 30.0, "es": 50.0}, machine=100.0, wall=50.0)
    cores = os.cpu_count() or 1
    assert f"× {cores} cores" in line
    assert f"server 30.0 s ({30 / (50 * cores):.0%})" in line
    assert "other 20.0 s" in line
