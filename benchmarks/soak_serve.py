"""Soak: `bookdup serve` under concurrent keep-alive clients for minutes, on loopback: errors,
latency per kind of request, and the server's memory over time.

    python benchmarks/soak_serve.py --prefix benchread-10000 --seconds 600
    python benchmarks/soak_serve.py --prefix benchread-300 --seconds 60 --clients 10   # check

Needs a deduplicated index (``bench_read.py`` builds ``benchread-<N>``) on the node at
``--es-url`` (default ``$ELASTICSEARCH_URL``, else the soak node on 9800), and the corpus it
was built from (``--corpus``; by default ``<workdir>/corpus-<N>-s1`` for ``benchread-<N>``),
whose pages are the texts sent to ``POST /api/match``. The mix: collapsed searches (two words
of a book's opening text, as bench_read.py), related books, explain of related pairs, a few
SVG pictures and matches of a page or two. The server's RSS, threads and open files are read
from /proc every ``--sample-s``. Prints the figures and ends with one ``RESULT …`` line.

``--hostile`` (issue 30): the measured clients send searches and related lookups only, while
another process attacks the server beside them: ``--heavy-clients`` keep-alive clients sending
matches of ~100 KB and explain pictures back to back (far beyond ``--max-heavy``, never
honouring ``Retry-After``), and ``--slow-clients`` sockets trickling a header or a body a few
bytes at a time, reconnecting whenever the server closes them. It reports search and related
p95 under that load, the share of the heavy overflow answered 429/503 and how fast, what the
slow clients got, and the RSS growth; ``--stop-node PORT`` then stops that node
(``bookdup es down``) and times one request per endpoint (503 within 10 s is the contract).

    python benchmarks/soak_serve.py --quick --hostile --stop-node 9360

The attacking process runs at the lowest CPU priority (Linux's ``SCHED_IDLE``, as the server's
heavy worker) unless ``--attacker-priority normal`` (the benchmark before this option): on a
production machine the attackers' CPU is not the server's. It changes little here: the CPU split
below puts the attacker at ~2 % of the two cores and the measuring clients at ~1 %, so a run
with either priority is the same test; it is not a server speed-up.

Every run ends with the CPU split of its load window (``benchmarks/cpu_split.py``, from /proc):
CPU seconds of the server, its workers, the Elasticsearch node at ``--es-url`` (whose idle rate
is read for ``--idle-s`` seconds first: merges and other clients), this process (the measuring
clients), the attacker, and what else the machine did.

``--memory`` (issue 30: memory after 1,000 varied matches within 10 % of its level after the
first 100): no mix, no concurrency: one keep-alive client sends ``--matches`` (default 1,000;
300 with ``--quick``) match texts one after another, each new: a slice of 20–100 KB of the
corpus's books from a random page on (the next books of the same language when one is too
short), about 3 % of its words dropped and 3 % swapped with their neighbour. The RSS of the
server and of its descendants (the verification worker, the resource tracker) is read from
/proc after every 100 matches; the RESULT line compares the total after match 100 with the
total at the end (``growth_pct``).

    python benchmarks/soak_serve.py --memory --es-url http://127.0.0.1:9200 \
        --prefix benchread-200 --corpus /work/quick-read/corpus-200-s1
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import re
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_read import Call, Client, by_kind, http_load, percentiles, search_words, serve  # noqa: E402
from cpu_split import cpu_seconds, listening_pid, machine_busy, split_line  # noqa: E402
from quick import add_quick, parse_args  # noqa: E402

from query.match import read_one_book  # noqa: E402
from query.related import related  # noqa: E402
from server.workers import lowest_priority  # noqa: E402
from store.connection import ConnectionSettings, connect  # noqa: E402
from store.iterate import iter_documents  # noqa: E402
from store.schema import IndexNames  # noqa: E402

#: Requests of each kind in the mix, per 100: what a review session does, mostly reads.
MIX = {"search": 40, "related": 40, "explain": 10, "plot_svg": 3, "match": 7}


def load_avg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {load_avg()}] {msg}", flush=True)


def q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def related_pairs(client, names: IndexNames, ids: list[str], want: int) -> list[tuple[str, str]]:
    """Pairs the index relates (a book and each of its first related books), for explain."""
    pairs: list[tuple[str, str]] = []
    for book_id in ids:
        found = related(client, names.books, names.relations, book_id)["relations"]
        pairs += [(book_id, r["book_id"]) for r in found[:2]]
        if len(pairs) >= want:
            break
    return pairs[:want]


def match_texts(corpus: Path, rng: random.Random, n: int) -> list[bytes]:
    """A page or two (at least 150 words) from the start of random books of the corpus."""
    files = sorted(p for p in (corpus / "books").rglob("*.txt") if p.is_file())
    texts = []
    for path in rng.sample(files, min(n * 2, len(files))):
        pages = read_one_book(path).pages
        take = 1 + rng.randrange(2)
        while take < len(pages) and len(" ".join(pages[:take]).split()) < 150:
            take += 1
        text = "\n\f".join(pages[:take])
        if len(text.split()) >= 150:
            texts.append(text.encode())
        if len(texts) == n:
            break
    return texts


def build_mix(client, names: IndexNames, corpus: Path, seed: int) -> list[Call]:
    """The requests the clients draw from, ``MIX`` per hundred."""
    rng = random.Random(seed)
    ids = sorted(h["_id"] for h in iter_documents(client, names.books, source=False))
    pairs = related_pairs(client, names, rng.sample(ids, len(ids)), 200)
    if not pairs:
        raise SystemExit(f"{names.books} has no related pairs: deduplicate it first")
    queries = search_words(client, names, rng, 200)
    texts = match_texts(corpus, rng, 20)
    kinds = {
        "search": [Call("search", f"/api/search?q={q(s)}&collapse=edition") for s in queries],
        "related": [
            Call("related", f"/api/books/{q(i)}/related")
            for i in rng.sample(ids, min(500, len(ids)))
        ],
        "explain": [Call("explain", f"/api/explain?a={q(a)}&b={q(b)}") for a, b in pairs],
        "plot_svg": [
            Call("plot_svg", f"/api/explain/plot?a={q(a)}&b={q(b)}&format=svg")
            for a, b in pairs[:20]
        ],
        "match": [Call("match", "/api/match", "POST", t) for t in texts],
    }
    mix: list[Call] = []
    for kind, weight in MIX.items():
        mix += [rng.choice(kinds[kind]) for _ in range(weight * 10)]
    return mix


#: The measured clients' mix in ``--hostile`` mode: the cheap reads the attack must not slow.
READS = {"search": 50, "related": 50}


def hostile_calls(mix: list[Call]) -> tuple[list[Call], list[Call]]:
    """(reads, heavy) of ``--hostile``: the mix's searches and related lookups, READS per
    hundred; its explain pictures as PNG and matches of ~100 KB (pages of the mix's texts)."""
    rng = random.Random(7)
    by = {kind: [c for c in mix if c.kind == kind] for kind in MIX}
    reads = [rng.choice(by[kind]) for kind, weight in READS.items() for _ in range(weight * 10)]
    texts = [c.body for c in by["match"] if c.body]
    # ~100 KB each, cut on a character boundary: a cut through a UTF-8 sequence is a 400
    big = [
        b"\n\f".join(rng.sample(texts, len(texts)))[:100_000].decode(errors="ignore").encode()
        for _ in range(10)
    ]
    heavy = [Call("match", "/api/match", "POST", body) for body in big]
    heavy += [Call("plot", c.path.replace("format=svg", "format=png")) for c in by["plot_svg"]]
    return reads, heavy


def heavy_load(port: int, calls: list[Call], clients: int, stop: float) -> dict[str, Any]:
    """``clients`` threads sending ``calls`` back to back until ``stop`` (monotonic): every
    answer's status by kind, and how long refusals (429/503) took."""
    statuses: Counter[str] = Counter()
    refusal_ms: list[float] = []
    lock = threading.Lock()

    def loop(seed: int) -> None:
        rng = random.Random(seed)
        client = Client(port)
        while time.monotonic() < stop:
            call = rng.choice(calls)
            t0 = time.perf_counter()
            status = client.send(call)
            with lock:
                statuses[f"{call.kind}:{status}"] += 1
                if status in ("429", "503"):
                    refusal_ms.append((time.perf_counter() - t0) * 1000)
        client.close()

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"statuses": dict(statuses), "refusal_ms": refusal_ms}


