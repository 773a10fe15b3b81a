"""Offline: would a score-dependent cut of the translated lists keep their partners?

Issues 27 and 28. The translated queries (one per target language) return a fixed 45 hits
(``CandidateParams.translation_hits``) and give ~95 % of the candidate pairs. This runs every
book's candidate queries once on a ``bench_candidates`` index (``--keep-index``), keeps the
lists with their scores in ``--lists`` (JSON lines; reused when present), and scores cut rules
against the corpus' ground truth: for each rule, the true related pairs still found by any
list (the same-language kinds' whole lists plus the cut translated lists), those the full
lists find and the rule loses, the candidate pairs and the cut factor. A rule keeps a prefix
of each list, never fewer than ``max_translation_candidates`` (the ones verified outright).

    python benchmarks/bench_translated_cut.py --corpus /work/bench-quick/corpus-1000-4000-8000-s7

Rules: ``fixed K`` (the first K), ``top f`` (score ≥ f × the list's top score), ``mad c``
(score ≥ median + c × 1.4826 × MAD of the list's ranks 11…45), ``tail f`` (score ≥ f × that
median), ``gap`` (cut before the largest drop in score past the first five) and ``hub K``
(the list reordered by score / log(1 + lists the hit appears in), then the first K: a hub
correction, which needs every list first, so the job cannot do it as it stands) and ``len K``
(reordered by score / √(the hit's words), then the first K: a length norm the job could apply,
as a keyword field's idf score has none); ``both K``: the first K, and any pair both books'
lists hold.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bookdup.pairs import pair_key
from indexer.dedup_job import DedupParams
from indexer.dedup_stages import prepare, select_books
from readers.groundtruth import load_jsonl
from store.candidates import SAME_LANGUAGE_KINDS, CandidateParams, hits_with_scores
from store.connection import ConnectionSettings, connect
from store.msearch import DFS, msearch
from store.schema import IndexNames

Cut = Callable[[np.ndarray], int]  # a list's scores (best first) -> how many to keep
TAIL_FROM = 10  # the list's own tail: ranks 11 … 45


def dump_lists(corpus: Path, prefix: str, out: Path) -> None:
    """Every candidate list of every book: owner, kind and (book, score) hits, one a line."""
    client = connect(ConnectionSettings.from_env(timeout=300))
    names = IndexNames(f"{prefix}-{corpus.name}")
    run = prepare(client, names, DedupParams(candidates=CandidateParams()), "cut-bench", None)
    searcher = run.searcher
    with out.open("w") as sink:
        for batch in select_books(run):
            labels, bodies, types = [], [], []
            for f in batch.books:
                for kind, query in searcher.labelled_queries(f):
                    labels.append((f.book_id, kind))
                    bodies.append(query.json())
                    types.append(DFS if searcher.scored_by_idf(kind) else None)
            responses = msearch(client, names.books, bodies, types, None)
            for (owner, kind), response in zip(labels, responses, strict=True):
                hits = hits_with_scores(response)
                sink.write(json.dumps({"owner": owner, "kind": kind, "hits": hits}) + "\n")


Lists = list[tuple[str, list[str], np.ndarray]]


def load_lists(path: Path) -> tuple[set[tuple[str, str]], Lists]:
    """The same-language kinds' pairs, and each translated list (owner, books, scores)."""
    same: set[tuple[str, str]] = set()
    translated: Lists = []
    for line in path.open():
        row = json.loads(line)
        if row["kind"] in SAME_LANGUAGE_KINDS:
            same |= {pair_key(row["owner"], b) for b, _ in row["hits"]}
        else:
            books = [b for b, _ in row["hits"]]
            translated.append((row["owner"], books, np.array([s for _, s in row["hits"]])))
    return same, translated


def at_least(floor: int, rule: Cut) -> Cut:
    return lambda s: min(len(s), max(floor, rule(s))) if len(s) else 0


