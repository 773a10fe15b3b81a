"""Candidate recall of the real translations, on their own: 80 Gutenberg books, then 3,000.

Issue 12, item 4: every true translation of ../shared/data/gutenberg (the README's pair table,
types ``translation`` and ``translation-partial``) must be among the candidates of one side,
both with the 80 books alone and when the same books sit among generated distractors.

1. indexes the 80 ``.txt`` books (PG header/footer left in) into a fresh index prefix;
2. runs the dedup job's own candidate stage (``indexer.dedup_stages.prepare`` /
   ``select_books`` / ``find_candidates``) over every book: the candidate pairs and their
   number (the cost), and whether each true pair is among them;
3. for the books of the true translations, the same queries again through
   ``CandidateSearcher.ranked``: the rank of the true translation in the translated list of
   each side, and that list's size;
4. with ``--distractors N``: generates N small books (``bookdup generate``, en/de/fr/es/it,
   editions and translations among themselves, 3K–10K words), indexes them into the same
   index and measures again; also the candidate recall of the generated corpus's own related
   pairs (same-language and translated), so that a change to candidate retrieval is seen to
   keep them.

Needs a node: ``--es-url`` (default http://127.0.0.1:9640); ``--node-data-dir DIR`` starts (or
reuses) a private one on the URL's port with that data folder, ``--stop-node`` stops it at the
end. Ends with one ``RESULT`` line. Reproduce:

    python benchmarks/bench_translation_candidates.py --node-data-dir /work/tmp-cand/es \\
        --distractors 2920 --workers 1
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_gutenberg import GUTENBERG, TruthPair, parse_truth  # noqa: E402

from bookdup.pairs import pair_key  # noqa: E402

TRANSLATION_TYPES = ("translation", "translation-partial")


@dataclass(frozen=True)
class Side:
    """Where the other book of a true pair stands in one side's candidate lists."""

    rank: int | None  # 1-based rank in the translated list towards the other's language
    size: int  # that list's length (0: no such query, e.g. no lexicon or too few terms)
    score: float | None  # shared sampled keys (translated lists: their summed weights)
    kth: float | None  # the score of the list's last hit (what the cap cut at)
    other_lists: tuple[str, ...]  # other queries of this side that hold the pair


@dataclass
class Measure:
    """One measurement: the whole candidate stage, and the true pairs' places in it."""

    books: int
    pairs: set[tuple[str, str]]
    queries: int
    seconds: float
    sides: dict[tuple[str, str], tuple[Side, Side]]
    languages: dict[str, str]


def _place(lists: Sequence[Any], other: str, other_lang: str) -> Side:
    rank = size = 0
    score = kth = None
    elsewhere = []
    for found in lists:
        ids = [i for i, _ in found.hits]
        if found.kind == other_lang and found.kind not in ("bands", "uniq"):
            size = len(ids)
            kth = found.hits[-1][1] if found.hits else None
            if other in ids:
                rank = ids.index(other) + 1
                score = found.hits[rank - 1][1]
        elif other in ids:
            elsewhere.append(f"{found.kind}#{ids.index(other) + 1}/{len(ids)}")
    return Side(rank or None, size, score, kth, tuple(elsewhere))


def measure(client: Any, names: Any, pairs: Sequence[TruthPair]) -> Measure:
    """The dedup job's candidate stage over every book, and the true pairs' ranks."""
    from indexer.dedup_stages import DedupParams, find_candidates, prepare, select_books

    client.indices.refresh(index=names.books)
    started = time.monotonic()
    run = prepare(client, names, DedupParams(), "candbench", None)
    wanted = {p.a for p in pairs} | {p.b for p in pairs}
    found: set[tuple[str, str]] = set()
    lists: dict[str, list[Any]] = defaultdict(list)
    languages: dict[str, str] = {}
    queries = books = 0
    for batch in select_books(run):
        books += len(batch.ids)
        found.update(find_candidates(run, batch).pairs)
        queries += sum(len(run.searcher.labelled_queries(f)) for f in batch.books)
        languages.update({f.book_id: f.language for f in batch.books})
        mine = [f for f in batch.books if f.book_id in wanted]
        for ranked in run.searcher.ranked(mine):
            lists[ranked.owner].append(ranked)
    seconds = time.monotonic() - started
    sides = {}
    for p in pairs:
        la, lb = languages.get(p.a, p.lang_a), languages.get(p.b, p.lang_b)
        sides[pair_key(p.a, p.b)] = (_place(lists[p.a], p.b, lb), _place(lists[p.b], p.a, la))
    return Measure(books, found, queries, seconds, sides, languages)