def slow_load(port: int, clients: int, stop: float) -> dict[str, int]:
    """``clients`` sockets, half trickling a header line, half a 100-KB match body, one byte
    (header) or ten (body) per socket every 0.5 s; a socket the server answers or closes is
    counted by what it got and opened again."""
    head = b"GET /api/search?q=a HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 100_000
    body = (
        b"POST /api/match HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 100000\r\n\r\n"
    )
    got: Counter[str] = Counter()

    def opened(i: int) -> list[Any] | None:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            got["connect_failed"] += 1
            return None
        sock.setblocking(False)
        if i % 2:  # the body's headers at once, then the body slowly
            sock.sendall(body)
            return [sock, b"w " * 50_000, 10]
        return [sock, head, 1]

    socks = [opened(i) for i in range(clients)]
    while time.monotonic() < stop:
        for i, entry in enumerate(socks):
            if entry is None:
                socks[i] = opened(i)
                continue
            sock, rest, step = entry
            try:
                answer = sock.recv(4096)
                outcome = answer.split(b" ", 2)[1].decode() if answer else "closed"
            except BlockingIOError:  # nothing yet: send a little more
                try:
                    sock.send(rest[:step])
                    entry[1] = rest[step:]
                    continue
                except OSError:
                    outcome = "closed"
            except (OSError, IndexError):
                outcome = "closed"
            got[f"{'body' if i % 2 else 'header'}:{outcome}"] += 1
            sock.close()
            socks[i] = opened(i)
        time.sleep(0.5)
    for entry in socks:
        if entry is not None:
            entry[0].close()
    return dict(got)


