"""Soak: `bookdup index` of a generated corpus with the node restarted during the run, and the
final books state compared with a clean run's.

    python benchmarks/soak_index.py --books 10000 --workdir /work/soak --port 9800
    python benchmarks/soak_index.py --books 300 --restarts 2      # a quick check of the script

Starts (or reuses) a private node on ``--port`` with its data in ``<workdir>/node-<port>``,
generates the corpus bench_read.py uses (shared: ``<workdir>/corpus-<N>-s<seed>``), indexes
it once undisturbed (prefix ``soak-clean``), then again (prefix ``soak-faulted``) while the
node is restarted at 1/3, 2/3, … of the books: the first restart SIGKILLs the node's java
process, the next ones stop it gracefully. The job is the real CLI in its own process and is
expected to ride through on its retries; a job that exits non-zero anyway is run again (it
resumes) and counted. Prints the timings, downtimes, the job's peak memory, stray workers and
the state comparison, and ends with one ``RESULT name=value …`` line.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_read import ensure_corpus  # noqa: E402
from quick import add_quick, parse_args  # noqa: E402

from devnode.config import LocalNodeConfig  # noqa: E402
from devnode.localnode import start, stop  # noqa: E402
from devnode.probe import get_json, is_es_process, read_pid  # noqa: E402
from store.connection import ConnectionSettings, connect  # noqa: E402
from store.iterate import iter_documents  # noqa: E402
from store.schema import IndexNames, drop_indices  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CLI = "from bookdup_cli.main import cli; cli()"
STATE_FIELDS = ["raw_hash", "content_hash", "n_unique"]
POLL_S = 2.0
MAX_RERUNS = 5


def uptime() -> str:
    """Load averages: the machine is shared, so every timing is reported next to them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {uptime()}] {msg}", flush=True)


def indexed_count(url: str, names: IndexNames) -> int | None:
    """Documents in the books index, or None while the node is down (a fresh request each
    time: the job's client must not be shared with the prober)."""
    body, _ = get_json(f"{url}/{names.books}/_count", timeout=5)
    return body.get("count") if body else None


def books_state(client, names: IndexNames) -> dict[str, tuple]:
    """Every book's id with what indexing derived from its text (as in
    tests/indexer/test_faults.py, without the cluster ids, which only dedup sets)."""
    client.indices.refresh(index=names.books)
    hits = iter_documents(client, names.books, source=STATE_FIELDS)
    return {h["_id"]: tuple(h["_source"].get(f) for f in STATE_FIELDS) for h in hits}


