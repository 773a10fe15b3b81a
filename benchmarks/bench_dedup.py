"""End-to-end job benchmark: generate N books, index, dedup, score against ground truth.

Prints per-stage figures (books/s indexed, candidate queries/s, pairs verified/s), candidate
recall and the fraction of all pairs verified, related-pair precision/recall, peak memory of
this process and index size per book; a scaling curve when several sizes are given:

    python benchmarks/bench_dedup.py --books 1000 3000 10000 --words-min 50000 --words-max 100000

With ``--isolated-verify`` the pairs each dedup verified are then verified again in isolation
and compared with the job's throughput (`bench_injob.compare`: in-job verification against the
isolated kernel, issue 28's 60 % target); the peak memory then counts the replay's too.

Needs a running node (ELASTICSEARCH_URL, default http://127.0.0.1:9200). Ends with one line
``RESULT …`` for the largest size.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_candidates import candidate_params
from bench_injob import compare, record_job, result_fields
from quick import add_quick, parse_args

import indexer.dedup_job
import store.candidates
from bookdup.compare import compare_features, screen_features
from bookdup.evaluate import relation_metrics
from bookdup.pairs import pair_key
from bookdup.relate import plan_pair
from generator.corpus import GeneratorConfig, generate_corpus
from indexer.dedup_job import DedupParams, run_dedup
from indexer.dedup_stages import prepare
from indexer.index_job import IndexOptions, run_index
from readers.groundtruth import load_jsonl
from store.connection import ConnectionSettings, connect
from store.features import FeatureCache
from store.iterate import iter_documents
from store.schema import IndexNames, drop_indices

_CANDIDATES = store.candidates.CandidateSearcher.screened_candidates
_THROUGH = indexer.dedup_job.pairs_through_translations
#: `bench_injob.compare`'s figures that the RESULT line carries (``--isolated-verify``).
INJOB_RESULT = (
    "injob_pairs_per_s",
    "isolated2_pairs_per_s",
    "isolated1_pairs_per_s",
    "ratio_span_pct",
    "ratio_dedup_pct",
    "same_decisions",
)


class CandidateRecorder:
    """Every candidate pair the job's searcher yields, and every pair it suggests through a
    found translation, kept to score candidate recall (both wrapped, not changed: the job runs
    as it does in production). Screened pairs count once their order passes the screen, as
    the job verifies them. Since stop 46 an edition may stand in for another's translated
    queries (``DedupParams.translations_by_edition``), whose translations then come through
    it: those pairs are the job's candidates too (``searched_recall`` leaves them out)."""

    def __init__(self) -> None:
        self.outright: set[tuple[str, str]] = set()
        self.screened: set[tuple[str, str]] = set()
        self.through: set[tuple[str, str]] = set()
        original, recorder = _CANDIDATES, self

        def suggesting(links):  # type: ignore[no-untyped-def]
            pairs = _THROUGH(links)
            recorder.through.update(pairs)
            return pairs

        indexer.dedup_job.pairs_through_translations = suggesting  # type: ignore[assignment]

        def recording(searcher, batch, *args):  # type: ignore[no-untyped-def]
            for pair, screened in original(searcher, batch, *args):
                (recorder.screened if screened else recorder.outright).add(pair)
                yield pair, screened

        store.candidates.CandidateSearcher.screened_candidates = recording  # type: ignore[method-assign]

    def wanted(self, truth: list[dict], same_language: bool) -> set[tuple[str, str]]:
        return {
            pair_key(t["a"], t["b"])
            for t in truth
            if (t["languages"][0] == t["languages"][1]) == same_language
        }

    def recall(self, truth: list[dict], same_language: bool, passed: set) -> float:
        """Share of the related pairs (same- or cross-language) verified as candidates:
        offered outright, screened and passing the screen (``passed``), or suggested through
        a found translation."""
        wanted = self.wanted(truth, same_language)
        return len(wanted & (self.outright | passed | self.through)) / max(len(wanted), 1)

    def searched_recall(self, truth: list[dict], same_language: bool, passed: set) -> float:
        """``recall`` of the searches alone (the figure before stop 46)."""
        wanted = self.wanted(truth, same_language)
        return len(wanted & (self.outright | passed)) / max(len(wanted), 1)

    def missed(self, truth: list[dict], passed: set) -> list[dict]:
        """The related pairs no candidate route reached, each marked whether a search offered
        it (screened out) or none did."""
        found = self.outright | passed | self.through
        offered = self.outright | self.screened
        return [
            {**t, "offered": pair_key(t["a"], t["b"]) in offered}
            for t in truth
            if pair_key(t["a"], t["b"]) not in found
        ]

    def offered(self, truth: list[dict], same_language: bool) -> float:
        """The same share before the screen: every pair the searches offered."""
        wanted = self.wanted(truth, same_language)
        return len(wanted & (self.outright | self.screened)) / max(len(wanted), 1)

    def passing(self, client, names: IndexNames, truth: list[dict]) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
        """The related pairs offered only screened whose order passes the screen."""
        pending = (self.wanted(truth, True) | self.wanted(truth, False)) & (
            self.screened - self.outright
        )
        if not pending:
            return set()
        run = prepare(client, names, DedupParams(), "bench-screen", None)
        feats = run.cache.get_many({i for p in pending for i in p})
        out = set()
        for a, b in pending:
            plan = plan_pair(feats[a], feats[b], run.lexicons)
            plan = plan.screened() if plan is not None else None
            if plan is None or plan.dictionary is None or plan.screen_z is None:
                out.add((a, b))  # nothing to screen: verified in full
            else:
                z = plan.screen_z
                if screen_features(feats[a], feats[b], dictionary=plan.dictionary, at_least=z) >= z:
                    out.add((a, b))
        return out