def attack(port: int, heavy: list[Call], args: argparse.Namespace, out: Any) -> None:
    """The hostile load (its own process, so its threads do not slow the measuring ones), at
    the lowest CPU priority unless ``--attacker-priority normal``: real attackers do not run
    on the server's cores. Reports its own CPU seconds too."""
    priority = lowest_priority() if args.attacker_priority == "idle" else "normal"
    stop = time.monotonic() + args.seconds
    slow: dict[str, int] = {}
    trickler = threading.Thread(
        target=lambda: slow.update(slow_load(port, args.slow_clients, stop)), daemon=True
    )
    trickler.start()
    result = heavy_load(port, heavy, args.heavy_clients, stop)
    trickler.join()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put(
        {**result, "slow": slow, "cpu_s": usage.ru_utime + usage.ru_stime, "priority": priority}
    )


def node_down(port: int, es_port: int, calls: dict[str, Call]) -> dict[str, tuple[str, float]]:
    """Stop the node on ``es_port`` and time one request of each kind: (status, seconds)."""
    subprocess.run(["bookdup", "es", "down", "--port", str(es_port)], check=True)
    answers = {}
    for kind, call in calls.items():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        t0 = time.monotonic()
        status, _ = call.send(conn)
        answers[kind] = (status, time.monotonic() - t0)
        conn.close()
    return answers


def proc_figures(pid: int) -> tuple[float, int, int] | None:
    """(RSS MB, threads, open files) of a live process, None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss = re.search(r"^VmRSS:\s+(\d+)", status, re.M)
    threads = re.search(r"^Threads:\s+(\d+)", status, re.M)
    if not rss or not threads:
        return None
    return int(rss.group(1)) / 1024, int(threads.group(1)), fds


class Sampler(threading.Thread):
    """The server's memory, threads and files every ``every`` seconds while the load runs."""

    def __init__(self, pid: int, every: float) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, float, int, int]] = []  # (s, rss MB, threads, fds)
        self.done = threading.Event()
        self.t0 = time.monotonic()

    def run(self) -> None:
        while not self.done.is_set():
            figures = proc_figures(self.pid)
            if figures is not None:
                self.samples.append((time.monotonic() - self.t0, *figures))
            self.done.wait(self.every)


