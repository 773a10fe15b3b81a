"""Candidate recall of the dedup job's candidate stage alone, and what each query kind adds.

Issue 27. Generates (or reuses, ``--corpus``) a corpus, indexes it, then runs the job's own
stages ``prepare`` → ``select_books`` and every book's ``CandidateSearcher.labelled_queries``
— no verification — and prints the share of true related pairs among the candidates: by
class, translations by language pair and by noise, and the candidate pairs per book. For each
true translation it also reports the best rank of the partner in the translated lists of both
sides, so a miss is seen to be the cap (ranked too low) or the query (not found at all);
``--param max_translation_candidates=200`` widens the cap to see recall at 10/20/40/80/… at once.

Per query kind ("bands", "winnows", "uniq", and "translated": the one query per target
language) it prints the true pairs the kind found, those only it found (by class, language
pair and noise: a kind that finds none alone adds no recall), its candidate pairs and its
search time. Each kind of a batch goes in its own ``_msearch`` (the job sends them all in one),
so its time is its own: the node's ``took`` summed over its searches, and the wall time.

    python benchmarks/bench_candidates.py --books 1000 --words-min 50000 --words-max 100000
    python benchmarks/bench_candidates.py --quick          # 1,000 books of 4K–8K words
    python benchmarks/bench_candidates.py --corpus /work/bench-quick/corpus-1000-4000-8000-s7

Needs a running node (ELASTICSEARCH_URL, default http://127.0.0.1:9200). ``--keep-index``
leaves the index in place and reuses it on the next run with the same corpus (candidate
changes that need no re-indexing are then measured in about a minute). Ends with one
``RESULT`` line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from quick import add_quick, parse_args

from bookdup.pairs import pair_key
from generator.corpus import GeneratorConfig, generate_corpus
from indexer.dedup_job import DedupParams
from indexer.dedup_stages import DedupRun, QueryBatch, prepare, select_books
from indexer.index_job import IndexOptions, run_index
from readers.groundtruth import load_jsonl
from store.candidates import SAME_LANGUAGE_KINDS, SAME_UNIQ, CandidateParams, CandidateQuery
from store.connection import ConnectionSettings, connect
from store.msearch import DFS, msearch
from store.schema import IndexNames, drop_indices

RANKS = (1, 5, 10, 20, 40, 80, 200)
KINDS = ("bands", "winnows", "uniq", SAME_UNIQ, "translated")
PIVOT = "pivot"  # the pivot pair keys' searches (``--pivot-pairs``), one list a target language


def corpus_dir(args: argparse.Namespace) -> Path:
    if args.corpus is not None:
        return Path(args.corpus)
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


def truth_keys(t: dict[str, Any]) -> list[str]:
    """The rows a true pair counts in: its class, or its language pair and noise bucket."""
    la, lb = t["languages"]
    if la == lb:
        return ["same language", f"class {t['relation']}"]
    pair = "-".join(sorted((la, lb)))
    return ["translations", f"translations {pair}", f"translations {noise_bucket(t)}"]


@dataclasses.dataclass
class KindTally:
    """One query kind's searches over the run: the pairs (a < b) its hits give, and its cost."""

    pairs: set[str] = dataclasses.field(default_factory=set)
    searches: int = 0
    took_ms: int = 0  # the node's took, summed over the kind's searches
    wall_s: float = 0.0


def search_batch(
    run: DedupRun,
    batch: QueryBatch,
    tallies: dict[str, KindTally],
    ranks: dict[str, dict[tuple[str, str], int]],
) -> None:
    """Each kind of ``batch``'s queries in its own ``_msearch`` (the job's queries and search
    types); ``ranks[kind]`` gets each book's best rank in each owner's translated (or pivot)
    lists."""
    searcher = run.searcher
    grouped: dict[str, list[tuple[str, CandidateQuery]]] = defaultdict(list)  # kind -> (owner, q)
    scored_by_idf: dict[str, bool] = {PIVOT: True}
    for f in batch.books:
        for label, query in searcher.labelled_queries(f):
            kind = label if label in SAME_LANGUAGE_KINDS else "translated"
            scored_by_idf[kind] = searcher.scored_by_idf(label)
            grouped[kind].append((f.book_id, query))
        grouped[PIVOT] += [(f.book_id, query) for query in searcher.pivot_queries(f)]
    for kind, queries in grouped.items():
        if not queries:
            continue
        types = [DFS if scored_by_idf[kind] else None] * len(queries)
        started = time.monotonic()
        bodies = [query.json() for _, query in queries]
        responses = msearch(run.client, run.names.books, bodies, types, searcher.max_concurrent)
        tally = tallies[kind]
        tally.wall_s += time.monotonic() - started
        tally.searches += len(queries)
        tally.took_ms += sum(response["took"] for response in responses)
        answered = list(zip(queries, responses, strict=True))
        lists = (
            [
                (r.owner, r.hits)
                for r in searcher.pivot_lists(batch.books, [(o, r) for (o, _), r in answered])
            ]
            if kind == PIVOT
            else [(owner, query.hits(response)) for (owner, query), response in answered]
        )
        for owner, hits in lists:
            tally.pairs |= {pair_key(owner, other) for other, _ in hits}
            if kind in ("translated", PIVOT):
                for rank, (other, _) in enumerate(hits, 1):
                    ranks[kind].setdefault((owner, other), rank)


