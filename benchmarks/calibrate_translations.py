"""Generated translations against real ones: where do their scores fall? (issue 12 item 5)

The generator's translations should score where the real Gutenberg translations score, not
above them. This computes, offline and with the decision alone (no Elasticsearch, no candidate
retrieval; the collection's boilerplate dropped as the dedup job does, like
``real_translations.py``), for every translated pair of

* the 80 real Gutenberg books (``translation`` and ``translation-partial`` rows of the
  folder's README, reachable through a FreeDict lexicon), and
* a generated corpus (its ``ground_truth.jsonl`` TRANSLATION pairs; made here with the given
  translation style unless ``--generated DIR`` names one: by default 200 books of 15K–60K
  words in the real pairs' five languages, 60 % of works translated, seed 1),

the shared items, |LCS|, TRANS-its and the order statistic z, and prints quantiles of each —
real first — with the size-free ones (|LCS|/shared, z/sqrt(shared), shared per unique word of
the smaller book) that do not depend on the books' lengths, which differ (Gutenberg books are
20K–200K words; the generator's defaults 3K–20K).

``--map`` also scores every cross-language pair of the generated corpus (the dedup job's fast
path: pairs below the TRANSLATION floor are UNRELATED unscored) and reports recall and
false positives of the TRANSLATION decision, and MAP of translation retrieval per language
pair (each book ranks the other language's books by the z of pairs called TRANSLATION,
``bookdup.evaluate.translation_map``), as ``eval_gutenberg.py`` does for the real books.

The real side (80 books' features, 53 pairs) takes ~10 s; ``--real-cache FILE`` keeps it.

Run: ``python benchmarks/calibrate_translations.py [--style realistic|faithful] [--books 200]
[--set synonyms=0.6 ...] [--by-languages] [--map] [--generated DIR] [--real-cache FILE]``
(~20 s; ~1 min with ``--map``). Results: docs/TRANSLATION_CALIBRATION.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bookdup.boilerplate import drop_common_words, frequent_df
from bookdup.compare import compare_features
from bookdup.evaluate import translation_map
from bookdup.features import BookFeatures, extract_features
from bookdup.relate import TRANSLATION_FLOOR, plan_pair
from readers import ReadError, iter_books
from readers.dictionaries import Dictionaries

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_gutenberg import GUTENBERG, parse_truth  # noqa: E402
from quick import add_quick, parse_args  # noqa: E402

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: Statistics compared, size-free ones first.
STATS = (
    "lcs_per_shared",
    "z_per_sqrt_shared",
    "shared_per_unique",
    "its",
    "z",
    "shared",
    "unique_min",
)


def load_features(paths: Sequence[Path]) -> dict[str, BookFeatures]:
    """Features of every readable book, with the collection's boilerplate stretches dropped."""
    feats = {}
    for book in iter_books(list(paths)):
        if isinstance(book, ReadError):
            continue
        f = extract_features(book)
        feats[f.book_id] = f
    df: Counter[int] = Counter()
    for f in feats.values():
        df.update(set(f.unique.hashes.tolist()))
    frequent = np.array(
        sorted(h for h, n in df.items() if n >= frequent_df(len(feats))), dtype=np.uint32
    )
    none = np.zeros(0, dtype=np.uint32)
    return {k: drop_common_words(f, none, frequent) for k, f in feats.items()}


def pair_stats(
    fa: BookFeatures, fb: BookFeatures, lexicons: Dictionaries, floor: float | None = None
) -> dict[str, Any] | None:
    """The decision's evidence for a cross-language pair (None: no lexicon links them)."""
    plan = plan_pair(fa, fb, lexicons)
    if plan is None or plan.dictionary is None:
        return None
    r = compare_features(fa, fb, dictionary=plan.dictionary, min_z=floor).to_dict()
    z = float((r["order"] or {}).get("z", 0.0))
    shared, lcs = int(r["shared"]), int(r["lcs"])
    return {
        "languages": "-".join(r["languages"]),
        "x": int(r["x"]),
        "y": int(r["y"]),
        "shared": shared,
        "lcs": lcs,
        "its": float(r["its"]),
        "z": z,
        "relation": r["relation"],
        "lcs_per_shared": lcs / shared if shared else 0.0,
        "z_per_sqrt_shared": z / math.sqrt(shared) if shared else 0.0,
        "shared_per_unique": shared / max(1, min(int(r["x"]), int(r["y"]))),
        "unique_min": min(int(r["x"]), int(r["y"])),
    }