def slope_per_min(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per minute."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return sxy / sxx * 60 if sxx else 0.0


def per_minute(samples: list[tuple[float, str, float, bool]], seconds: float) -> list[str]:
    """Requests, errors and p95 of each minute: a soak must not slow down or fail late."""
    rows = []
    for minute in range(int(seconds // 60 + (seconds % 60 > 0))):
        ms = [s[2] for s in samples if minute * 60 <= s[0] < (minute + 1) * 60]
        bad = sum(1 for s in samples if minute * 60 <= s[0] < (minute + 1) * 60 and not s[3])
        if ms:
            p95 = percentiles(ms)[1]
            rows.append(
                f"  minute {minute + 1:2d}: {len(ms):6d} requests, {bad} errors, p95 {p95:.0f} ms"
            )
    return rows


def server_said(server_log: Path) -> list[str]:
    """What the server wrote on its stderr besides its banner: warnings, errors."""
    return [
        ln
        for ln in server_log.read_text(errors="replace").splitlines()
        if ln.strip() and not ln.startswith("bookdup review page")
    ]


def log_with_stderr(summary: str, server_log: Path) -> int:
    """Log ``summary`` with how many lines the server wrote on its stderr, then the last five;
    returns that count."""
    said = server_said(server_log)
    log(f"{summary}; {len(said)} other lines on its stderr")
    for line in said[-5:]:
        print(f"    | {line}")
    return len(said)


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid`` (children, their children, …), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the name may hold spaces and ")"
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def tree_rss(pid: int) -> tuple[float, dict[int, float]]:
    """(RSS MB of ``pid``, {descendant pid: RSS MB})."""
    own = proc_figures(pid)
    children = {c: f[0] for c in descendants(pid) if (f := proc_figures(c)) is not None}
    return (own[0] if own else 0.0), children


def cpu_marks(server: int, es: int | None) -> dict[str, float]:
    """CPU seconds so far of the server, its workers, the node, this process (the measuring
    clients) and the whole machine."""
    return {
        "server": cpu_seconds(server),
        "worker": sum(cpu_seconds(c) for c in descendants(server)),
        "es": cpu_seconds(es) if es else 0.0,
        "measuring": cpu_seconds(os.getpid()),
        "machine": machine_busy(),
    }


def varied_text(books: dict[str, list[list[str]]], rng: random.Random) -> bytes:
    """A new match text of 20–100 KB: pages of a random book from a random page on (then the
    next books of its language), ~3 % of the words dropped and ~3 % swapped with the next."""
    target = rng.randrange(20_000, 100_000)
    language = rng.choice(sorted(books))
    shelf = books[language]
    start = rng.randrange(len(shelf))
    pages: list[str] = []
    size = 0
    for k in range(len(shelf)):
        book = shelf[(start + k) % len(shelf)]
        first = rng.randrange(max(1, len(book) - 2)) if k == 0 else 0
        for page in book[first:]:
            words = [w for w in page.split() if rng.random() >= 0.03]
            for i in range(len(words) - 1):
                if rng.random() < 0.03:
                    words[i], words[i + 1] = words[i + 1], words[i]
            lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
            pages.append("\n".join(lines))
            size += len(pages[-1].encode()) + 2
            if size >= target:
                break
        if size >= target:
            break
    # cut on a character boundary: a cut through a UTF-8 sequence is a 400
    return "\n\f".join(pages).encode()[:target].decode(errors="ignore").encode()


def corpus_books(corpus: Path) -> dict[str, list[list[str]]]:
    """The corpus's books as lists of pages, by language (``books.jsonl``), else all in one."""
    language: dict[str, str] = {}
    meta = corpus / "books.jsonl"
    if meta.exists():
        for line in meta.read_text().splitlines():
            row = json.loads(line)
            language[str(row.get("book_id") or row.get("id"))] = str(row.get("language", "?"))
    books: dict[str, list[list[str]]] = {}
    for path in sorted(p for p in (corpus / "books").rglob("*.txt") if p.is_file()):
        books.setdefault(language.get(path.stem, "?"), []).append(read_one_book(path).pages)
    return books


def memory_soak(args: argparse.Namespace, names: IndexNames, corpus: Path) -> None:
    """``--memory``: ``args.matches`` varied matches in a row; the server's and its workers'
    RSS after the first 100 and at the end. Prints the figures and the RESULT line."""
    rng = random.Random(args.seed)
    books = corpus_books(corpus)
    log(
        f"memory: {args.matches} varied matches of 20–100 KB, one after another, from "
        f"{sum(map(len, books.values()))} books of {corpus} ({', '.join(sorted(books))})"
    )
    server_log = args.workdir / f"soak_serve-memory-{args.prefix}.stderr"
    server_log.parent.mkdir(parents=True, exist_ok=True)
    with server_log.open("wb") as err:
        proc = serve(names, args.port, stderr=err, extra=("--loop", args.loop))
    log(f"bookdup serve pid {proc.pid} on port {args.port}")
    client = Client(args.port)
    statuses: Counter[str] = Counter()
    ms: list[float] = []
    sizes: list[int] = []
    rows: list[tuple[int, float, float, float, dict[int, float]]] = []
    t0 = time.monotonic()
    try:
        for i in range(1, args.matches + 1):
            body = varied_text(books, rng)
            sizes.append(len(body))
            t1 = time.perf_counter()
            statuses[client.send(Call("match", "/api/match", "POST", body))] += 1
            ms.append((time.perf_counter() - t1) * 1000)
            if i % 100 == 0 or i == args.matches:
                server, children = tree_rss(proc.pid)
                rows.append((i, time.monotonic() - t0, server, sum(children.values()), children))
                each = " ".join(f"{pid}:{mb:.0f}" for pid, mb in sorted(children.items()))
                log(
                    f"match {i:5d}: server {server:.0f} MB, workers {sum(children.values()):.0f}"
                    f" MB ({each}), total {server + sum(children.values()):.0f} MB; "
                    f"statuses {dict(statuses)}"
                )
    finally:
        client.close()
        alive = proc.poll() is None
        proc.terminate()
        proc.wait(timeout=30)
    seconds = time.monotonic() - t0
    first = next((r for r in rows if r[0] >= 100), rows[0] if rows else None)
    last = rows[-1] if rows else None
    before = first[2] + first[3] if first else 0.0
    after = last[2] + last[3] if last else 0.0
    growth = (after - before) / before * 100 if before else 0.0
    p50, p95 = percentiles(ms or [0.0])
    log_with_stderr(
        f"{len(ms)} matches in {seconds:.0f} s (p50 {p50:.0f} ms, p95 {p95:.0f} ms, texts "
        f"{min(sizes, default=0) // 1000}–{max(sizes, default=0) // 1000} KB); total RSS "
        f"{before:.0f} MB after match {first[0] if first else 0}, {after:.0f} MB after match "
        f"{last[0] if last else 0}: {growth:+.1f} % (target within 10 %: "
        f"{'met' if abs(growth) <= 10 else 'missed'}); alive at the end: {alive}",
        server_log,
    )
    result = {
        "matches": len(ms),
        "rss_after_100_mb": round(before, 1),
        "rss_end_mb": round(after, 1),
        "growth_pct": round(growth, 1),
        "server_rss_after_100_mb": round(first[2], 1) if first else 0.0,
        "worker_rss_after_100_mb": round(first[3], 1) if first else 0.0,
        "server_rss_end_mb": round(last[2], 1) if last else 0.0,
        "worker_rss_end_mb": round(last[3], 1) if last else 0.0,
        "ok": statuses.get("200", 0),
        "errors": len(ms) - statuses.get("200", 0),
        "match_p50_ms": round(p50),
        "match_p95_ms": round(p95),
        "text_kb_mean": round(sum(sizes) / max(1, len(sizes)) / 1000, 1),
        "seconds": round(seconds),
        "server_alive": int(alive),
        "load1": load_avg().split()[0],
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()))


def default_corpus(prefix: str, workdir: Path) -> Path:
    m = re.fullmatch(r"benchread-(\d+)", prefix)
    if not m:
        raise SystemExit("give --corpus: the prefix does not name a bench_read corpus")
    return workdir / f"corpus-{m.group(1)}-s1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="benchread-10000")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--port", type=int, default=8800)
    parser.add_argument(
        "--es-url", default=os.environ.get("ELASTICSEARCH_URL", "http://127.0.0.1:9800")
    )
    parser.add_argument("--workdir", type=Path, default=Path("/work/soak"))
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sample-s", type=float, default=10)
    parser.add_argument("--hostile", action="store_true", help="reads under attack (issue 30)")
    parser.add_argument("--heavy-clients", type=int, default=130, help="with --hostile")
    parser.add_argument("--slow-clients", type=int, default=300, help="with --hostile")
    parser.add_argument(
        "--stop-node", type=int, default=None, metavar="PORT", help="with --hostile: at the end"
    )
    parser.add_argument(
        "--idle-s", type=float, default=5, help="seconds the node's idle CPU is read before"
    )
    parser.add_argument(
        "--attacker-priority",
        choices=["idle", "normal"],
        default="idle",
        help="with --hostile: the attacking process's CPU priority (normal: as before issue 30's"
        " CPU split)",
    )
    parser.add_argument(
        "--memory", action="store_true", help="varied matches in a row, RSS (issue 30)"
    )
    parser.add_argument("--matches", type=int, default=1000, help="with --memory")
    parser.add_argument(
        "--loop",
        choices=["auto", "asyncio", "uvloop"],
        default="auto",
        help="the server's event loop (bookdup serve --loop)",
    )
    add_quick(parser, prefix="benchread-200", seconds=60, clients=10, matches=300)
    args = parse_args(parser)

    os.environ["ELASTICSEARCH_URL"] = args.es_url  # for the server process too
    names = IndexNames(args.prefix)
    corpus = args.corpus or default_corpus(args.prefix, args.workdir)
    if args.memory:
        memory_soak(args, names, corpus)
        return
    client = connect(ConnectionSettings.from_env(timeout=300))
    mix = build_mix(client, names, corpus, args.seed)
    log(f"mix of {len(mix)} requests: {json.dumps(MIX)}")
    heavy: list[Call] = []
    if args.hostile:
        mix, heavy = hostile_calls(mix)
        log(
            f"hostile: reads {json.dumps(READS)} measured beside {args.heavy_clients} heavy "
            f"clients (matches of 100 KB, PNG pictures) and {args.slow_clients} slow clients"
        )
    server_log = args.workdir / f"soak_serve-{args.prefix}.stderr"
    with server_log.open("wb") as err:
        proc = serve(names, args.port, stderr=err, extra=("--loop", args.loop))
    sampler = Sampler(proc.pid, args.sample_s)
    sampler.start()
    log(
        f"bookdup serve pid {proc.pid} on port {args.port}; {args.clients} clients for "
        f"{args.seconds:.0f} s"
    )
    hostile: dict[str, Any] = {}
    down: dict[str, tuple[str, float]] = {}
    es_pid = listening_pid(urllib.parse.urlsplit(args.es_url).port or 9200)
    es_idle = es_idle_rate(es_pid, args.idle_s)
    marks = cpu_marks(proc.pid, es_pid), time.monotonic()
    try:
        if args.hostile:
            fork = multiprocessing.get_context("fork")
            out = fork.Queue()
            attacker = fork.Process(target=attack, args=(args.port, heavy, args, out))
            attacker.start()
        load = http_load(args.port, mix, args.clients, args.seconds)
        if args.hostile:
            hostile = out.get(timeout=300)
            attacker.join()
        cpu = cpu_used(marks, cpu_marks(proc.pid, es_pid), hostile.get("cpu_s"))
        if args.hostile and args.stop_node is not None:
            kinds = {c.kind: c for c in [*mix, *heavy]}
            down = node_down(args.port, args.stop_node, kinds)
    finally:
        sampler.done.set()
        sampler.join()
        alive = proc.poll() is None
        proc.terminate()
        proc.wait(timeout=30)
    log(
        f"{load['requests']} requests, {load['rps']:.1f} requests/s, p50 {load['p50']:.0f} ms, "
        f"p95 {load['p95']:.0f} ms, {load['errors']} errors {load['error_counts'] or ''}"
    )
    for kind, (n, p50, p95) in by_kind(load["samples"]).items():
        print(f"  {kind:8s} n={n:6d}  p50 {p50:8.1f} ms  p95 {p95:8.1f} ms")
    print("\n".join(per_minute(load["samples"], args.seconds)))
    print("server (s, RSS MB, threads, open files):")
    print("  " + "  ".join(f"{t:.0f}:{r:.0f}/{th}/{fd}" for t, r, th, fd in sampler.samples))
    later = [(t, r) for t, r, _, _ in sampler.samples if t >= 60]
    rss_all = [r for _, r, _, _ in sampler.samples]
    start_mb = later[0][1] if later else (rss_all[0] if rss_all else 0.0)
    end_mb = rss_all[-1] if rss_all else 0.0
    said = log_with_stderr(
        f"server RSS: {start_mb:.0f} MB at minute 1, {end_mb:.0f} MB at the end, max "
        f"{max(rss_all, default=0):.0f} MB, slope {slope_per_min(later):+.2f} MB/min after "
        f"minute 1; alive at the end: {alive}",
        server_log,
    )
    result = {
        "clients": args.clients,
        "seconds": round(args.seconds),
        "requests": load["requests"],
        "rps": round(load["rps"], 1),
        "p50_ms": round(load["p50"], 1),
        "p95_ms": round(load["p95"], 1),
        "errors": load["errors"],
    }
    for kind, (_, p50, p95) in by_kind(load["samples"]).items():
        result[f"{kind}_p50_ms"], result[f"{kind}_p95_ms"] = round(p50), round(p95)
    result.update(
        rss_start_mb=round(start_mb, 1),
        rss_end_mb=round(end_mb, 1),
        rss_max_mb=round(max(rss_all, default=0), 1),
        rss_slope_mb_per_min=round(slope_per_min(later), 2),
        server_alive=int(alive),
        server_log_lines=said,
        load1=load_avg().split()[0],
    )
    result["rss_growth_mb"] = round(end_mb - (rss_all[0] if rss_all else 0.0), 1)
    result.update({f"cpu_{k}_s": round(v, 1) for k, v in cpu.items()}, es_idle_cpu=es_idle)
    if args.hostile:
        result.update(hostile_figures(hostile, down, args))
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()))