def print_kinds(tallies: dict[str, KindTally], truth: dict[str, dict[str, Any]]) -> list[str]:
    """A row per kind: true pairs found, those only it found (and where), candidate pairs and
    search time; returns the RESULT line's fields for the kinds."""
    heads = ("searches", "true", "only", "pairs", "took s", "wall s")
    print(f"  {'kind':<11} " + " ".join(f"{h:>8}" for h in heads))
    fields = []
    for kind, tally in tallies.items():
        others = set().union(*(t.pairs for k, t in tallies.items() if k != kind))
        true = tally.pairs & truth.keys()
        only = true - others
        took_s = tally.took_ms / 1000
        print(
            f"  {kind:<11} {tally.searches:>8} {len(true):>8} {len(only):>8} "
            f"{len(tally.pairs):>8} {took_s:>8.1f} {tally.wall_s:>8.1f}"
        )
        where = Counter(key for pair in only for key in truth_keys(truth[pair])[1:])
        if where:
            print("      only: " + ", ".join(f"{k} {n}" for k, n in sorted(where.items())))
        fields.append(
            f"{kind}_true={len(true)} {kind}_only={len(only)} {kind}_pairs={len(tally.pairs)} "
            f"{kind}_took_s={took_s:.1f} {kind}_wall_s={tally.wall_s:.1f}"
        )
    return fields


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--books", type=int, default=1000)
    parser.add_argument("--words-min", type=int, default=50_000)
    parser.add_argument("--words-max", type=int, default=100_000)
    parser.add_argument("--noise", default="0.0-0.1", help="OCR noise range LO-HI")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bookdup-bench-candidates"))
    parser.add_argument(
        "--corpus", type=Path, help="a generated corpus directory to use (overrides the above)"
    )
    parser.add_argument("--keep-index", action="store_true", help="keep and reuse the index")
    parser.add_argument(
        "--index-prefix", default="candbench", help="the indices' name prefix (one per helper)"
    )
    parser.add_argument(
        "--param", action="append", default=[], help="a CandidateParams field NAME=VALUE"
    )
    parser.add_argument(
        "--pivot-pairs",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="index and query the pivot pair keys (issue 27: IndexOptions and "
        "CandidateParams.pivot_pairs; default: on, as the tool's); their lists are the kind "
        "'pivot'",
    )
    add_quick(parser, words_min=4_000, words_max=8_000)
    args = parse_args(parser)

    corpus = corpus_dir(args)
    truth = {pair_key(t["a"], t["b"]): t for t in load_jsonl(corpus / "ground_truth.jsonl")}
    n = json.loads((corpus / "corpus.json").read_text())["config"]["n_books"]
    client = connect(ConnectionSettings.from_env(timeout=300))
    pivot = "-pivot" if args.pivot_pairs else ""
    names = IndexNames(f"{args.index_prefix}-{corpus.name}{pivot}")
    count = (
        client.count(index=names.books)["count"] if client.indices.exists(index=names.books) else 0
    )
    index_s = 0.0
    if not (args.keep_index and count == n):
        drop_indices(client, names)
        started = time.monotonic()
        options = IndexOptions(pivot_pairs=args.pivot_pairs)
        summary = run_index(client, names, [corpus / "books"], options)
        index_s = time.monotonic() - started
        assert summary.indexed == n, summary

    overrides = [f"pivot_pairs={args.pivot_pairs}", *args.param]
    params = DedupParams(candidates=candidate_params(overrides))
    started = time.monotonic()
    run = prepare(client, names, params, "candidate-bench", None)
    prepare_s = time.monotonic() - started
    tallies = {kind: KindTally() for kind in (*KINDS, *([PIVOT] if args.pivot_pairs else []))}
    # kind -> best rank (1-based) of each book in each owner's lists of that kind
    ranks: dict[str, dict[tuple[str, str], int]] = {"translated": {}, PIVOT: {}}
    for batch in select_books(run):
        search_batch(run, batch, tallies, ranks)
    search_s = sum(t.wall_s for t in tallies.values())
    found: set[str] = set().union(*(t.pairs for t in tallies.values()))

    by: dict[str, list[bool]] = defaultdict(list)
    for key, t in truth.items():
        for row in truth_keys(t):
            by[row].append(key in found)
    searches = sum(t.searches for t in tallies.values())
    print(
        f"corpus {corpus} ({n} books), index {index_s:.0f} s, prepare {prepare_s:.1f} s, "
        f"searches {search_s:.1f} s ({searches} queries)"
    )
    for key in sorted(by):
        hits = by[key]
        print(f"  {key:<40} {sum(hits):>5} / {len(hits):<5} {sum(hits) / len(hits):.4f}")
    for kind, kind_ranks in ranks.items():
        if kind in tallies:
            print(f"  {kind} lists: partner's best rank {rank_shares(truth, kind_ranks)}")
    kind_fields = print_kinds(tallies, truth)
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
        f"index_bytes_per_book={bytes_per_book:.0f} " + " ".join(kind_fields)
    )
    if not args.keep_index:
        drop_indices(client, names)


def rank_shares(truth: dict[str, dict[str, Any]], ranks: dict[tuple[str, str], int]) -> str:
    """The share of true translations whose partner is within each of ``RANKS`` of a list
    (the better of the two sides' lists)."""
    best: list[int | None] = []
    for t in truth.values():
        if t["languages"][0] != t["languages"][1]:
            sides = [ranks.get((t["a"], t["b"])), ranks.get((t["b"], t["a"]))]
            best.append(min((r for r in sides if r is not None), default=None))
    total = max(len(best), 1)
    return " ".join(
        f"@{k}={sum(1 for r in best if r is not None and r <= k) / total:.3f}" for k in RANKS
    )


def rate(hits: list[bool]) -> float:
    return sum(hits) / max(len(hits), 1)


if __name__ == "__main__":
    main()