def recall(keys: Iterable[tuple[str, str]], found: set[tuple[str, str]]) -> tuple[int, int]:
    keys = [pair_key(*k) for k in keys]
    return sum(k in found for k in keys), len(keys)


def _fmt_side(s: Side) -> str:
    if s.size == 0:
        where = "no list"
    elif s.rank is None:
        where = f"—/{s.size} (last {s.kth:g})"
    else:
        where = f"{s.rank}/{s.size} ({s.score:g})"
    return where + (" +" + ",".join(s.other_lists) if s.other_lists else "")


def report(
    label: str, m: Measure, translations: Sequence[TruthPair], same: Sequence[TruthPair]
) -> dict[str, float]:
    """Print the per-pair table and the totals; return the headline figures."""
    tk = [pair_key(t.a, t.b) for t in translations]
    hit_t, n_t = recall(tk, m.pairs)
    hit_s, n_s = recall([(t.a, t.b) for t in same], m.pairs)
    all_pairs = m.books * (m.books - 1) // 2
    print(f"\n== {label}: {m.books} books, candidate stage {m.seconds:.1f} s, {m.queries} queries")
    print(
        f"candidate pairs {len(m.pairs)} ({len(m.pairs) / max(1, all_pairs):.4f} of all, "
        f"{len(m.pairs) / max(1, m.books):.1f} per book)"
    )
    print(f"true translations among candidates: {hit_t}/{n_t}")
    print(f"same-language related Gutenberg pairs among candidates: {hit_s}/{n_s}")
    print(f"{'pair':<62} {'type':<8} {'langs':<6} side A → B              side B → A")
    for t, k in zip(translations, tk, strict=True):
        a, b = m.sides[k]
        mark = " " if k in m.pairs else "!"
        kind = "partial" if t.type == "translation-partial" else "full"
        langs = f"{m.languages.get(t.a, t.lang_a)}-{m.languages.get(t.b, t.lang_b)}"
        print(
            f"{mark}{t.a + ' ↔ ' + t.b:<61} {kind:<8} {langs:<6} {_fmt_side(a):<24} {_fmt_side(b)}"
        )
    best = [
        min(r for r in (a.rank, b.rank) if r is not None)
        for a, b in (m.sides[k] for k in tk)
        if a.rank is not None or b.rank is not None
    ]
    worst_best = max(best) if best else 0
    print(f"best rank of each true translation: worst {worst_best}")
    return {
        "recall": hit_t / max(1, n_t),
        "same_recall": hit_s / max(1, n_s),
        "candidate_pairs": len(m.pairs),
        "worst_best_rank": worst_best,
        "seconds": m.seconds,
    }