def es_idle_rate(es_pid: int | None, seconds: float) -> float:
    """The node's CPU seconds per second with no load from here (merges, other clients):
    its share of the window's CPU that is not this benchmark's."""
    if not es_pid or seconds <= 0:
        return 0.0
    before = cpu_seconds(es_pid)
    time.sleep(seconds)
    rate = (cpu_seconds(es_pid) - before) / seconds
    log(f"the node idle: {rate:.2f} CPU s/s over {seconds:g} s before the load")
    return round(rate, 2)


def cpu_used(
    marks: tuple[dict[str, float], float], end: dict[str, float], attack_s: float | None
) -> dict[str, float]:
    """CPU seconds each part took between ``marks`` and ``end`` (the attacker's own count,
    when there was one), and what else the machine did ("other"), logged as shares."""
    start, t0 = marks
    used = {k: end[k] - start[k] for k in end if k != "machine"}
    if attack_s is not None:
        used["attack"] = attack_s
    machine = end["machine"] - start["machine"]
    log(split_line(used, machine, time.monotonic() - t0))
    return {**used, "other": max(0.0, machine - sum(used.values()))}


def hostile_figures(
    hostile: dict[str, Any], down: dict[str, tuple[str, float]], args: argparse.Namespace
) -> dict[str, Any]:
    """Print what the attackers got; the RESULT fields of ``--hostile``."""
    statuses: dict[str, int] = hostile["statuses"]
    log(f"heavy clients' answers: {json.dumps(statuses, sort_keys=True)}")
    log(f"slow clients' answers: {json.dumps(hostile['slow'], sort_keys=True)}")
    served = sum(n for k, n in statuses.items() if k.endswith(":200"))
    refused = sum(n for k, n in statuses.items() if k.endswith((":429", ":503")))
    overflow = sum(statuses.values()) - served
    refusal_p50, refusal_p95 = percentiles(hostile["refusal_ms"] or [0.0])
    figures: dict[str, Any] = {
        "attacker": hostile["priority"].replace(" ", "_"),
        "heavy_rps": round(sum(statuses.values()) / args.seconds, 1),
        "heavy_clients": args.heavy_clients,
        "slow_clients": args.slow_clients,
        "heavy_served": served,
        "heavy_overflow": overflow,
        "overflow_429_503_share": round(refused / overflow, 3) if overflow else 1.0,
        "refusal_p95_ms": round(refusal_p95),
        "slow_cut_off": sum(n for k, n in hostile["slow"].items() if not k.startswith("conn")),
    }
    for kind, (status, seconds) in down.items():
        log(f"node stopped: {kind} answered {status} in {seconds:.1f} s")
    if down:
        figures["node_down_statuses"] = ",".join(sorted({s for s, _ in down.values()}))
        figures["node_down_max_s"] = round(max(t for _, t in down.values()), 1)
    return figures


if __name__ == "__main__":
    main()
