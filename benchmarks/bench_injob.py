"""In-job verification against the isolated kernel, on the same pairs (issue 28's 60 % target).

Runs a full dedup on an existing index (``--index-prefix``), recording every batch the job
hands its verifier (the job's own `open_verifier` is wrapped, not changed), then replays those
batches through the same verification code with nothing else running:

- **The pairs**: every planned pair the job submitted to its verifier — the searches'
  candidates, the pairs re-verified in full after failing a screen, and the pairs through found
  translations. A pair is *screened* when its plan carries an order screen (``screen_z``), else
  *full*; both counts and their sum are printed.
- **In job**: pairs ÷ the job's verification span (its first batch handed to the verifier →
  its last batch's results back in the driver: the wall during which the job verifies, searches
  and writes overlapping), and pairs ÷ the whole dedup wall (prepare and clustering included).
  The job's own ``verify_s`` timer (driver time spent planning, submitting, waiting and
  classifying) is printed too, but it hides the verification that overlaps the searches.
- **Isolated**: the same batches, in the same order, through `VerifyPool` (the job's routing,
  chunking, feature shelf and worker tasks), two in flight at a time as in the job, with the
  features already in memory, no node work, no searches, no classification, no writes; with 2
  workers (the job's pool) and with 1 (the in-process path). Kernels are warm: a first pass
  over a sample of each kind of pair, not timed, compiles them in this process before the
  workers fork, then the cache of prepared books is emptied (the job's workers start empty).
  The 2-worker replay is also run for each kind of pair alone.
- **Ratio** = in-job pairs/s (span) ÷ isolated pairs/s (2 workers); also given against the
  whole dedup wall. The replays' decisions are checked against the job's (same verification
  figures for every pair).

    flock /tmp/heavy.lock python benchmarks/bench_injob.py --index-prefix s45q

Needs a running node (ELASTICSEARCH_URL) and an indexed collection. Ends with one ``RESULT``
line.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from elasticsearch import Elasticsearch

import indexer.dedup_job
from bookdup import verify
from bookdup.relate import VerifiedPair
from indexer.dedup_job import DedupParams, DedupSummary, run_dedup
from indexer.verify_pool import Pending, Planned, Verifier, VerifyPool, verify_here
from readers.dictionaries import Dictionaries
from store.connection import ConnectionSettings, connect
from store.schema import IndexNames

#: What decides a pair: None below its screen or floor, else its verification's figures.
Decision = tuple[int, int, int, int, float, float, float] | None

#: Pairs of each kind verified by the untimed first pass that compiles the kernels.
WARM_PAIRS = 100


def decision(verified: VerifiedPair | None) -> Decision:
    if verified is None:
        return None
    v = verified.verification
    return (v.x, v.y, v.shared, v.lcs, round(v.cs, 9), round(v.its, 9), round(v.order_z, 6))


def screened(planned: Planned) -> bool:
    return planned[2].screen_z is not None


@dataclass
class Batch:
    """One batch the job handed its verifier, and its decisions once landed."""

    planned: list[Planned]
    decisions: list[Decision] = field(default_factory=list)


class _Recorded:
    def __init__(self, pending: Pending, batch: Batch, landed: Callable[[], None]) -> None:
        self.pending, self.batch, self.landed = pending, batch, landed

    def result(self) -> list[VerifiedPair | None]:
        results = self.pending.result()
        self.batch.decisions = [decision(v) for v in results]
        self.landed()
        return results


class RecordingVerifier:
    """The job's verifier with every batch kept, and the span from the first batch handed to
    it to the last batch landed."""

    def __init__(self, inner: Verifier, lexicons: Dictionaries | None) -> None:
        self.inner = inner
        self.lexicons = lexicons
        self.batches: list[Batch] = []
        self.first: float | None = None
        self.last = 0.0
        self.started = self.ended = 0.0  # the whole run's (`record_job`)
        self.fallbacks = 0  # read by the job once closed

    def submit(self, planned: Sequence[Planned]) -> Pending:
        if self.first is None:
            self.first = time.monotonic()
        batch = Batch(list(planned))
        self.batches.append(batch)
        return _Recorded(self.inner.submit(planned), batch, self._landed)

    def _landed(self) -> None:
        self.last = time.monotonic()

    def verify(self, planned: Sequence[Planned]) -> list[VerifiedPair | None]:
        return self.submit(planned).result()

    def close(self) -> None:
        self.inner.close()
        self.fallbacks = self.inner.fallbacks

    @property
    def span(self) -> float:
        return self.last - (self.first or self.last)


def record_job(
    client: Elasticsearch, names: IndexNames, params: DedupParams
) -> tuple[DedupSummary, float, RecordingVerifier]:
    """A full dedup run with its verifier recorded: (summary, wall seconds, recorder)."""
    opened = indexer.dedup_job.open_verifier
    recorders: list[RecordingVerifier] = []

    def recording(
        workers: int, scheduler: str | None = None, lexicons: Dictionaries | None = None
    ) -> Verifier:
        recorders.append(RecordingVerifier(opened(workers, scheduler, lexicons), lexicons))
        return recorders[-1]

    indexer.dedup_job.open_verifier = recording
    try:
        started = time.monotonic()
        summary = run_dedup(client, names, params=params)
        wall = time.monotonic() - started
    finally:
        indexer.dedup_job.open_verifier = opened
    recorder = recorders[0]
    recorder.started, recorder.ended = started, started + wall
    return summary, wall, recorder


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _empty_prepared_cache() -> None:
    """The workers fork from this process: they must start, as the job's did, with no book
    prepared."""
    limit = verify.cache_limits()
    verify.set_cache_limit(max_entries=1)
    verify.set_cache_limit(*limit)


def warm(batches: Sequence[Batch]) -> None:
    """Compile every kernel the pairs use: some pairs of each kind (same language, translated,
    screened) verified here, untimed."""
    kinds: dict[tuple[bool, bool], list[Planned]] = {}
    for batch in batches:
        for p in batch.planned:
            group = kinds.setdefault((screened(p), p[2].dictionary is not None), [])
            if len(group) < WARM_PAIRS:
                group.append(p)
    for group in kinds.values():
        verify_here(group)
    _empty_prepared_cache()


def replay(
    batches: Sequence[Sequence[Planned]], workers: int, lexicons: Dictionaries | None
) -> tuple[float, float, list[list[Decision]]]:
    """The batches through a fresh `VerifyPool`, two in flight as in the job: (wall seconds,
    the workers' CPU seconds, each batch's decisions)."""
    _empty_prepared_cache()
    cpu = _children_cpu(), time.process_time()
    out: list[list[Decision]] = []
    with VerifyPool(workers, lexicons=lexicons) as pool:  # forked (and warmed) before the clock
        started = time.monotonic()
        flying: Pending | None = None
        for planned in batches:
            pending = pool.submit(planned)
            if flying is not None:
                out.append([decision(v) for v in flying.result()])
            flying = pending
        if flying is not None:
            out.append([decision(v) for v in flying.result()])
        wall = time.monotonic() - started
    # pool closed: its workers' CPU is counted; in-process, this process's is the kernel's
    spent = _children_cpu() - cpu[0] if workers > 1 else time.process_time() - cpu[1]
    return wall, spent, out


def only(batches: Sequence[Batch], kind: bool) -> Iterator[list[Planned]]:
    """Each batch's pairs of one kind (screened or not), empty batches dropped."""
    for batch in batches:
        part = [p for p in batch.planned if screened(p) == kind]
        if part:
            yield part


