"""End-to-end evaluation on the 80 real Gutenberg books against the README's ground truth.

Indexes every ``.txt`` of ../shared/data/gutenberg (PG header/footer left in, as a library
would get them) into its own index prefix, runs the dedup job, and scores the relations it
stored against the pair table of the folder's README.md:

* "related at all" precision / recall / F over unordered pairs (``disjoint-parts`` counts as
  NOT related, as the README says); also over the pairs the system can reach at all — a
  translation between two languages without a FreeDict lexicon is out of reach by design;
* recall per ground-truth type with the predicted classes, precision per predicted class;
* MAP of translation retrieval per language pair (TRANS §5; each book ranks the other
  language's books by the order statistic z of stored TRANSLATION relations);
* the fraction of all n(n−1)/2 pairs that were verified;
* every miss and every false match, explained from the dedup job's own view of the pair
  (candidate retrieval re-run for the pair, then the same verification with boilerplate
  words dropped, giving its, |LCS|, coverage and the classifier's confidences).

Writes the section between the ``gutenberg`` markers of docs/EVALUATION.md and prints a RESULT
line. Run: ``python benchmarks/eval_gutenberg.py --es-url http://127.0.0.1:9200``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bookdup.evaluate import fraction_verified, prf, translation_map
from bookdup.pairs import pair_key
from readers.dictionaries import available_pairs

REPO = Path(__file__).resolve().parents[1]
GUTENBERG = (REPO / ".." / "shared" / "data" / "gutenberg").resolve()
REPORT = REPO / "docs" / "EVALUATION.md"
BEGIN, END = "<!-- gutenberg:begin -->", "<!-- gutenberg:end -->"

RELATED_TYPES = (
    "edition",
    "edition-variant",
    "abridged-edition",
    "containment",
    "different-translation",
    "translation",
    "translation-partial",
)
NOT_RELATED_TYPES = ("disjoint-parts",)
#: The class a cataloguer needs for each ground-truth type (issue 13): editions collapse in
#: search, abridgements and other translations join the work but never the edition, and
#: contained / abridged books carry a direction naming the smaller book.
EXPECTED_CLASSES = {
    "edition": ("EXACT", "SAME_PAGINATION", "DIFFERENT_PAGINATION"),
    "edition-variant": ("EXACT", "SAME_PAGINATION", "DIFFERENT_PAGINATION"),
    "abridged-edition": ("ABRIDGED",),
    "containment": ("CONTIGUOUS_SUBSET",),
    "different-translation": ("SAME_WORK",),
    "translation": ("TRANSLATION",),
    "translation-partial": ("TRANSLATION",),
}
DIRECTED_CLASSES = ("ABRIDGED", "CONTIGUOUS_SUBSET")
_ROW = re.compile(r"^\|\s*([\w.-]+)\s*\|\s*([\w.-]+)\s*\|\s*(\w\w)-(\w\w)\s*\|\s*([\w-]+)\s*\|")


@dataclass(frozen=True)
class TruthPair:
    """One row of the README's ground-truth table."""

    a: str
    b: str
    lang_a: str
    lang_b: str
    type: str

    @property
    def related(self) -> bool:
        return self.type in RELATED_TYPES

    @property
    def reachable(self) -> bool:
        """Can the method find it at all? A translation needs a FreeDict lexicon between the
        two languages (either direction). Different translations into one language are kept:
        they share names and rare words in order, which the unique-word LCS does see."""
        if self.lang_a != self.lang_b:
            pairs = set(available_pairs())
            return (self.lang_a, self.lang_b) in pairs or (self.lang_b, self.lang_a) in pairs
        return True


def parse_truth(readme: Path) -> list[TruthPair]:
    """The pair table under "Ground-truth relations" (every row, including disjoint-parts)."""
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Ground-truth relations", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        m = _ROW.match(line)
        if m and m.group(1) != "A":
            a, b, la, lb, kind = m.groups()
            if kind not in RELATED_TYPES + NOT_RELATED_TYPES:
                raise ValueError(f"unknown pair type {kind!r} in {line!r}")
            out.append(TruthPair(a, b, la, lb, kind))
    return out