def _status_kb(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _cmdline(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


@dataclass
class Memory:
    """Peak memory of the job (VmHWM, the kernel's high-water mark, read while it lives) and
    of its worker processes, plus every worker seen, to look for strays after the end."""

    main_hwm_kb: int = 0
    worker_hwm_kb: int = 0
    tree_rss_kb: int = 0  # the largest sum of RSS over the job and its workers in one sample
    workers: dict[int, bytes] = field(default_factory=dict)

    def sample(self, pid: int) -> None:
        self.main_hwm_kb = max(self.main_hwm_kb, _status_kb(pid, "VmHWM") or 0)
        total = _status_kb(pid, "VmRSS") or 0
        for child in _children(pid):
            if (cmd := _cmdline(child)) is not None:
                self.workers.setdefault(child, cmd)
            self.worker_hwm_kb = max(self.worker_hwm_kb, _status_kb(child, "VmHWM") or 0)
            total += _status_kb(child, "VmRSS") or 0
        self.tree_rss_kb = max(self.tree_rss_kb, total)

    def strays(self) -> list[int]:
        """Workers still alive (same pid, same command line) after the job ended."""
        return [p for p, cmd in self.workers.items() if _cmdline(p) == cmd]


@dataclass
class Run:
    """One `bookdup index` process: wall time, exit code, the end of its output."""

    seconds: float
    returncode: int
    stdout: str
    stderr_tail: list[str]


def job_env(url: str, names: IndexNames) -> dict[str, str]:
    return dict(
        os.environ,
        PYTHONPATH=str(REPO),
        ELASTICSEARCH_URL=url,
        BOOKDUP_INDEX_PREFIX=names.prefix,
    )


def start_job(books: Path, url: str, names: IndexNames, logfile: Path) -> subprocess.Popen:
    """The CLI job in its own process, output to files (the progress bar is long)."""
    with logfile.with_suffix(".out").open("wb") as out, logfile.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-c", CLI, "index", str(books)],
            cwd=REPO,
            env=job_env(url, names),
            stdout=out,
            stderr=err,
        )


def finished(proc: subprocess.Popen, logfile: Path, t0: float) -> Run:
    seconds = time.monotonic() - t0
    err = logfile.read_text(errors="replace").replace("\r", "\n").splitlines()
    tail = [line for line in err if line.strip()][-8:]
    out = logfile.with_suffix(".out").read_text(errors="replace").strip()
    return Run(seconds, proc.returncode, out, tail)


def restart_node(cfg: LocalNodeConfig, kill: bool) -> float:
    """SIGKILL the node's java process (``kill``) or stop it gracefully, start it again;
    the downtime in seconds, until the node is healthy (yellow) again."""
    t0 = time.monotonic()
    if kill:
        pid = read_pid(cfg.pidfile)
        if pid is None:
            raise RuntimeError(f"no live node pid in {cfg.pidfile}")
        os.kill(pid, signal.SIGKILL)
        while is_es_process(pid):
            time.sleep(0.1)
    else:
        stop(cfg)
    wait_port_closed(cfg)
    start(cfg)
    return time.monotonic() - t0


def wait_port_closed(cfg: LocalNodeConfig, timeout: float = 60) -> None:
    """Wait until nothing listens on the node's port. A killed JVM's command line vanishes
    (its main thread is gone) while its other threads still hold the listening socket: start()
    then finds a port that accepts connections and does not answer, and refuses to start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((cfg.host, cfg.port), timeout=1).close()
        except OSError:
            return
        time.sleep(0.1)
    raise RuntimeError(f"port {cfg.port} still open {timeout:.0f} s after the node was stopped")


def faulted_index(
    cfg: LocalNodeConfig, books: Path, names: IndexNames, n_books: int, restarts: int, logdir: Path
) -> tuple[list[Run], list[float], Memory]:
    """Index while restarting the node at k/(restarts+1) of the books; rerun a job that fails
    until one exits 0. Returns the runs, the downtimes and the memory of every run."""
    marks = [n_books * (k + 1) // (restarts + 1) for k in range(restarts)]
    downtimes: list[float] = []
    runs: list[Run] = []
    memory = Memory()
    while len(runs) <= MAX_RERUNS:
        logfile = logdir / f"faulted-{len(runs)}.log"
        t0 = time.monotonic()
        proc = start_job(books, cfg.url, names, logfile)
        try:
            while proc.poll() is None:
                memory.sample(proc.pid)
                count = indexed_count(cfg.url, names)
                due = len(downtimes) < len(marks) and count is not None
                if due and count >= marks[len(downtimes)]:
                    kill = not downtimes
                    how = "SIGKILL" if kill else "graceful stop"
                    log(f"{count} books indexed: {how} of the node")
                    downtimes.append(restart_node(cfg, kill))
                    log(f"node back after {downtimes[-1]:.1f} s")
                time.sleep(POLL_S)
        finally:
            if proc.poll() is None:  # this script failed: leave no job behind
                proc.kill()
        runs.append(finished(proc, logfile, t0))
        log(f"faulted job run {len(runs)}: exit {runs[-1].returncode} in {runs[-1].seconds:.0f} s")
        if runs[-1].returncode == 0:
            break
        for line in runs[-1].stderr_tail:
            print(f"    | {line}")
    return runs, downtimes, memory


def compare(clean: dict[str, tuple], faulted: dict[str, tuple]) -> dict[str, list[str]]:
    return {
        "missing": sorted(clean.keys() - faulted.keys()),
        "extra": sorted(faulted.keys() - clean.keys()),
        "different": sorted(i for i in clean.keys() & faulted.keys() if clean[i] != faulted[i]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/work/soak"))
    parser.add_argument("--port", type=int, default=9800)
    parser.add_argument("--restarts", type=int, default=2)
    add_quick(parser, books=500, restarts=1)
    args = parse_args(parser)

    logdir = args.workdir / f"soak-index-{args.books}"
    logdir.mkdir(parents=True, exist_ok=True)
    cfg = LocalNodeConfig(port=args.port, data_dir=args.workdir / f"node-{args.port}")
    start(cfg)
    t0 = time.monotonic()
    corpus = ensure_corpus(args.workdir, args.books, args.seed)
    log(f"corpus {corpus} ready in {time.monotonic() - t0:.0f} s")
    client = connect(ConnectionSettings(url=cfg.url, timeout=120))
    books = corpus / "books"

    clean_names, faulted_names = IndexNames("soak-clean"), IndexNames("soak-faulted")
    drop_indices(client, clean_names)
    t0 = time.monotonic()
    clean_proc = start_job(books, cfg.url, clean_names, logdir / "clean.log")
    clean_proc.wait()
    clean = finished(clean_proc, logdir / "clean.log", t0)
    log(f"clean run: exit {clean.returncode} in {clean.seconds:.0f} s: {clean.stdout}")
    if clean.returncode != 0:
        raise SystemExit("the clean run failed:\n" + "\n".join(clean.stderr_tail))
    clean_state = books_state(client, clean_names)

    drop_indices(client, faulted_names)
    runs, downtimes, memory = faulted_index(
        cfg, books, faulted_names, args.books, args.restarts, logdir
    )
    for i, run in enumerate(runs):
        print(f"  run {i + 1}: exit {run.returncode}, {run.seconds:.0f} s: {run.stdout}")
    ended = time.monotonic()
    client = connect(ConnectionSettings(url=cfg.url, timeout=120))  # the node was restarted
    faulted_state = books_state(client, faulted_names)
    time.sleep(max(0.0, 10 - (time.monotonic() - ended)))
    strays = memory.strays()
    diff = compare(clean_state, faulted_state)
    for kind, ids in diff.items():
        if ids:
            print(f"  {kind}: {len(ids)} e.g. {', '.join(ids[:5])}")
    equal = clean_state == faulted_state
    log(
        f"faulted: {len(runs)} run(s), {sum(r.seconds for r in runs):.0f} s in all; "
        f"downtimes {', '.join(f'{d:.1f} s' for d in downtimes)}; state equal to the clean "
        f"run: {equal} ({len(clean_state)} vs {len(faulted_state)} books); job peak RSS "
        f"{memory.main_hwm_kb / 1024:.0f} MB, workers {memory.worker_hwm_kb / 1024:.0f} MB, "
        f"job + workers {memory.tree_rss_kb / 1024:.0f} MB; stray workers after 10 s: {strays}"
    )
    result = {
        "books": args.books,
        "clean_s": round(clean.seconds, 1),
        "faulted_s": round(sum(r.seconds for r in runs), 1),
        "restarts": len(downtimes),
        "downtime_s": ",".join(f"{d:.1f}" for d in downtimes) or "none",
        "reruns": len(runs) - 1,
        "exit_codes": ",".join(str(r.returncode) for r in runs),
        "state_equal": int(equal),
        "clean_books": len(clean_state),
        "faulted_books": len(faulted_state),
        "missing": len(diff["missing"]),
        "extra": len(diff["extra"]),
        "different": len(diff["different"]),
        "job_peak_rss_mb": round(memory.main_hwm_kb / 1024),
        "worker_peak_rss_mb": round(memory.worker_hwm_kb / 1024),
        "tree_peak_rss_mb": round(memory.tree_rss_kb / 1024),
        "stray_workers": len(strays),
        "load1": uptime().split()[0],
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
