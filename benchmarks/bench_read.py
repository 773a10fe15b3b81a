"""Read-side benchmark: latency of related(), collapsed search(), match() and explain() with
its picture, and the HTTP API under concurrent clients, on a generated corpus.

    python benchmarks/bench_read.py --books 1000 --workdir /tmp/bench-read
    python benchmarks/bench_read.py --books 1000 --reuse      # index already built

Needs a running node (ELASTICSEARCH_URL). The corpus is generated (``generator``) and indexed
and deduplicated under the prefix ``benchread-<N>`` unless ``--reuse``. The HTTP part runs
``bookdup serve`` in its own process and ``--clients`` threads with keep-alive connections
for ``--seconds``. Prints p50/p95 per call and ends with one ``RESULT name=value …`` line.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from quick import add_quick, parse_args

from bookdup.model import Book
from generator.corpus import GeneratorConfig, generate_corpus
from indexer.dedup_job import run_dedup
from indexer.index_job import run_index
from query.context import ReadSide
from query.explain import explain
from query.match import match, read_one_book
from query.plots import render_explain
from query.related import related
from query.search import search
from store.connection import ConnectionSettings, connect
from store.iterate import iter_documents
from store.schema import IndexNames, drop_indices


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def timed(call: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def ensure_corpus(workdir: Path, n_books: int, seed: int) -> Path:
    """The generated corpus of ``n_books`` under ``workdir``, generated once: the soak
    benchmarks and this one share it, and 10K books take minutes to generate."""
    out = workdir / f"corpus-{n_books}-s{seed}"
    if not (out / "ground_truth.jsonl").exists():
        generate_corpus(GeneratorConfig(seed=seed, n_books=n_books), out)
    return out


def build(client, names: IndexNames, n_books: int, workdir: Path, seed: int) -> Path:
    out = ensure_corpus(workdir, n_books, seed)
    drop_indices(client, names)
    t0 = time.monotonic()
    run_index(client, names, [out / "books"])
    run_dedup(client, names)
    client.indices.refresh(index=[names.books, names.relations])
    print(f"indexed and deduplicated {n_books} books in {time.monotonic() - t0:.0f} s")
    return out


def search_words(client, names: IndexNames, rng: random.Random, n: int) -> list[str]:
    """Query strings: two words from the opening text of random books."""
    hits = list(iter_documents(client, names.books, source=["excerpt"]))
    out = []
    for hit in rng.sample(hits, min(n, len(hits))):
        words = [w for w in (hit["_source"].get("excerpt") or "").split() if w.isalpha()]
        out.append(" ".join(rng.sample(words, 2)) if len(words) >= 2 else "the")
    return out


def bench_calls(rs: ReadSide, ids: list[str], queries: list[str], book: Book) -> dict:
    names, rng = rs.names, random.Random(1)
    rel = timed(lambda: related(rs.client, names.books, names.relations, rng.choice(ids)), 300)
    qs = iter(queries * 3)
    srch = timed(lambda: search(rs.client, names.books, next(qs)), 300)
    rs.state()  # stop lists and lexicons: read once per server lifetime, not per request
    mt = timed(lambda: match(rs, book), 5)
    pairs = []
    for book_id in ids[:20]:
        found = related(rs.client, names.books, names.relations, book_id)["relations"]
        pairs += [(book_id, r["book_id"]) for r in found[:1]]
    it = iter(pairs * 5)

    def explain_with_picture() -> None:
        a, b = next(it)
        render_explain(explain(rs, a, b), "png")

    ex = timed(explain_with_picture, min(20, len(pairs)))
    return {"related": rel, "search": srch, "match": mt, "explain": ex}


@dataclass(frozen=True)
class Call:
    """One request of an HTTP load mix; ``kind`` groups the figures (search, related, …)."""

    kind: str
    path: str
    method: str = "GET"
    body: bytes | None = None
    content_type: str = "text/plain; charset=utf-8"

    def send(self, conn: http.client.HTTPConnection) -> tuple[str, bool]:
        """Send this request on ``conn`` and read the answer: (its status, or the exception's
        name; whether the connection failed and should be replaced)."""
        headers = {"Content-Type": self.content_type} if self.body is not None else {}
        try:
            conn.request(self.method, self.path, body=self.body, headers=headers)
            response = conn.getresponse()
            response.read()
            return str(response.status), False
        except (OSError, http.client.HTTPException) as exc:
            return type(exc).__name__, True


class Client:
    """One keep-alive connection to the server on ``port``, replaced when a request breaks it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = self._connect()

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def send(self, call: Call) -> str:
        """The answer's status, or the name of the exception that broke the connection."""
        status, failed = call.send(self.conn)
        if failed:
            self.conn.close()
            self.conn = self._connect()
        return status

    def close(self) -> None:
        self.conn.close()


