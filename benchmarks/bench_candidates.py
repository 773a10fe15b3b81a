"""Candidate recall of the dedup job's candidate stage alone, against a generated ground truth.

Issue 27, item 1. Generates (or reuses) a corpus, indexes it, then runs the job's own stages
``prepare`` → ``select_books`` → ``CandidateSearcher.ranked`` over every book — no
verification — and prints the share of true related pairs among the candidates: by class,
translations by language pair and by noise, and the candidate pairs per book. For each true
translation it also reports the best rank of the partner in the translated lists of both sides,
so a miss is seen to be the cap (ranked too low) or the query (not found at all); ``--param
max_translation_candidates=200`` widens the cap to see recall at 10/20/40/80/… at once.

    python benchmarks/bench_candidates.py --books 1000 --words-min 50000 --words-max 100000
    python benchmarks/bench_candidates.py --quick          # 1,000 books of 4K–8K words

Needs a running node (ELASTICSEARCH_URL, default http://127.0.0.1:9200). ``--keep-index``
leaves the index in place and reuses it on the next run with the same corpus (candidate
changes that need no re-indexing are then measured in about a minute). Ends with one
``RESULT`` line.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from quick import add_quick, parse_args

from bookdup.pairs import pair_key
from generator.corpus import GeneratorConfig, generate_corpus
from indexer.dedup_job import DedupParams
from indexer.dedup_stages import prepare, select_books
from indexer.index_job import IndexOptions, run_index
from readers.groundtruth import load_jsonl
from store.candidates import CandidateParams
from store.connection import ConnectionSettings, connect
from store.schema import IndexNames, drop_indices

RANKS = (10, 20, 40, 80, 200)


def corpus_dir(args: argparse.Namespace) -> Path:
    out = args.workdir / (
        f"corpus-{args.books}-{args.words_min}-{args.words_max}-s{args.seed}-n{args.noise}"
    )
    if not (out / "ground_truth.jsonl").exists():
        low, high = (float(x) for x in args.noise.split("-"))
        config = GeneratorConfig(
            seed=args.seed,
            n_books=args.books,
            words_min=args.words_min,
            words_max=args.words_max,
            noise=(low, high),
        )
        generate_corpus(config, out)
    return out


def candidate_params(overrides: list[str]) -> CandidateParams:
    """``CandidateParams`` with ``name=value`` overrides (typed like the field's default)."""
    params = CandidateParams()
    changes: dict[str, Any] = {}
    for item in overrides:
        name, _, value = item.partition("=")
        default = getattr(params, name)
        changes[name] = (
            (value.lower() in ("1", "true"))
            if isinstance(default, bool)
            else (type(default)(value))
        )
    return dataclasses.replace(params, **changes)


def noise_bucket(t: dict[str, Any]) -> str:
    worst = max(t.get("noise_a") or 0.0, t.get("noise_b") or 0.0)
    return "noise<2%" if worst < 0.02 else "noise<5%" if worst < 0.05 else "noise<=10%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--books", type=int, default=1000)
    parser.add_argument("--words-min", type=int, default=50_000)
    parser.add_argument("--words-max", type=int, default=100_000)
    parser.add_argument("--noise", default="0.0-0.1", help="OCR noise range LO-HI")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bookdup-bench-candidates"))
    parser.add_argument("--keep-index", action="store_true", help="keep and reuse the index")
    parser.add_argument(
        "--corpus", type=Path, help="an existing generated corpus (instead of --workdir's)"
    )
    parser.add_argument(
        "--index-prefix", default="candbench", help="the indices' name prefix (one per helper)"
    )
    parser.add_argument(
        "--param", action="append", default=[], help="a CandidateParams field NAME=VALUE"
    )
    parser.add_argument(
        "--pivot-pairs",
        action="store_true",
        help="index and query the pivot pair keys too (issue 27: IndexOptions and "
        "CandidateParams.pivot_pairs)",
    )
    add_quick(parser, words_min=4_000, words_max=8_000)
    args = parse_args(parser)

    corpus = args.corpus or corpus_dir(args)
    truth = load_jsonl(corpus / "ground_truth.jsonl")
    client = connect(ConnectionSettings.from_env(timeout=300))
    pivot = "-pivot" if args.pivot_pairs else ""
    names = IndexNames(f"{args.index_prefix}-{args.books}-{args.words_min}-s{args.seed}{pivot}")
    count = (
        client.count(index=names.books)["count"] if client.indices.exists(index=names.books) else 0
    )
    index_s = 0.0
    if not (args.keep_index and count == args.books):
        drop_indices(client, names)
        started = time.monotonic()
        options = IndexOptions(pivot_pairs=args.pivot_pairs)
        summary = run_index(client, names, [corpus / "books"], options)
        index_s = time.monotonic() - started
        assert summary.indexed == args.books, summary

    overrides = [*args.param, *(["pivot_pairs=true"] if args.pivot_pairs else [])]
    params = DedupParams(candidates=candidate_params(overrides))
    started = time.monotonic()
    run = prepare(client, names, params, "candidate-bench", None)
    prepare_s = time.monotonic() - started
    found: set[str] = set()
    # best rank (1-based) of each book in each owner's translated list: (owner, other) -> rank
    ranks: dict[tuple[str, str], int] = {}
    queries: Counter[str] = Counter()
    started = time.monotonic()
    for batch in select_books(run):
        for ranked in run.searcher.ranked(batch.books):
            queries[ranked.kind] += 1
            found |= {pair_key(ranked.owner, other) for other, _ in ranked.hits}
            if ranked.kind not in ("bands", "winnows", "uniq"):
                for rank, (other, _) in enumerate(ranked.hits, 1):
                    ranks.setdefault((ranked.owner, other), rank)
    search_s = time.monotonic() - started

    by: dict[str, list[bool]] = defaultdict(list)
    translation_ranks: list[int | None] = []
    for t in truth:
        hit = pair_key(t["a"], t["b"]) in found
        la, lb = t["languages"]
        if la == lb:
            by["same language"].append(hit)
            by[f"class {t['relation']}"].append(hit)
        else:
            by["translations"].append(hit)
            by[f"translations {'-'.join(sorted((la, lb)))}"].append(hit)
            by[f"translations {noise_bucket(t)}"].append(hit)
            sides = [ranks.get((t["a"], t["b"])), ranks.get((t["b"], t["a"]))]
            best = min((r for r in sides if r is not None), default=None)
            translation_ranks.append(best)
    n = args.books
    print(
        f"corpus {corpus} ({n} books), index {index_s:.0f} s, prepare {prepare_s:.1f} s, "
        f"searches {search_s:.1f} s ({sum(queries.values())} queries: {dict(queries)})"
    )
    for key in sorted(by):
        hits = by[key]
        print(f"  {key:<40} {sum(hits):>5} / {len(hits):<5} {sum(hits) / len(hits):.4f}")
    if translation_ranks:
        total = len(translation_ranks)
        within = " ".join(
            f"@{k}={sum(1 for r in translation_ranks if r is not None and r <= k) / total:.3f}"
            for k in RANKS
        )
        print(f"  translated lists: partner's best rank {within}")
    client.indices.refresh(index=names.books)
    stats = client.indices.stats(index=names.books, metric="store").body["_all"]["primaries"]
    bytes_per_book = stats["store"]["size_in_bytes"] / n
    pairs_per_book = 2 * len(found) / n
    fraction = len(found) / (n * (n - 1) / 2)
    print(
        f"RESULT books={n} candidate_recall_same_language={rate(by['same language']):.4f} "
        f"candidate_recall_translations={rate(by['translations']):.4f} "
        f"candidate_pairs={len(found)} candidate_pairs_per_book={pairs_per_book:.1f} "
        f"fraction_of_all_pairs={fraction:.5f} search_s={search_s:.1f} "
        f"index_bytes_per_book={bytes_per_book:.0f}"
    )
    if not args.keep_index:
        drop_indices(client, names)


def rate(hits: list[bool]) -> float:
    return sum(hits) / max(len(hits), 1)


if __name__ == "__main__":
    main()