def store_bytes(client, names: IndexNames) -> int:  # type: ignore[no-untyped-def]
    """The books index's primary store size on disk."""
    stats = client.indices.stats(index=names.books, metric="store").body
    return int(stats["_all"]["primaries"]["store"]["size_in_bytes"])


def compared_translations(client, names: IndexNames, truth: list[dict]) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """The truth translations that verification alone calls TRANSLATION (`compare_features` on
    the stored features through the job's lexicon: ``bookdup compare``'s decision without the
    collection): issue 27's end-to-end TRANSLATION target counts those."""
    pairs = {pair_key(t["a"], t["b"]) for t in truth if t["relation"] == "TRANSLATION"}
    if not pairs:
        return set()
    run = prepare(client, names, DedupParams(), "bench-compare", None)
    none = np.zeros(0, np.uint32)  # no collection masks: the books as compare reads them
    alone = FeatureCache(
        client, names.books, dataclasses.replace(run.stop, common=none, frequent=none)
    )
    feats = alone.get_many({i for p in pairs for i in p})
    out = set()
    for a, b in pairs:
        plan = plan_pair(feats[a], feats[b], run.lexicons)
        if plan is not None and plan.dictionary is not None:
            result = compare_features(feats[a], feats[b], dictionary=plan.dictionary)
            if result.relation == "TRANSLATION":
                out.add((a, b))
    return out


