"""Relation classes on variants of real books (issue 29): rescans, re-paginations, volumes,
abridgements and anthologies of the real Gutenberg texts, and one work with 24 variants.

Builds the set with ``generator.real_variants`` (truth by construction), indexes it into its own
index prefix, runs the dedup job and prints: per-class precision and recall beside Google's
Table I, the share of found pairs in their right class overall and per noise level (the larger
of the pair's two), the pairs of the 24-variant collection that were lost, and the confusion
matrix; then every wrong or missed pair with the classifier's view of it. Ends with a RESULT line.

Run: ``python benchmarks/eval_variants.py --es-url http://127.0.0.1:9200`` (``--quick``: 10 works,
40K words each, ~3 min on 2 cores; without it every work, up to 80K words each).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bookdup.evaluate import evaluate, render_report
from bookdup.pairs import pair_key
from generator.real_variants import NOISE_LEVELS, VariantConfig, generate_variants

REPO = Path(__file__).resolve().parents[1]
GUTENBERG = (REPO / ".." / "shared" / "data" / "gutenberg").resolve()
#: Google's Table I (precision, recall) for the classes it shares with bookdup.
TABLE_I = {
    "SAME_PAGINATION": (0.982, 0.884),
    "DIFFERENT_PAGINATION": (0.923, 0.735),
    "CONTIGUOUS_SUBSET": (0.952, 0.869),
    "OVERLAPPING_TEXT": (0.786, 0.963),
}
#: Truth classes that the catalog treats alike (EXACT is the noise-free SAME_PAGINATION).
SAME_AS = {"EXACT": "SAME_PAGINATION"}


def real_related_pairs() -> frozenset[tuple[str, str]]:
    """Pairs of real book ids the Gutenberg folder's own truth says share text."""
    from eval_gutenberg import NOT_RELATED_TYPES, parse_truth

    rows = parse_truth(GUTENBERG / "README.md")
    return frozenset((r.a, r.b) for r in rows if r.type not in NOT_RELATED_TYPES)


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict]:
    """Generate (unless reused), index and dedup; the truth, the stored relations, timings."""
    from indexer.dedup_job import run_dedup
    from indexer.index_job import run_index
    from store.connection import ConnectionSettings, connect
    from store.iterate import iter_documents
    from store.schema import IndexNames, drop_indices

    config = VariantConfig(
        GUTENBERG,
        works=10 if args.quick else None,
        max_words=40_000 if args.quick else 80_000,
        related=real_related_pairs(),
        noise_levels=tuple(args.noise) if args.noise else NOISE_LEVELS,
    )
    t0 = time.monotonic()
    summary = generate_variants(config, args.workdir)
    timing: dict[str, Any] = {"generate_s": round(time.monotonic() - t0, 1), **summary}
    client = connect(ConnectionSettings.from_env(url=args.es_url))
    names = IndexNames(prefix=args.index_prefix)
    if not args.reuse:
        drop_indices(client, names)
        t0 = time.monotonic()
        run_index(client, names, [args.workdir / "books"])
        timing["index_s"] = round(time.monotonic() - t0, 1)
        t0 = time.monotonic()
        dedup = run_dedup(client, names)
        timing["dedup_s"] = round(time.monotonic() - t0, 1)
        timing["verified_pairs"] = dedup.verified_pairs
    client.indices.refresh(index=names.relations)
    predicted = [h["_source"] for h in iter_documents(client, names.relations)]
    truth = [json.loads(x) for x in (args.workdir / "ground_truth.jsonl").open(encoding="utf-8")]
    return truth, predicted, timing


def _canon(relation: str) -> str:
    return SAME_AS.get(relation, relation)


def in_class_by_noise(truth: list[dict[str, Any]], predicted: list[dict[str, Any]]) -> dict:
    """Per noise level (the pair's larger): found pairs, found in the right class, missed."""
    found = {pair_key(p["a"], p["b"]): p["relation"] for p in predicted}
    out: dict[float, Counter[str]] = defaultdict(Counter)
    for t in truth:
        level = max(t["noise_a"], t["noise_b"])
        got = found.get(pair_key(t["a"], t["b"]))
        c = out[level]
        c["true"] += 1
        if got is not None and got != "UNRELATED":
            c["found"] += 1
            c["right"] += _canon(got) == _canon(t["relation"])
    return {k: dict(v) for k, v in sorted(out.items())}