def compare(
    summary: DedupSummary, dedup_s: float, rec: RecordingVerifier, workers: int, kinds: bool
) -> dict[str, float]:
    """The recorded job's pairs replayed in isolation (`replay`): the figures of the
    ``RESULT`` line, by name (progress printed on the way)."""
    t = summary.timings
    batches = [b for b in rec.batches if b.planned]
    pairs = sum(len(b.planned) for b in batches)
    n_screened = sum(1 for b in batches for p in b.planned if screened(p))
    print(
        f"job: books={summary.books} batches={len(batches)} pairs={pairs} "
        f"full={pairs - n_screened} screened={n_screened} "
        f"(summary: verified={summary.verified_pairs} screened={summary.screened_pairs} "
        f"screened_out={summary.screened_out} fallbacks={summary.verify_fallbacks})",
        flush=True,
    )
    print(
        "job timings: "
        + " ".join(f"{k}={v:.1f}" for k, v in t.items() if k != "pairs_verified_per_s")
        + f" span_s={rec.span:.1f} dedup_wall_s={dedup_s:.1f}"
        f" before_first_batch_s={(rec.first or rec.started) - rec.started:.1f}"
        f" after_last_batch_s={rec.ended - rec.last:.1f}",
        flush=True,
    )
    warm(batches)
    planned = [b.planned for b in batches]
    pool_s, pool_cpu, pool = replay(planned, workers, rec.lexicons)
    print(f"isolated {workers} workers: {pool_s:.1f} s, workers cpu {pool_cpu:.1f} s")
    one_s, one_cpu, one = replay(planned, 1, rec.lexicons)
    print(f"isolated 1 worker (in-process): {one_s:.1f} s, cpu {one_cpu:.1f} s", flush=True)
    w = f"isolated{workers}"
    out = {
        "pairs": pairs,
        "pairs_full": pairs - n_screened,
        "pairs_screened": n_screened,
        "dedup_s": dedup_s,
        "verify_span_s": rec.span,
        "job_verify_timer_s": t.get("verify_s", 0.0),
        "injob_pairs_per_s": pairs / max(rec.span, 1e-9),
        "injob_pairs_per_dedup_s": pairs / dedup_s,
        f"{w}_pairs_per_s": pairs / pool_s,
        "isolated1_pairs_per_s": pairs / one_s,
    }
    for kind, name in ((False, "full"), (True, "screened")) if kinds else ():
        part = list(only(batches, kind))
        n = sum(len(p) for p in part)
        if n:
            seconds = replay(part, workers, rec.lexicons)[0]
            out[f"{w}_{name}_pairs_per_s"] = n / seconds
            print(f"isolated {workers} workers, {name} only: {n} pairs, {seconds:.1f} s")
    job = [b.decisions for b in batches]
    cores = max(1, workers)  # busy: the workers' CPU over what their span could hold
    return out | {
        "ratio_span_pct": 100 * out["injob_pairs_per_s"] / out[f"{w}_pairs_per_s"],
        "ratio_dedup_pct": 100 * out["injob_pairs_per_dedup_s"] / out[f"{w}_pairs_per_s"],
        "injob_workers_cpu_s": t.get("workers_cpu_s", 0.0),
        f"{w}_workers_cpu_s": pool_cpu,
        "isolated1_cpu_s": one_cpu,
        "injob_workers_busy_pct": 100 * t.get("workers_cpu_s", 0.0) / (cores * rec.span),
        f"{w}_workers_busy_pct": 100 * pool_cpu / (cores * pool_s),
        "driver_cpu_s": t.get("driver_cpu_s", 0.0),
        "node_cpu_s": t.get("node_cpu_s", 0.0),
        "same_decisions": int(pool == job and one == job),
    }


def result_fields(figures: dict[str, float]) -> str:
    """``name=value`` pairs: counts as integers, the rest to one decimal."""
    return " ".join(
        f"{k}={v}" if isinstance(v, int) else f"{k}={v:.1f}" for k, v in figures.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index-prefix", required=True, help="an indexed collection")
    parser.add_argument("--workers", type=int, default=2, help="the job's verification pool")
    parser.add_argument(
        "--no-kinds", action="store_true", help="skip the replays of each kind alone"
    )
    args = parser.parse_args()
    client = connect(ConnectionSettings.from_env(timeout=300))
    params = DedupParams(verify_workers=args.workers)
    summary, dedup_s, rec = record_job(client, IndexNames(args.index_prefix), params)
    figures = compare(summary, dedup_s, rec, args.workers, not args.no_kinds)
    print(f"RESULT prefix={args.index_prefix} {result_fields(figures)}")


if __name__ == "__main__":
    main()