def run_size(
    n_books: int,
    words: tuple[int, int],
    workdir: Path,
    seed: int,
    prefix: str = "bench",
    isolated: bool = False,
    params: DedupParams | None = None,
    misses: Path | None = None,
) -> dict[str, float]:
    out = workdir / f"corpus-{n_books}-{words[0]}-{words[1]}-s{seed}"
    t0 = time.monotonic()
    if not (out / "ground_truth.jsonl").exists():  # a kept --workdir reuses its corpora
        generate_corpus(
            GeneratorConfig(
                seed=seed, n_books=n_books, words_min=words[0], words_max=words[1], noise=(0.0, 0.1)
            ),
            out,
        )
    gen_s = time.monotonic() - t0
    client = connect(ConnectionSettings.from_env(timeout=300))
    names = IndexNames(f"{prefix}-{n_books}")
    drop_indices(client, names)
    t0 = time.monotonic()
    pivots = params is not None and params.candidates.pivot_pairs
    index = run_index(client, names, [out / "books"], IndexOptions(pivot_pairs=pivots))
    index_s = time.monotonic() - t0
    indexed_bytes = store_bytes(client, names)  # as the index job leaves it: merged
    recorder = CandidateRecorder()
    t0 = time.monotonic()
    params = params or DedupParams()
    if isolated:
        dedup, _, verifier = record_job(client, names, params)
    else:
        dedup = run_dedup(client, names, params=params)
    dedup_s = time.monotonic() - t0
    injob = compare(dedup, dedup_s, verifier, params.verify_workers, False) if isolated else {}
    if dedup.missing_lexicons:  # the translations' figures would be zeros, not measurements
        raise SystemExit(
            f"no FreeDict lexicon between {', '.join(dedup.missing_lexicons)}: "
            "run `make dictionaries` first"
        )
    truth = load_jsonl(out / "ground_truth.jsonl")
    passed = recorder.passing(client, names, truth)
    if misses is not None:
        misses.write_text("".join(json.dumps(m) + "\n" for m in recorder.missed(truth, passed)))
    all_pairs = n_books * (n_books - 1) / 2
    predicted = [h["_source"] for h in iter_documents(client, names.relations)]
    metrics = relation_metrics(truth, predicted)
    related = metrics["RELATED"]
    # issue 27's end-to-end target: translations found *as* TRANSLATION
    translated = metrics.get("TRANSLATION", {"precision": 0.0, "recall": 0.0})
    compared = compared_translations(client, names, truth)
    as_translation = {pair_key(r["a"], r["b"]) for r in predicted if r["relation"] == "TRANSLATION"}
    found = {(r["a"], r["b"]) for r in predicted}
    truth_pairs = {tuple(sorted((t["a"], t["b"]))) for t in truth}
    row = {
        "books": n_books,
        "generate_s": gen_s,
        "index_s": index_s,
        "books_per_s": index.indexed / index_s,
        "dedup_s": dedup_s,
        "total_s": index_s + dedup_s,
        "queries_per_s": dedup.query_books / max(dedup.timings.get("search_s", 1e-9), 1e-9),
        "pairs_verified_per_s": dedup.timings.get("pairs_verified_per_s", 0.0),
        "candidate_pairs": dedup.candidate_pairs,
        "candidate_pairs_pct": 100 * dedup.candidate_pairs / all_pairs,
        "screened_pairs": dedup.screened_pairs,
        "screened_out": dedup.screened_out,
        # pairs verified in full (those the screen dropped cost ~2 ms, not ~7)
        "fraction_verified": (dedup.verified_pairs - dedup.screened_out) / all_pairs,
        "relation_recall_of_truth": len(found & truth_pairs) / max(len(truth_pairs), 1),
        "candidate_recall_same_language": recorder.recall(truth, True, passed),
        "candidate_recall_translations": recorder.recall(truth, False, passed),
        "searched_recall_translations": recorder.searched_recall(truth, False, passed),
        "translations_by_edition": dedup.translations_by_edition,
        "offered_recall_translations": recorder.offered(truth, same_language=False),
        "precision": related["precision"],
        "recall": related["recall"],
        "translation_precision": translated["precision"],
        "translation_recall": translated["recall"],
        # of the truth translations compare alone calls TRANSLATION (issue 27's target)
        "translation_recall_of_compared": len(compared & as_translation) / max(len(compared), 1),
        "compared_translations": len(compared),
        "index_kb_per_book": indexed_bytes / 1024 / n_books,
        # right after the dedup: the segments its cluster stage replaced stay on disk until
        # the node's searchers let go of them (seconds)
        "index_kb_per_book_after_dedup": store_bytes(client, names) / 1024 / n_books,
        "failures": len(index.failures),
        **{f"dedup_{k}": float(v) for k, v in dedup.timings.items()},
        **{k: v for k, v in injob.items() if k != "dedup_s"},
    }
    drop_indices(client, names)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--books", type=int, nargs="+", default=[1000])
    parser.add_argument("--words-min", type=int, default=50_000)
    parser.add_argument("--words-max", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--workdir", type=Path, help="keep generated corpora here and reuse them (default: temp)"
    )
    parser.add_argument("--index-prefix", default="bench", help="indices: PREFIX-<books>")
    parser.add_argument(
        "--isolated-verify",
        action="store_true",
        help="replay the job's pairs in isolation: in-job verification against the kernel's",
    )
    parser.add_argument(
        "--every-book-across",
        action="store_true",
        help="every book asks its translated queries (translations_by_edition off: before stop 46)",
    )
    parser.add_argument(
        "--param", action="append", default=[], help="a CandidateParams field NAME=VALUE"
    )
    parser.add_argument(
        "--pivot-pairs",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="index and query the pivot pair keys (IndexOptions, CandidateParams.pivot_pairs; "
        "default: on, as the tool's)",
    )
    parser.add_argument(
        "--misses",
        type=Path,
        help="write the related pairs no candidate route reached (JSON lines; the largest size)",
    )
    add_quick(parser, words_min=4_000, words_max=8_000)
    args = parse_args(parser)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.books:
            workdir = args.workdir or Path(tmp)
            row = run_size(
                n,
                (args.words_min, args.words_max),
                workdir,
                args.seed,
                args.index_prefix,
                args.isolated_verify,
                DedupParams(
                    candidates=candidate_params([f"pivot_pairs={args.pivot_pairs}", *args.param]),
                    translations_by_edition=not args.every_book_across,
                ),
                args.misses if n == args.books[-1] else None,
            )
            rows.append(row)
            print(
                " ".join(
                    f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                ),
                flush=True,
            )
    base = rows[0]
    for row in rows[1:]:
        growth = row["total_s"] / base["total_s"]
        print(
            f"scaling {base['books']}→{row['books']} books: x{row['books'] / base['books']:.1f}"
            f" books, x{growth:.2f} time"
        )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    last = rows[-1]
    print(
        f"RESULT books={last['books']} total_s={last['total_s']:.1f} "
        f"books_per_s={last['books_per_s']:.2f} queries_per_s={last['queries_per_s']:.1f} "
        f"pairs_verified_per_s={last['pairs_verified_per_s']:.1f} "
        f"fraction_verified={last['fraction_verified']:.5f} "
        f"candidate_pairs_pct={last['candidate_pairs_pct']:.3f} "
        f"candidate_recall_same_language={last['candidate_recall_same_language']:.4f} "
        f"candidate_recall_translations={last['candidate_recall_translations']:.4f} "
        f"searched_recall_translations={last['searched_recall_translations']:.4f} "
        f"translations_by_edition={last['translations_by_edition']} "
        f"screened_pairs={last['screened_pairs']} screened_out={last['screened_out']} "
        f"precision={last['precision']:.3f} recall={last['recall']:.3f} "
        f"translation_precision={last['translation_precision']:.3f} "
        f"translation_recall={last['translation_recall']:.3f} "
        f"translation_recall_of_compared={last['translation_recall_of_compared']:.3f} "
        f"compared_translations={last['compared_translations']} "
        f"index_kb_per_book={last['index_kb_per_book']:.1f} peak_mb={peak_mb:.0f}"
        + "".join(f" {result_fields({k: last[k]})}" for k in INJOB_RESULT if k in last)
    )


if __name__ == "__main__":
    main()
