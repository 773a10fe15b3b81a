"""Back-pressure benchmark: the index job against a node that keeps saying "slow down" (429).

    python benchmarks/bench_backpressure.py --books 300 --workdir /tmp/bench-bp

Indexes one generated corpus twice, each time with ``bookdup index`` in its own process on a
fresh private node: first a default node (the baseline), then a throttled one — a 1 MB
indexing-pressure limit (a bulk request whose bytes do not fit is refused whole), one write
thread with a queue of one (shard requests beyond it are refused document by document), a
256 MB heap, and ``--writers`` competing threads bulk-writing filler documents to another
index the whole time. Reports for each run the wall time and books/s, the job's peak memory
(its process and its workers), the 429s the node counted, the books the job sent again and the
smallest request it shrank to; and whether the throttled run indexed exactly the baseline's
books (ids and content hashes). Ends with one ``RESULT …`` line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from quick import add_quick, parse_args

from devnode.config import LocalNodeConfig
from devnode.localnode import start, stop
from generator.corpus import GeneratorConfig, generate_corpus
from store.bulk import bulk_write
from store.connection import ConnectionSettings, connect
from store.iterate import iter_documents
from store.runs import last_runs
from store.schema import IndexNames

REPO = Path(__file__).resolve().parents[1]
THROTTLED = {
    "indexing_pressure.memory.limit": "1mb",
    "thread_pool.write.size": 1,
    "thread_pool.write.queue_size": 1,
}


def index_in_process(url: str, corpus: Path, bulk_chunk: int) -> tuple[float, float, str]:
    """`bookdup index` in its own process: wall seconds, peak RSS in MB of its process tree
    (the job and its workers: `wait4` reports the largest), and the tail of its stderr."""
    command = [sys.executable, "-c", "from bookdup_cli.main import cli; cli()"]
    command += ["--es-url", url, "--index-prefix", "bp", "index", "--workers", "2"]
    command += ["--bulk-chunk", str(bulk_chunk), str(corpus / "books")]
    with tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - t0
        err.seek(0)
        tail = err.read()[-2000:]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"index failed: {tail}")
    return seconds, usage.ru_maxrss / 1024, tail


def node_pressure(url: str) -> dict[str, int]:
    client = connect(ConnectionSettings(url=url))
    node = next(iter(client.nodes.stats(metric="indexing_pressure,thread_pool")["nodes"].values()))
    memory = node["indexing_pressure"]["memory"]["total"]
    return {
        "coordinating_rejections": memory["coordinating_rejections"],
        "primary_rejections": memory["primary_rejections"],
        "write_queue_rejections": node["thread_pool"]["write"]["rejected"],
    }


def books(url: str) -> dict[str, tuple]:
    client = connect(ConnectionSettings(url=url))
    names = IndexNames("bp")
    client.indices.refresh(index=names.books)
    hits = iter_documents(client, names.books, source=["raw_hash", "content_hash"])
    return {h["_id"]: (h["_source"]["raw_hash"], h["_source"]["content_hash"]) for h in hits}


def job_counts(url: str) -> dict:
    runs = last_runs(connect(ConnectionSettings(url=url)), IndexNames("bp"), size=1)
    return runs[0]["counts"]


def competing_writers(url: str, n: int, stop_flag: threading.Event) -> list[threading.Thread]:
    """Threads bulk-writing 2 KB filler documents until ``stop_flag``: other tenants."""

    def loop(w: int) -> None:
        client = connect(ConnectionSettings(url=url, timeout=120))
        i = 0
        while not stop_flag.is_set():
            docs = [
                {"_index": "filler", "_id": f"{w}-{i + k}", "_source": {"t": "z" * 2000}}
                for k in range(100)
            ]
            bulk_write(client, docs, chunk_size=100, max_seconds=120)
            i += 100

    threads = [threading.Thread(target=loop, args=(w,), daemon=True) for w in range(n)]
    for t in threads:
        t.start()
    return threads


def run(cfg: LocalNodeConfig, corpus: Path, bulk_chunk: int, writers: int) -> dict:
    start(cfg)
    try:
        stop_flag = threading.Event()
        threads = competing_writers(cfg.url, writers, stop_flag) if writers else []
        seconds, peak_mb, tail = index_in_process(cfg.url, corpus, bulk_chunk)
        stop_flag.set()
        for t in threads:
            t.join(timeout=180)
        return {
            "seconds": seconds,
            "peak_mb": peak_mb,
            "tail": tail,
            "pressure": node_pressure(cfg.url),
            "counts": job_counts(cfg.url),
            "books": books(cfg.url),
        }
    finally:
        stop(cfg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-bp"))
    parser.add_argument("--port", type=int, default=9560)
    parser.add_argument("--bulk-chunk", type=int, default=20)
    parser.add_argument("--writers", type=int, default=4, help="competing bulk writers")
    add_quick(parser, books=100)
    args = parse_args(parser)

    corpus = args.workdir / f"corpus-{args.books}-s{args.seed}"
    if not (corpus / "ground_truth.jsonl").exists():
        generate_corpus(GeneratorConfig(seed=args.seed, n_books=args.books), corpus)
    # Not under /root: the node runs as an unprivileged user when this runs as root.
    nodes = Path("/tmp") / f"bench-bp-nodes-{os.getpid()}"
    base = LocalNodeConfig(port=args.port, data_dir=nodes / "baseline")
    slow = LocalNodeConfig(
        port=args.port, data_dir=nodes / "throttled", heap="256m", settings=THROTTLED
    )
    baseline = run(base, corpus, args.bulk_chunk, writers=0)
    throttled = run(slow, corpus, args.bulk_chunk, writers=args.writers)

    runs = {"baseline": baseline, "throttled": throttled}
    for name, r in runs.items():
        n = len(r["books"])
        print(
            f"{name:9s} {n} books in {r['seconds']:.1f} s ({n / r['seconds']:.1f} books/s), "
            f"peak {r['peak_mb']:.0f} MB; node 429s {r['pressure']}; job counts {r['counts']}"
        )
    print("throttled run's last words:", throttled["tail"].strip().splitlines()[-2:])
    rate = {name: len(r["books"]) / r["seconds"] for name, r in runs.items()}
    counts = throttled["counts"]
    result = {
        "books": args.books,
        "baseline_books_per_s": f"{rate['baseline']:.1f}",
        "throttled_books_per_s": f"{rate['throttled']:.1f}",
        "throttled_over_baseline": f"{rate['throttled'] / rate['baseline']:.2f}",
        "node_429s": sum(throttled["pressure"].values()),
        "books_resent": counts.get("resent", 0),
        "smallest_chunk": counts.get("smallest_chunk", args.bulk_chunk),
        "baseline_peak_mb": f"{baseline['peak_mb']:.0f}",
        "throttled_peak_mb": f"{throttled['peak_mb']:.0f}",
        "same_books": int(throttled["books"] == baseline["books"]),
        "failed": counts.get("failed"),
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
