"""The class of every same-language truth pair of a corpus, through the dedup job's own pair
path (`bookdup.relate.relate`) but without an index: seconds instead of an index and a job.

The job verifies and classifies each candidate pair alone, so on a corpus whose books the
collection masks leave whole (every generated set and the real derived set measured in issue 29)
this is the job's class for every truth pair, candidate or not. ``--against`` an earlier
run's ``--out`` lists the pairs whose class moved: how a change to the signals or the
classifier was tried on ~5,000 pairs of 21 corpora before the job confirmed it (stop 52).

    python benchmarks/classes_alone.py CORPUS... [--out NEW.jsonl] [--against OLD.jsonl]

A corpus is a folder written by `bookdup generate` or `eval_variants.py` (``books.jsonl``,
``ground_truth.jsonl`` and the book files).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from bookdup.collection import BooksInMemory
from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures, extract_features
from bookdup.relate import relate
from readers import DEFAULT_LINES_PER_PAGE, ReadError, iter_books


class _NoLexicons:
    """Same-language pairs need no lexicon."""

    def targets(self, source: str) -> list[str]:
        return []

    def get(self, source: str, target: str) -> Dictionary | None:
        return None


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _features(corpus: Path, books: list[dict[str, Any]]) -> dict[str, BookFeatures]:
    """Every book's features (a JSONL file holds many books: each read once)."""
    files = sorted({corpus / b["file"] for b in books})
    out: dict[str, BookFeatures] = {}
    for book in iter_books(files, lines_per_page=DEFAULT_LINES_PER_PAGE):
        if isinstance(book, ReadError):
            raise SystemExit(str(book))
        out[book.id] = extract_features(book)
    return out


def classes(corpus: Path) -> list[dict[str, str]]:
    """(set, a, b, truth, got) for every same-language truth pair of ``corpus``."""
    books = _jsonl(corpus / "books.jsonl")
    language = {b["id"]: b["language"] for b in books}
    feats = _features(corpus, books)
    collection = BooksInMemory(feats.values())  # the index's books, as the job asks them
    rows = []
    for t in _jsonl(corpus / "ground_truth.jsonl"):
        a, b = t["a"], t["b"]
        if language[a] != language[b]:
            continue
        result = relate(feats[a], feats[b], _NoLexicons(), collection=collection)
        got = "UNRELATED" if result is None else result.relation
        rows.append({"set": corpus.name, "a": a, "b": b, "truth": t["relation"], "got": got})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, help="write every pair's class here (JSONL)")
    ap.add_argument("--against", type=Path, help="an earlier --out: list the pairs that moved")
    args = ap.parse_args()
    rows = [row for corpus in args.corpora for row in classes(corpus)]
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    total, right = Counter(), Counter()
    for r in rows:
        total[(r["set"], r["truth"])] += 1
        right[(r["set"], r["truth"])] += r["got"] == r["truth"]
    for name in sorted({r["set"] for r in rows}):
        per = sorted(k[1] for k in total if k[0] == name)
        print(name, " ".join(f"{c}:{right[(name, c)]}/{total[(name, c)]}" for c in per))
    gained = lost = 0
    if args.against:
        before = {(r["set"], r["a"], r["b"]): r["got"] for r in _jsonl(args.against)}
        for r in rows:
            old = before.get((r["set"], r["a"], r["b"]))
            if old is None or old == r["got"]:
                continue
            sign = "+" if r["got"] == r["truth"] else "-" if old == r["truth"] else " "
            gained, lost = gained + (sign == "+"), lost + (sign == "-")
            print(sign, r["set"], r["a"], r["b"], r["truth"], old, "->", r["got"])
    overlaps = [r for r in rows if r["truth"] == "OVERLAPPING_TEXT"]
    in_class = sum(r["got"] == r["truth"] for r in rows) / max(len(rows), 1)
    ot = sum(r["got"] == r["truth"] for r in overlaps) / max(len(overlaps), 1)
    print(
        f"RESULT pairs={len(rows)} in_class={in_class:.4f} overlap_recall={ot:.4f} "
        f"moved_right={gained} moved_wrong={lost}"
    )


if __name__ == "__main__":
    main()