def index_and_dedup(
    client: Any, names: Any, root: Path, *, pivot_pairs: bool = True, among: Path | None = None
) -> dict[str, Any]:
    """Fresh indices, every .txt indexed (explicit paths), then a full dedup run (with
    ``pivot_pairs``: the pivot pair keys indexed and queried too, issue 27); with ``among`` (a
    generated corpus), its books indexed beside them: the candidates' caps meet a collection
    (issue 27: the real books inside a 3,000-book one)."""
    from indexer.dedup_job import run_dedup
    from indexer.dedup_stages import DedupParams
    from indexer.index_job import IndexOptions, run_index
    from store.candidates import CandidateParams
    from store.schema import drop_indices

    drop_indices(client, names)
    paths = sorted(root.glob("*.txt"))
    t0 = time.monotonic()
    inputs = [*paths, *([among / "books"] if among else [])]
    summary = run_index(client, names, inputs, IndexOptions(pivot_pairs=pivot_pairs))
    index_s = time.monotonic() - t0
    t0 = time.monotonic()
    params = DedupParams(candidates=CandidateParams(pivot_pairs=pivot_pairs))
    dedup = run_dedup(client, names, params=params)
    dedup_s = time.monotonic() - t0
    return {
        "books": len(paths),
        "index_failures": len(summary.failures),
        "index_s": round(index_s, 1),
        "dedup_s": round(dedup_s, 1),
        "candidate_pairs": dedup.candidate_pairs,
        "verified_pairs": dedup.verified_pairs,
        "dedup_timings": dedup.timings,
        "collection": summary.indexed,
    }


def stored_relations(client: Any, names: Any) -> list[dict[str, Any]]:
    """Every relation document of the run (UNRELATED verdicts are not stored)."""
    from store.iterate import iter_documents

    client.indices.refresh(index=names.relations)
    return [h["_source"] for h in iter_documents(client, names.relations)]


def languages_of(client: Any, names: Any) -> dict[str, str]:
    """Detected language of each indexed book (what the system used, not the manifest)."""
    from store.iterate import iter_documents

    return {
        h["_id"]: h["_source"].get("language", "und")
        for h in iter_documents(client, names.books, source=["language"])
    }


def words_of(client: Any, names: Any) -> dict[str, int]:
    """Words of each indexed book: the smaller of a contained or abridged pair is the one a
    direction must name."""
    from store.iterate import iter_documents

    return {
        h["_id"]: int(h["_source"].get("n_words", 0))
        for h in iter_documents(client, names.books, source=["n_words"])
    }


def class_agreement(
    truth: Sequence[TruthPair],
    relations: Sequence[Mapping[str, Any]],
    words: Mapping[str, int],
) -> list[tuple[str, str, int, int, int, str]]:
    """Per ground-truth type: (type, expected, total, right class, right class and direction,
    what the others were). A direction is right when it names the book with fewer words."""
    stored = {pair_key(r["a"], r["b"]): r for r in relations}
    rows = []
    for kind, expected in EXPECTED_CLASSES.items():
        sel = [t for t in truth if t.type == kind]
        if not sel:
            continue
        right = directed = 0
        wrong: Counter[str] = Counter()
        for t in sel:
            r = stored.get(pair_key(t.a, t.b))
            rel = r["relation"] if r else "—"
            if rel not in expected:
                wrong[rel] += 1
                continue
            right += 1
            if rel not in DIRECTED_CLASSES:
                directed += 1
                continue
            inner = r["a"] if r.get("direction") == "a_in_b" else r["b"]
            outer = r["b"] if inner == r["a"] else r["a"]
            directed += words.get(inner, 0) < words.get(outer, 0)
        others = ", ".join(f"{k} {n}" for k, n in wrong.most_common()) or "–"
        rows.append((kind, " / ".join(expected), len(sel), right, directed, others))
    return rows