def real_rows(data: Path, cache: Path | None) -> list[dict[str, Any]]:
    """Stats of every real translation pair reachable through a lexicon (cached in ``cache``)."""
    if cache is not None and cache.exists():
        return json.loads(cache.read_text(encoding="utf-8"))
    truth = [
        t
        for t in parse_truth(data / "README.md")
        if t.type in ("translation", "translation-partial")
    ]
    books = load_features(sorted(data.glob("*.txt")))
    lexicons = Dictionaries(True)
    rows = []
    for t in truth:
        if t.a not in books or t.b not in books:
            continue
        s = pair_stats(books[t.a], books[t.b], lexicons)
        if s is not None:
            rows.append({"a": t.a, "b": t.b, "type": t.type, **s})
    if cache is not None:
        cache.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return rows


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def generated_rows(
    corpus: Path, with_map: bool
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Stats of the corpus's translation pairs and, with ``with_map``, the decision's figures."""
    records = _jsonl(corpus / "books.jsonl")
    truth = _jsonl(corpus / "ground_truth.jsonl")
    config = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))["config"]
    books = load_features([corpus / config.get("books_dir", "books")])
    languages = {r["id"]: r["language"] for r in records}
    lexicons = Dictionaries(True)
    trans = {(d["a"], d["b"]) for d in truth if d["relation"] == "TRANSLATION"}
    rows = []
    for a, b in sorted(trans):
        s = pair_stats(books[a], books[b], lexicons)
        if s is not None:
            rows.append({"a": a, "b": b, "type": "translation", **s})
    if not with_map:
        return rows, None
    called = {(r["a"], r["b"]): r for r in rows}
    scores, false = [], 0
    ids = sorted(books)
    n_pairs = 0
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if languages[a] == languages[b]:
                continue
            if (a, b) in called:
                s = called[a, b]
            else:
                s = pair_stats(books[a], books[b], lexicons, floor=TRANSLATION_FLOOR)
                if s is None:
                    continue
                false += s["relation"] == "TRANSLATION"
            n_pairs += 1
            if s["relation"] == "TRANSLATION":
                scores.append((a, b, s["z"]))
    maps, queries = {}, {}
    reach = [d for d in truth if (d["a"], d["b"]) in called]
    for src, tgt in sorted({(languages[a], languages[b]) for a, b in trans}):
        for q, r in ((a, b) for d in reach for a, b in ((d["a"], d["b"]), (d["b"], d["a"]))):
            if languages[q] == src and languages[r] == tgt:
                queries.setdefault(f"{src}-{tgt}", set()).add(q)
    for src, tgt in sorted({(languages[a], languages[b]) for a, b in trans}):
        maps[f"{src}-{tgt}"] = translation_map(reach, scores, languages, src, tgt)
    n_queries = {k: len(v) for k, v in queries.items()}
    pooled = sum(maps[k] * n for k, n in n_queries.items()) / max(1, sum(n_queries.values()))
    found = sum(r["relation"] == "TRANSLATION" for r in rows)
    decision = {
        "translation_pairs": len(rows),
        "found": found,
        "recall": found / max(1, len(rows)),
        "cross_language_pairs": n_pairs,
        "unrelated_called_translation": false,
        "map": maps,
        "queries": n_queries,
        "mean_map": float(np.mean(list(maps.values()))) if maps else 0.0,
        "pooled_map": pooled,
    }
    return rows, decision


def quantiles(rows: Iterable[Mapping[str, Any]], key: str) -> list[float]:
    values = np.array([r[key] for r in rows], dtype=float)
    if values.size == 0:
        return [float("nan")] * len(QUANTILES)
    return [float(np.quantile(values, q)) for q in QUANTILES]


def table(real: Sequence[Mapping[str, Any]], gen: Sequence[Mapping[str, Any]]) -> str:
    """Quantiles of every statistic, real then generated, one row each."""
    head = " | ".join(f"q{int(q * 100)}" for q in QUANTILES)
    lines = [
        f"| statistic | set | n | {head} |",
        "| --- | --- | ---: | " + " | ".join("---:" for _ in QUANTILES) + " |",
    ]
    for key in STATS:
        digits = 0 if key in ("shared", "unique_min") else (1 if key == "z" else 3)
        for name, rows in (("real", real), ("generated", gen)):
            qs = " | ".join(f"{v:.{digits}f}" for v in quantiles(rows, key))
            lines.append(f"| {key} | {name} | {len(rows)} | {qs} |")
    return "\n".join(lines)


def by_languages(real: Sequence[Mapping[str, Any]], gen: Sequence[Mapping[str, Any]]) -> str:
    """Medians of the size-free statistics per language pair (either order), real and generated."""
    lines = ["| languages | set | n | lcs_per_shared | z_per_sqrt_shared | shared_per_unique |"]
    lines.append("| --- | --- | ---: | ---: | ---: | ---: |")
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for name, rows in (("real", real), ("generated", gen)):
        for r in rows:
            key = "-".join(sorted(r["languages"].split("-")))
            groups.setdefault((key, name), []).append(r)
    for (key, name), rows in sorted(groups.items()):
        med = [float(np.median([r[k] for r in rows])) for k in STATS[:3]]
        lines.append(
            f"| {key} | {name} | {len(rows)} | " + " | ".join(f"{m:.3f}" for m in med) + " |"
        )
    return "\n".join(lines)


def generate(args: argparse.Namespace, out: Path) -> None:
    from generator import GeneratorConfig, generate_corpus

    cfg = GeneratorConfig(
        seed=args.seed,
        n_books=args.books,
        languages=tuple(args.languages.split(",")),
        words_min=args.words_min,
        words_max=args.words_max,
        translation_fraction=args.translations,
        translation_style=args.style,
        translation_overrides=tuple(
            (k, float(v)) for k, _, v in (item.partition("=") for item in args.set)
        ),
    )
    s = generate_corpus(cfg, out)
    print(f"generated {s.n_books} books ({s.n_words:,} words) in {s.seconds:.1f} s: {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=GUTENBERG, help="the real books")
    ap.add_argument("--real-cache", type=Path, help="JSON file keeping the real side's stats")
    ap.add_argument("--generated", type=Path, help="an existing generated corpus")
    ap.add_argument("--keep", type=Path, help="generate into this folder (default: temporary)")
    ap.add_argument("--style", default="realistic", help="translation style to generate with")
    ap.add_argument("--books", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--languages", default="en,de,fr,es,it", help="those of the real pairs")
    ap.add_argument("--words-min", type=int, default=15000)
    ap.add_argument("--words-max", type=int, default=60000)
    ap.add_argument("--translations", type=float, default=0.6, help="share of works translated")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a translation-style rate (generator.translate.TranslationStyle)",
    )
    ap.add_argument("--by-languages", action="store_true", help="medians per language pair")
    ap.add_argument("--map", action="store_true", help="also MAP / recall over all pairs")
    ap.add_argument("--rows", action="store_true", help="print every generated pair")
    add_quick(ap, books=60)
    args = parse_args(ap)
    t0 = time.monotonic()
    real = real_rows(args.data, args.real_cache)
    t_real = time.monotonic() - t0
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.generated
        if corpus is None:
            corpus = args.keep or Path(tmp) / "corpus"
            generate(args, corpus)
        gen, decision = generated_rows(corpus, args.map)
    if args.rows:
        for r in gen:
            print(
                f"{r['a']} {r['b']} {r['languages']} x={r['x']} y={r['y']} shared={r['shared']} "
                f"lcs={r['lcs']} z={r['z']:.1f} {r['relation']}"
            )
    print(table(real, gen))
    if args.by_languages:
        print("\n" + by_languages(real, gen))
    med = {
        k: (quantiles(real, k)[2], quantiles(gen, k)[2])
        for k in ("lcs_per_shared", "z_per_sqrt_shared", "z")
    }
    found_real = sum(r["relation"] == "TRANSLATION" for r in real)
    found_gen = sum(r["relation"] == "TRANSLATION" for r in gen)
    print(
        f"\ndecision recall: real {found_real}/{len(real)}, generated {found_gen}/{len(gen)}"
        f" (real side {t_real:.0f} s, total {time.monotonic() - t0:.0f} s)"
    )
    result = (
        f"RESULT style={args.style if args.generated is None else 'given'} "
        f"median_lcs_per_shared_real={med['lcs_per_shared'][0]:.3f} "
        f"median_lcs_per_shared_gen={med['lcs_per_shared'][1]:.3f} "
        f"median_z_per_sqrt_shared_real={med['z_per_sqrt_shared'][0]:.3f} "
        f"median_z_per_sqrt_shared_gen={med['z_per_sqrt_shared'][1]:.3f} "
        f"median_z_real={med['z'][0]:.1f} median_z_gen={med['z'][1]:.1f} "
        f"recall_real={found_real / max(1, len(real)):.3f} "
        f"recall_gen={found_gen / max(1, len(gen)):.3f}"
    )
    if decision is not None:
        per_pair = {
            k: [round(v, 3), decision["queries"].get(k, 0)] for k, v in decision["map"].items()
        }
        print("\nMAP per language pair [MAP, queries]: " + json.dumps(per_pair))
        print(
            f"translation recall of the decision: {decision['found']}/"
            f"{decision['translation_pairs']}"
        )
        print(
            f"cross-language pairs {decision['cross_language_pairs']}, unrelated called "
            f"TRANSLATION {decision['unrelated_called_translation']}"
        )
        result += (
            f" translation_map_mean_over_pairs_gen={decision['mean_map']:.3f}"
            f" translation_map_pooled_gen={decision['pooled_map']:.3f}"
            f" false_translations_gen={decision['unrelated_called_translation']}"
        )
    print(result)


if __name__ == "__main__":
    main()
