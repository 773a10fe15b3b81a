"""CPU seconds by process over a benchmark's window, from /proc (Linux): on a machine whose
cores the server, its workers, the Elasticsearch node and the load generator all share, which
of them took the CPU (issue 30: a production API's attackers do not run on its machine)."""

from __future__ import annotations

import os
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, all its threads; 0 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()  # the name may hold spaces and ")"
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime: fields 14 and 15


def machine_busy() -> float:
    """CPU seconds all cores spent on anything but idle and I/O wait since boot."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / TICK


def _listening_inodes(port: int) -> set[str]:
    """Socket inodes listening (state 0A) on ``port`` over IPv4 or IPv6."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    return inodes


def listening_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` (the Elasticsearch node), None if none is seen."""
    wanted = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") in wanted for fd in fds):
                return int(entry)
        except OSError:
            continue
    return None


def split_line(used: dict[str, float], machine: float, wall: float) -> str:
    """``used`` CPU seconds by name and what else the machine did, as shares of its capacity
    (``wall`` seconds × cores)."""
    capacity = wall * (os.cpu_count() or 1)
    other = max(0.0, machine - sum(used.values()))
    parts = [
        f"{name} {s:.1f} s ({s / capacity:.0%})" for name, s in {**used, "other": other}.items()
    ]
    return f"CPU over {wall:.0f} s × {os.cpu_count()} cores: " + ", ".join(parts)