def tail(s: np.ndarray) -> np.ndarray:
    return s[TAIL_FROM:] if len(s) > TAIL_FROM + 5 else s[len(s) // 2 :]


def mad_rule(c: float) -> Cut:
    def keep(s: np.ndarray) -> int:
        t = tail(s)
        med = float(np.median(t))
        return int((s >= med + c * 1.4826 * float(np.median(np.abs(t - med)))).sum())

    return keep


def gap_rule(floor: int) -> Cut:
    def keep(s: np.ndarray) -> int:
        drops = s[floor - 1 : -1] - s[floor:]
        return floor + int(np.argmax(drops)) if drops.size else len(s)

    return keep


def first(k: int) -> Cut:
    return lambda s: min(k, len(s))


def above_top(f: float) -> Cut:
    return lambda s: int((s >= f * s[0]).sum())


def above_tail(f: float) -> Cut:
    return lambda s: int((s >= f * np.median(tail(s))).sum())


def rules(floor: int) -> dict[str, Cut]:
    out = {f"fixed {k}": first(k) for k in (10, 20, 30, 45)}
    out |= {f"top {f}": above_top(f) for f in (0.5, 0.6)}
    out |= {f"mad {c}": mad_rule(c) for c in (0.5, 1.0, 2.0)}
    out |= {f"tail {f}": above_tail(f) for f in (1.05, 1.1)}
    out["gap"] = gap_rule(floor)
    return {name: at_least(floor, rule) for name, rule in out.items()}


def reordered(lists: Lists, weight: Callable[[list[str]], np.ndarray]) -> Lists:
    """Each list reordered by score / ``weight`` of its hits."""
    out: Lists = []
    for owner, books, scores in lists:
        adjusted = scores / weight(books) if books else scores
        order = np.argsort(-adjusted, kind="stable")
        out.append((owner, [books[i] for i in order], adjusted[order]))
    return out


def found(same: set[tuple[str, str]], lists: Lists, cut: Cut) -> tuple[set, int]:
    """Every candidate pair with the translated lists cut, and the hits kept."""
    pairs = set(same)
    kept = 0
    for owner, books, scores in lists:
        k = cut(scores)
        kept += k
        pairs |= {pair_key(owner, b) for b in books[:k]}
    return pairs, kept


def found_both_ways(same: set[tuple[str, str]], lists: Lists, k: int) -> set[tuple[str, str]]:
    """Every candidate pair with each translated list cut to its first ``k`` hits, plus the
    pairs both books' lists hold (each book's query towards the other's language)."""
    held = Counter(pair_key(owner, b) for owner, books, _ in lists for b in books)
    pairs = set(same)
    for owner, books, _ in lists:
        pairs |= {
            pair_key(owner, b) for r, b in enumerate(books) if r < k or held[pair_key(owner, b)] > 1
        }
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--index-prefix", default="candbench", help="bench_candidates' prefix")
    parser.add_argument("--lists", type=Path, help="the lists' JSON lines (default: in /tmp)")
    args = parser.parse_args()
    lists_path = args.lists or Path(f"/tmp/translated-lists-{args.corpus.name}.jsonl")
    if not lists_path.exists():
        dump_lists(args.corpus, args.index_prefix, lists_path)
    truth = {pair_key(t["a"], t["b"]): t for t in load_jsonl(args.corpus / "ground_truth.jsonl")}
    translations = {p for p, t in truth.items() if t["languages"][0] != t["languages"][1]}
    same, lists = load_lists(lists_path)
    floor = CandidateParams().max_translation_candidates
    full, _ = found(same, lists, lambda s: len(s))
    n = len({owner for owner, _, _ in lists})
    print(f"{args.corpus.name}: {len(lists)} translated lists, {len(truth)} related pairs")
    print(
        f"  {'rule':<10} {'true':>6} {'lost':>5} {'transl':>7} {'pairs':>8} {'cut':>5} {'kept':>5}"
    )
    cases = [(name, lists, cut) for name, cut in rules(floor).items()]
    seen = Counter(b for _, books, _ in lists for b in books)
    hubs = reordered(lists, lambda books: np.log1p([seen[b] for b in books]))
    words = {b["id"]: b["n_words"] for b in load_jsonl(args.corpus / "books.jsonl")}
    longs = reordered(lists, lambda books: np.sqrt([words[b] for b in books]))
    for label, ordered in (("hub", hubs), ("len", longs)):
        cases += [(f"{label} {k}", ordered, first(k)) for k in (10, 15, 20)]
    for name, ordered, cut in cases:
        pairs, kept = found(same, ordered, cut)
        true = pairs & truth.keys()
        print(
            f"  {name:<10} {len(true):>6} {len((full - pairs) & truth.keys()):>5} "
            f"{len(pairs & translations) / len(translations):>7.4f} {len(pairs):>8} "
            f"{len(full) / len(pairs):>5.2f} {kept / max(len(lists), 1):>5.1f}"
        )
    for k in (10, 15, 20):
        pairs = found_both_ways(same, lists, k)
        print(
            f"  both {k:<5} {len(pairs & truth.keys()):>6} {len((full - pairs) & truth.keys()):>5} "
            f"{len(pairs & translations) / len(translations):>7.4f} {len(pairs):>8} "
            f"{len(full) / len(pairs):>5.2f}"
        )
    print(f"RESULT books={n} full_pairs={len(full)} full_true={len(full & truth.keys())}")


if __name__ == "__main__":
    main()