def table_i_lines(metrics: dict[str, Any]) -> tuple[list[str], bool]:
    """Each shared class's precision and recall beside Table I, and whether all are met."""
    lines = [
        "## Google's Table I beside",
        "",
        "| class | precision | recall | Table I P / R | met |",
    ]
    lines.append("| --- | ---: | ---: | --- | --- |")
    met_all = True
    for rel, (tp, tr) in TABLE_I.items():
        m = metrics["relations"].get(rel)
        if m is None:
            continue
        met = m["precision"] >= tp and m["recall"] >= tr
        met_all &= met
        lines.append(
            f"| {rel} | {m['precision']:.3f} | {m['recall']:.3f} | {tp} / {tr} | "
            f"{'yes' if met else 'no'} |"
        )
    return lines, met_all


def pair_lines(
    truth: list[dict[str, Any]], predicted: list[dict[str, Any]]
) -> tuple[list[str], int, int]:
    """The collection's lost pairs and every pair in the wrong class; (lines, found, of)."""
    found = {pair_key(p["a"], p["b"]): p for p in predicted if p["relation"] != "UNRELATED"}
    coll = [t for t in truth if t["a"].startswith("coll") and t["b"].startswith("coll")]
    lost = [t for t in coll if pair_key(t["a"], t["b"]) not in found]
    lines = ["", f"## The 24-variant collection: {len(coll) - len(lost)} of {len(coll)} found", ""]
    lines += [f"- lost {t['a']} {t['b']} ({t['relation']})" for t in lost]
    lines += ["", "## Pairs in the wrong class", ""]
    for t in truth:
        p = found.get(pair_key(t["a"], t["b"]))
        if p is not None and _canon(p["relation"]) != _canon(t["relation"]):
            lines.append(
                f"- {t['a']} {t['b']}: {t['relation']} found {p['relation']} (noise "
                f"{t['noise_a']}/{t['noise_b']}, coverage {t['coverage_a']}/{t['coverage_b']})"
            )
    return lines, len(coll) - len(lost), len(coll)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--es-url", default="http://127.0.0.1:9200")
    ap.add_argument("--index-prefix", default="bench-variants-")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bookdup-bench-variants"))
    ap.add_argument("--quick", action="store_true", help="10 works of 40K words")
    ap.add_argument("--reuse", action="store_true", help="score the relations already stored")
    ap.add_argument(
        "--noise",
        type=float,
        nargs="+",
        default=None,
        help="noise levels the non-rescan variants draw from (default 0 / 0.02 / 0.05 / 0.10)",
    )
    ap.add_argument("--report", type=Path, default=None, help="write the Markdown report here")
    args = ap.parse_args()
    truth, predicted, timing = run(args)
    canon_truth = [{**t, "relation": _canon(t["relation"])} for t in truth]
    canon_pred = [{**p, "relation": _canon(p["relation"])} for p in predicted]
    metrics = evaluate(canon_truth, canon_pred, n_books=timing["n_books"])
    table, met_all = table_i_lines(metrics)
    by_noise = in_class_by_noise(truth, predicted)
    lines = [render_report({**timing, **metrics}), *table, ""]
    lines += ["## Found pairs in the right class, by noise", ""]
    lines += ["| noise | true | found | right class |", "| ---: | ---: | ---: | ---: |"]
    for level, c in by_noise.items():
        lines.append(f"| {level:.2f} | {c['true']} | {c.get('found', 0)} | {c.get('right', 0)} |")
    pairs, coll_found, coll_all = pair_lines(truth, predicted)
    text = "\n".join(lines + pairs) + "\n"
    print(text)
    if args.report:
        args.report.write_text(text, encoding="utf-8")
    n_found = sum(c.get("found", 0) for c in by_noise.values())
    n_right = sum(c.get("right", 0) for c in by_noise.values())
    rel = metrics["relations"]["RELATED"]
    false = sum(v for k, v in metrics["confusion"].get("UNRELATED", {}).items() if k != "UNRELATED")
    print(
        f"RESULT books={timing['n_books']} related_recall={rel['recall']:.3f} "
        f"related_precision={rel['precision']:.3f} in_class={n_right / max(1, n_found):.3f} "
        f"collection_found={coll_found}/{coll_all} false_pairs={false} "
        f"table_i_met={'yes' if met_all else 'no'} dedup_s={timing.get('dedup_s', 0)}"
    )


if __name__ == "__main__":
    main()
