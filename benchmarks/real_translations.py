"""Every cross-language pair of the 80 real Gutenberg books under the translation policy.

No Elasticsearch and no candidate retrieval: each pair goes through ``bookdup.relate`` with
the collection's boilerplate removed (as the dedup job does), so this measures the decision
alone — recall over the README's translations, and the false-positive rate over every
cross-language pair of unrelated books (distractors and different works) — and prints, per
true translation, the old score (TRANS-its) and the new one (order statistic z) in both
argument orders. Candidates are measured end to end by eval_gutenberg.py.

Run: ``python benchmarks/real_translations.py [--markdown out.md]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bookdup.boilerplate import drop_common_words, frequent_df
from bookdup.compare import compare_features
from bookdup.features import BookFeatures, extract_features
from bookdup.relate import plan_pair
from readers import iter_books
from readers.dictionaries import Dictionaries

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_gutenberg import GUTENBERG, parse_truth  # noqa: E402


def load(root: Path) -> dict[str, BookFeatures]:
    """Features of every book, with the collection's boilerplate stretches dropped."""
    feats = {}
    for book in iter_books(sorted(root.glob("*.txt"))):
        f = extract_features(book)  # type: ignore[arg-type]
        feats[f.book_id] = f
    df: Counter[int] = Counter()
    for f in feats.values():
        df.update(set(f.unique.hashes.tolist()))
    frequent = np.array(
        sorted(h for h, n in df.items() if n >= frequent_df(len(feats))), dtype=np.uint32
    )
    none = np.zeros(0, dtype=np.uint32)
    return {k: drop_common_words(f, none, frequent) for k, f in feats.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=GUTENBERG)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    t0 = time.monotonic()
    books = load(args.data)
    truth = parse_truth(args.data / "README.md")
    kinds = {frozenset((t.a, t.b)): t.type for t in truth}
    lexicons = Dictionaries(True)
    ids = sorted(books)
    rows, unrelated, z_unrelated = [], 0, []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            fa, fb = books[a], books[b]
            if fa.language == fb.language:
                continue
            plan = plan_pair(fa, fb, lexicons)
            kind = kinds.get(frozenset((a, b)), "unrelated")
            if plan is None:
                rows.append((a, b, kind, None, None))
                continue
            ab = compare_features(fa, fb, dictionary=plan.dictionary).to_dict()
            if kind == "unrelated":
                unrelated += 1
                z_unrelated.append((ab["order"] or {}).get("z", 0.0))
                if ab["relation"] == "TRANSLATION":
                    rows.append((a, b, kind, ab, None))
                continue
            ba = compare_features(fb, fa, dictionary=plan.dictionary).to_dict()
            rows.append((a, b, kind, ab, ba))
    lines = [
        "| pair | languages | type | TRANS-its | z (a,b) | z (b,a) | shared | LCS | decision |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    found = total = false = 0
    for a, b, kind, ab, ba in sorted(rows, key=lambda r: (r[2], r[0])):
        if ab is None:
            lines.append(f"| {a} ↔ {b} | | {kind} | | | | | | no lexicon |")
            continue
        za = (ab["order"] or {}).get("z", 0.0)
        zb = (ba["order"] or {}).get("z", 0.0) if ba else float("nan")
        if kind == "unrelated":
            false += 1
        else:
            total += 1
            found += ab["relation"] == "TRANSLATION"
        lines.append(
            f"| {a} ↔ {b} | {'-'.join(ab['languages'])} | {kind} | {ab['its']:.3f} | {za:.1f} "
            f"| {zb:.1f} | {ab['shared']} | {ab['lcs']} | {ab['relation']} |"
        )
    zu = np.array(z_unrelated)
    summary = (
        f"translations found {found}/{total} (recall {found / max(total, 1):.3f}); unrelated "
        f"cross-language pairs {unrelated}, called TRANSLATION {false} "
        f"(false-positive rate {false / max(unrelated, 1):.4f}); unrelated z max "
        f"{zu.max():.1f}, 99th percentile {np.percentile(zu, 99):.1f}; "
        f"{time.monotonic() - t0:.0f} s"
    )
    text = "\n".join(lines) + "\n\n" + summary + "\n"
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    print(text)
    print("RESULT " + summary)


if __name__ == "__main__":
    main()