def generated_recall(truth_path: Path, m: Measure) -> dict[str, tuple[int, int]]:
    """Candidate recall of the generated corpus's own related pairs, by relation kind."""
    from readers.groundtruth import load_jsonl

    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for t in load_jsonl(truth_path):
        langs = t.get("languages") or ["", ""]
        kind = "translated" if langs[0] != langs[1] else "same-language"
        hit = pair_key(t["a"], t["b"]) in m.pairs
        for k in (kind, f"{kind} {t['relation']}"):
            out[k][0] += hit
            out[k][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def distractor_corpus(work: Path, n: int, seed: int, words: tuple[int, int]) -> Path:
    """``bookdup generate`` into ``work`` (reused when already there)."""
    from generator.corpus import GeneratorConfig, generate_corpus

    out = work / f"distractors-{n}-s{seed}-{words[0]}-{words[1]}"
    if not (out / "ground_truth.jsonl").exists():
        config = GeneratorConfig(
            seed=seed,
            n_books=n,
            languages=("en", "de", "fr", "es", "it"),
            words_min=words[0],
            words_max=words[1],
        )
        s = generate_corpus(config, out)
        print(f"generated {s.n_books} books of {s.n_works} works in {s.seconds:.0f} s: {out}")
    return out


def index(client: Any, names: Any, paths: list[Path], workers: int) -> float:
    from indexer.index_job import IndexOptions, run_index

    t0 = time.monotonic()
    summary = run_index(client, names, paths, IndexOptions(workers=workers))
    seconds = time.monotonic() - t0
    print(
        f"indexed {summary.indexed} (unchanged {summary.unchanged}, failed "
        f"{len(summary.failures)}) in {seconds:.0f} s"
    )
    for path, why in summary.failures[:10]:
        print(f"  failed {path}: {why}")
    return seconds


def start_node(url: str, data_dir: Path) -> None:
    from devnode.config import LocalNodeConfig
    from devnode.localnode import start

    port = urllib.parse.urlsplit(url).port
    start(LocalNodeConfig.from_env(es_url=url, port=port, data_dir=data_dir))


def stop_node(url: str, data_dir: Path) -> None:
    from devnode.config import LocalNodeConfig
    from devnode.localnode import stop

    port = urllib.parse.urlsplit(url).port
    stop(LocalNodeConfig.from_env(es_url=url, port=port, data_dir=data_dir))


def main(argv: Sequence[str] | None = None) -> None:
    from store.connection import ConnectionSettings, connect
    from store.schema import IndexNames, drop_indices

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--es-url", default="http://127.0.0.1:9640")
    ap.add_argument("--node-data-dir", type=Path, help="start (or reuse) a private node here")
    ap.add_argument("--stop-node", action="store_true", help="stop that node at the end")
    ap.add_argument("--index-prefix", default="candbench")
    ap.add_argument("--data", type=Path, default=GUTENBERG)
    ap.add_argument("--distractors", type=int, default=0, help="generated books to add (2920)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--words", default="3000-10000", help="distractor length range LO-HI")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/bookdup-candbench"))
    ap.add_argument("--workers", type=int, default=1, help="index processes")
    ap.add_argument(
        "--reuse", action="store_true", help="keep what is indexed (measure candidates only)"
    )
    args = ap.parse_args(argv)
    if args.node_data_dir:
        start_node(args.es_url, args.node_data_dir)
    line = "RESULT failed"
    try:
        client = connect(ConnectionSettings.from_env(url=args.es_url, timeout=300))
        names = IndexNames(prefix=args.index_prefix)
        truth = parse_truth(args.data / "README.md")
        translations = [t for t in truth if t.type in TRANSLATION_TYPES]
        same = [t for t in truth if t.related and t.lang_a == t.lang_b]
        wanted = translations + same
        index_s = 0.0
        if not args.reuse:
            drop_indices(client, names)
            index_s += index(client, names, sorted(args.data.glob("*.txt")), args.workers)
        m80 = measure(client, names, wanted)
        h80 = report("Gutenberg alone", m80, translations, same)
        h3k: dict[str, float] = {}
        books = m80.books
        if args.distractors:
            lo, hi = (int(x) for x in args.words.split("-"))
            corpus = distractor_corpus(args.work_dir, args.distractors, args.seed, (lo, hi))
            if not args.reuse:
                index_s += index(client, names, [corpus / "books"], args.workers)
            m3k = measure(client, names, wanted)
            books = m3k.books
            h3k = report(f"with {args.distractors} distractors", m3k, translations, same)
            print("generated pairs among candidates:")
            for kind, (hit, n) in generated_recall(corpus / "ground_truth.jsonl", m3k).items():
                print(f"  {kind:<40} {hit}/{n} = {hit / max(1, n):.3f}")
            gen = generated_recall(corpus / "ground_truth.jsonl", m3k)
            h3k["gen_translated"] = gen["translated"][0] / max(1, gen["translated"][1])
            h3k["gen_same"] = gen["same-language"][0] / max(1, gen["same-language"][1])
        line = (
            f"RESULT translation_candidate_recall_80={h80['recall']:.3f} "
            f"translation_candidate_recall_3000="
            + (f"{h3k['recall']:.3f}" if h3k else "nan")
            + f" books={books} index_s={index_s:.0f}"
            f" same_language_candidate_recall_80={h80['same_recall']:.3f}"
            f" candidate_pairs_80={h80['candidate_pairs']}"
            f" worst_translation_rank_80={h80['worst_best_rank']}"
        )
        if h3k:
            line += (
                f" same_language_candidate_recall_3000={h3k['same_recall']:.3f}"
                f" candidate_pairs_3000={h3k['candidate_pairs']}"
                f" worst_translation_rank_3000={h3k['worst_best_rank']}"
                f" generated_translated_recall_3000={h3k['gen_translated']:.3f}"
                f" generated_same_language_recall_3000={h3k['gen_same']:.3f}"
                f" candidates_s_3000={h3k['seconds']:.0f}"
            )
    finally:
        if args.node_data_dir and args.stop_node:
            stop_node(args.es_url, args.node_data_dir)
    print(line)


if __name__ == "__main__":
    main()