def explain(
    client: Any, names: Any, pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """One line per pair: was it a candidate, and what did the dedup job's verification say."""
    from bookdup.compare import compare_features
    from bookdup.relate import plan_pair
    from indexer.dedup_stages import DedupParams, prepare

    if not pairs:
        return {}
    run = prepare(client, names, DedupParams(), "explain", None)
    ids = sorted({i for p in pairs for i in p})
    feats = run.cache.get_many(ids)
    out: dict[tuple[str, str], str] = {}
    for a, b in pairs:
        key = pair_key(a, b)
        if a not in feats or b not in feats:
            out[key] = "book missing from the index"
            continue
        cand = set(run.searcher.candidates([feats[a]]))
        cand |= set(run.searcher.candidates([feats[b]]))
        is_cand = key in cand
        fa, fb = feats[key[0]], feats[key[1]]
        la, lb = fa.language, fb.language
        plan = plan_pair(fa, fb, run.lexicons)
        if plan is None:
            out[key] = f"candidate={is_cand}; not verifiable ({la}-{lb}: no lexicon)"
            continue
        r = compare_features(fa, fb, dictionary=plan.dictionary).to_dict()
        s = r.get("signals", {})
        conf = {k: v for k, v in r.get("confidences", {}).items() if v >= 0.05}
        z = (r.get("order") or {}).get("z", 0.0)
        out[key] = (
            f"candidate={is_cand}; {r['scores']} {la}-{lb}: z={z:.1f} its={r['its']:.3f} "
            f"lcs={r['lcs']} shared={r['shared']} |X|={r['x']} |Y|={r['y']}; "
            f"cov={s.get('coverage_x', 0):.2f}/{s.get('coverage_y', 0):.2f}; "
            f"→ {r['relation']} {json.dumps(conf)}"
        )
    return out


def per_type_recall(
    truth: Sequence[TruthPair], predicted: Mapping[tuple[str, str], str]
) -> list[tuple[str, int, int, str]]:
    """(type, found, total, predicted classes) per ground-truth type."""
    rows = []
    for kind in RELATED_TYPES + NOT_RELATED_TYPES:
        sel = [t for t in truth if t.type == kind]
        if not sel:
            continue
        got = Counter(predicted.get(pair_key(t.a, t.b), "—") for t in sel)
        found = sum(n for k, n in got.items() if k != "—")
        rows.append((kind, found, len(sel), ", ".join(f"{k} {n}" for k, n in got.most_common())))
    return rows


def translation_maps(
    truth: Sequence[TruthPair], relations: Sequence[Mapping[str, Any]], langs: Mapping[str, str]
) -> dict[str, float]:
    """MAP per language pair with a lexicon; ground-truth languages (the manifest's) as queries."""
    gt = [
        {"a": t.a, "b": t.b, "relation": "TRANSLATION"}
        for t in truth
        if t.type in ("translation", "translation-partial") and t.reachable
    ]
    lang = {t.a: t.lang_a for t in truth} | {t.b: t.lang_b for t in truth}
    lang = {**langs, **lang}
    scores = [
        (r["a"], r["b"], float((r.get("signals") or {}).get("order_z", r["its"])))
        for r in relations
        if r["relation"] == "TRANSLATION"
    ]
    out = {}
    for src, tgt in sorted({(lang[d["a"]], lang[d["b"]]) for d in gt}):
        out[f"{src}-{tgt}"] = translation_map(gt, scores, lang, src, tgt)
    return out


def render(
    truth: Sequence[TruthPair],
    relations: Sequence[Mapping[str, Any]],
    run: Mapping[str, Any],
    explanations: Mapping[tuple[str, str], str],
    langs: Mapping[str, str],
    words: Mapping[str, int],
) -> tuple[str, dict[str, float]]:
    """The Markdown section and the headline numbers."""
    related = {pair_key(t.a, t.b): t for t in truth if t.related}
    reachable = {k for k, t in related.items() if t.reachable}
    predicted = {pair_key(r["a"], r["b"]): r["relation"] for r in relations}
    predicted = {k: v for k, v in predicted.items() if v != "UNRELATED"}
    types = {pair_key(t.a, t.b): t.type for t in truth}
    allm = prf(len(predicted.keys() & related.keys()), len(predicted), len(related))
    reach = prf(
        len(predicted.keys() & reachable),
        len(predicted.keys() - (related.keys() - reachable)),
        len(reachable),
    )
    maps = translation_maps(truth, relations, langs)
    mean_map = float(np.mean(list(maps.values()))) if maps else 0.0
    fv = fraction_verified(run["verified_pairs"], run["books"])
    lines = [
        BEGIN,
        "## Real books (80 Gutenberg books, README ground truth)",
        "",
        "Reproduce: `python benchmarks/eval_gutenberg.py --es-url $ELASTICSEARCH_URL "
        "--index-prefix evgut` (indexes the 80 `.txt` files with PG header/footer as found, "
        "runs `dedup`, scores the stored relations against the README's pair table).",
        "",
        f"- books {run['books']}"
        + (f" among {run['collection']} indexed" if run.get("collection", 0) > run["books"] else "")
        + f", index {run['index_s']} s, dedup {run['dedup_s']} s; "
        f"candidate pairs {run['candidate_pairs']}, verified {run['verified_pairs']} of "
        f"{run['books'] * (run['books'] - 1) // 2} → fraction verified **{fv:.3f}**",
        f"- ground truth: {len(related)} related pairs, of which {len(reachable)} reachable "
        "(excluded: translations between languages without a FreeDict lexicon)",
        "",
        "| related at all | precision | recall | F1 | TP | predicted | true |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, m in (("all related pairs", allm), ("reachable pairs only", reach)):
        lines.append(
            f"| {name} | {m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} | {m['tp']} "
            f"| {m['predicted']} | {m['true']} |"
        )
    lines += ["", "Recall per ground-truth type (predicted classes; — = not found):", ""]
    lines += [
        "| type | found | total | recall | predicted as |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for kind, found, total, dist in per_type_recall(truth, predicted):
        lines.append(f"| {kind} | {found} | {total} | {found / total:.2f} | {dist} |")
    lines += ["", "Precision per predicted class (correct = the pair is related in the truth):", ""]
    lines += ["| predicted | correct | predicted | precision | truth types |"]
    lines += ["| --- | ---: | ---: | ---: | --- |"]
    by_class: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for k, v in predicted.items():
        by_class[v].append(k)
    for cls, keys in sorted(by_class.items()):
        ok = sum(k in related for k in keys)
        dist = Counter(types.get(k, "unrelated") for k in keys)
        lines.append(
            f"| {cls} | {ok} | {len(keys)} | {ok / len(keys):.2f} | "
            + ", ".join(f"{t} {n}" for t, n in dist.most_common())
            + " |"
        )
    agreement = class_agreement(truth, relations, words)
    n_right = sum(row[4] for row in agreement)
    n_typed = sum(row[2] for row in agreement)
    lines += [
        "",
        "Classes a cataloguer acts on: the class each ground-truth type needs, and its "
        "direction where it has one (the contained or abridged book is the one with fewer "
        f"words) — **{n_right} / {n_typed}** right:",
        "",
        "| type | expected | pairs | right class | right class and direction | others |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    lines += [
        f"| {kind} | {expected} | {total} | {right} | {directed} | {others} |"
        for kind, expected, total, right, directed, others in agreement
    ]
    lines += ["", f"Translation retrieval MAP per language pair (mean **{mean_map:.3f}**):", ""]
    lines += ["| pair | MAP |", "| --- | ---: |"]
    lines += [f"| {k} | {v:.3f} |" for k, v in maps.items()]
    misses = sorted(related.keys() - predicted.keys())
    false = sorted(predicted.keys() - related.keys())
    lines += ["", f"### Misses ({len(misses)})", ""]
    lines += ["| pair | type | reachable | why (dedup's own view of the pair) |"]
    lines += ["| --- | --- | --- | --- |"]
    for k in misses:
        t = related[k]
        lines.append(
            f"| {k[0]} ↔ {k[1]} | {t.type} | {'yes' if t.reachable else 'no'} "
            f"| {explanations.get(k, '')} |"
        )
    lines += ["", f"### False matches ({len(false)})", ""]
    lines += ["| pair | predicted | truth | why |", "| --- | --- | --- | --- |"]
    for k in false:
        lines.append(
            f"| {k[0]} ↔ {k[1]} | {predicted[k]} | {types.get(k, 'unrelated')} "
            f"| {explanations.get(k, '')} |"
        )
    lines += ["", END]
    head = {
        "precision": allm["precision"],
        "recall": allm["recall"],
        "f1": allm["f1"],
        "reachable_recall": reach["recall"],
        "translation_map": mean_map,
        "fraction_verified": fv,
        "classes_right": n_right / n_typed if n_typed else 0.0,
    }
    return "\n".join(lines) + "\n", head


def write_section(section: str, path: Path = REPORT) -> None:
    """Replace the gutenberg section of the report (or append it), keeping the rest."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Evaluation\n\n"
    if BEGIN in text and END in text:
        pre, rest = text.split(BEGIN, 1)
        post = rest.split(END, 1)[1]
        text = pre + section.rstrip("\n") + post
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    """Index, dedup, score, explain, write the report section, print RESULT."""
    from store.connection import ConnectionSettings, connect
    from store.schema import IndexNames

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--es-url", default=os.environ.get("ELASTICSEARCH_URL"))
    ap.add_argument("--index-prefix", default="evgut")
    ap.add_argument("--data", type=Path, default=GUTENBERG)
    ap.add_argument("--reuse", action="store_true", help="score the relations already indexed")
    ap.add_argument("--report", type=Path, default=REPORT)
    ap.add_argument(
        "--among",
        type=Path,
        help="a generated corpus (bookdup generate) indexed beside the real books: their "
        "relations are scored inside that collection (a relation to one of its books is false)",
    )
    ap.add_argument(
        "--pivot-pairs",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="index and query issue 27's pivot pair keys (default: on, as the tool's)",
    )
    args = ap.parse_args(argv)
    client = connect(ConnectionSettings.from_env(url=args.es_url))
    names = IndexNames(prefix=args.index_prefix)
    truth = parse_truth(args.data / "README.md")
    if args.reuse:
        from store.iterate import iter_documents

        runs = [h["_source"] for h in iter_documents(client, names.runs)]
        last = max((r for r in runs if r["kind"] == "dedup"), key=lambda r: r["started_at"])
        indexed = [r for r in runs if r["kind"] == "index" and r.get("status") == "finished"]
        # the index job's own clock (its runs document), not the benchmark's
        index_s = sum(r.get("timings", {}).get("seconds", 0.0) for r in indexed)
        run = {
            "books": client.count(index=names.books)["count"],
            "index_failures": 0,
            "index_s": round(index_s, 1) if indexed else float("nan"),
            "dedup_s": last.get("timings", {}).get("total_s", float("nan")),
            "candidate_pairs": last["counts"]["candidate_pairs"],
            "verified_pairs": last["counts"]["verified_pairs"],
        }
    else:
        run = index_and_dedup(
            client, names, args.data, pivot_pairs=args.pivot_pairs, among=args.among
        )
    real = {p.stem for p in args.data.glob("*.txt")}
    relations = [r for r in stored_relations(client, names) if {r["a"], r["b"]} & real]
    langs = languages_of(client, names)
    words = words_of(client, names)
    related = {pair_key(t.a, t.b) for t in truth if t.related}
    predicted = {pair_key(r["a"], r["b"]) for r in relations if r["relation"] != "UNRELATED"}
    t0 = time.monotonic()
    explanations = explain(client, names, sorted(related ^ predicted))
    section, head = render(truth, relations, run, explanations, langs, words)
    write_section(section, args.report)
    print(section)
    print(f"explain {time.monotonic() - t0:.1f}s; run {json.dumps(run, default=str)}")
    print(
        f"RESULT precision={head['precision']:.3f} recall={head['recall']:.3f} "
        f"f1={head['f1']:.3f} reachable_recall={head['reachable_recall']:.3f} "
        f"translation_map={head['translation_map']:.3f} "
        f"fraction_verified={head['fraction_verified']:.3f} "
        f"classes_right={head['classes_right']:.3f}"
    )


if __name__ == "__main__":
    main()