def http_load(
    port: int, calls: Sequence[str | Call], clients: int, seconds: float
) -> dict[str, Any]:
    """``clients`` threads, one keep-alive connection each, sending requests drawn from
    ``calls`` (a plain path is a GET of kind "get") for ``seconds``. Errors are non-2xx
    answers and connection failures, counted as "kind:status". ``samples`` holds every
    request as (seconds since the start, kind, ms, ok), for figures over time."""
    mix = [c if isinstance(c, Call) else Call("get", c) for c in calls]
    samples: list[tuple[float, str, float, bool]] = []
    errors: Counter[str] = Counter()
    lock = threading.Lock()
    began = time.monotonic()
    stop = began + seconds

    def client_loop(seed: int) -> None:
        rng = random.Random(seed)
        client = Client(port)
        mine: list[tuple[float, str, float, bool]] = []
        bad: Counter[str] = Counter()
        while time.monotonic() < stop:
            call = rng.choice(mix)
            t0 = time.perf_counter()
            status = client.send(call)
            if status.startswith("2"):
                status = ""
            ms = (time.perf_counter() - t0) * 1000
            mine.append((time.monotonic() - began, call.kind, ms, not status))
            if status:
                bad[f"{call.kind}:{status}"] += 1
        client.close()
        with lock:
            samples.extend(mine)
            errors.update(bad)

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    p50, p95 = percentiles([ms for _, _, ms, _ in samples])
    return {
        "rps": len(samples) / seconds,
        "p50": p50,
        "p95": p95,
        "errors": sum(errors.values()),
        "requests": len(samples),
        "error_counts": dict(errors),
        "samples": samples,
    }


def by_kind(samples: list[tuple[float, str, float, bool]]) -> dict[str, tuple[int, float, float]]:
    """(n, p50, p95) of each kind of request in an `http_load` sample list."""
    kinds: dict[str, list[float]] = {}
    for _, kind, ms, _ in samples:
        kinds.setdefault(kind, []).append(ms)
    return {k: (len(v), *percentiles(v)) for k, v in sorted(kinds.items())}


def serve(
    names: IndexNames,
    port: int,
    stderr: IO[bytes] | int = subprocess.DEVNULL,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen:
    """`bookdup serve` in its own process, returned once it answers; ``stderr`` takes its log
    (the soak benchmark keeps it, to show what went wrong)."""
    env = dict(os.environ, BOOKDUP_INDEX_PREFIX=names.prefix)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from bookdup_cli.main import cli; cli()",
            "serve",
            "--port",
            str(port),
            *extra,
        ],
        env=env,
        stderr=stderr,
    )
    for _ in range(200):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/openapi.json")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("bookdup serve did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bench-read"))
    parser.add_argument("--reuse", action="store_true", help="the index is already built")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--port", type=int, default=8765)
    add_quick(parser, books=200, seconds=20)
    args = parse_args(parser)

    client = connect(ConnectionSettings.from_env(timeout=300))
    names = IndexNames(f"benchread-{args.books}")
    corpus = args.workdir / f"corpus-{args.books}-s{args.seed}"
    if not args.reuse:
        corpus = build(client, names, args.books, args.workdir, args.seed)
    rs = ReadSide(client, names)
    ids = sorted(h["_id"] for h in iter_documents(client, names.books, source=False))
    rng = random.Random(args.seed)
    queries = search_words(client, names, rng, 100)
    # match() of a long real text: Pride and Prejudice (~120K words), else the largest book
    real = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "gutenberg"
    biggest = real / "pride-en-pg1342.txt"
    if not biggest.exists():
        biggest = max((corpus / "books").iterdir(), key=lambda p: p.stat().st_size)
    book = read_one_book(biggest)
    n_words = sum(len(p.split()) for p in book.pages)
    calls = bench_calls(rs, ids, queries, book)
    results = {}
    for name, samples in calls.items():
        p50, p95 = percentiles(samples)
        results[f"{name}_p50_ms"], results[f"{name}_p95_ms"] = round(p50, 1), round(p95, 1)
        print(f"{name:8s} n={len(samples):4d}  p50 {p50:8.1f} ms  p95 {p95:8.1f} ms")
    print(f"(match: a {n_words:,}-word book, {biggest.name})")

    paths = [Call("related", f"/api/books/{urllib.parse.quote(i)}/related") for i in ids[:500]]
    paths += [Call("search", f"/api/search?q={urllib.parse.quote(q)}") for q in queries]
    proc = serve(names, args.port)
    try:
        load = http_load(args.port, paths, args.clients, args.seconds)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(
        f"HTTP: {args.clients} clients for {args.seconds:.0f} s: {load['rps']:.0f} requests/s, "
        f"p50 {load['p50']:.0f} ms, p95 {load['p95']:.0f} ms, {load['errors']} errors"
        + (f" {load['error_counts']}" if load["errors"] else "")
    )
    for kind, (n, p50, p95) in by_kind(load["samples"]).items():
        print(f"  {kind:8s} n={n:5d}  p50 {p50:8.1f} ms  p95 {p95:8.1f} ms")
    results.update(
        books=args.books,
        match_words=n_words,
        http_clients=args.clients,
        http_requests=load["requests"],
        http_rps=round(load["rps"], 1),
        http_p95_ms=round(load["p95"], 1),
        http_errors=load["errors"],
    )
    print("RESULT " + " ".join(f"{k}={v}" for k, v in results.items()))


if __name__ == "__main__":
    main()
