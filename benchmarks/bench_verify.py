"""Throughput of pair verification on a realistic candidate mix built from real books.

Candidates (one core, per-book preprocessing warmed first, as when a book meets many candidates):
* unrelated pairs: every pair of distinct Gutenberg books of one language; they share tens to
  hundreds of unique words (names, the Gutenberg licence boilerplate) — what term-query
  candidates look like;
* true duplicates: a book against a noisy copy (5% of its unique words dropped, 5% replaced by
  OCR-garbled words, a few swapped locally);
* partial duplicates: a book against a 30-70% contiguous slice of it followed by another book.
Translated: every English book against every German book with FreeDict eng-deu at TRANS-its 0.49.

Prints pairs/s with pruning at DUPNIQ-its 0.72, without pruning (threshold 0: every pair
aligned), the pruned fraction, and the translated rate; medians over repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bookdup.dictionary import load_dictionary
from bookdup.text import normalise_pages
from bookdup.uniquewords import UniqueWords, unique_words
from bookdup.verify import verify_pair

GUTENBERG = Path(__file__).resolve().parents[2] / "shared" / "data" / "gutenberg"


@dataclass
class Book:
    unique: UniqueWords


def load_books() -> dict[str, tuple[str, Book]]:
    books = {}
    for line in (GUTENBERG / "manifest.jsonl").read_text().splitlines():
        m = json.loads(line)
        text = (GUTENBERG / m["file"]).read_text(encoding="utf-8")
        books[m["id"]] = (m["language"], Book(unique_words(normalise_pages(text.split("\f")))))
    return books


def noisy_copy(u: UniqueWords, rng: np.random.Generator) -> Book:
    n = len(u.hashes)
    keep = rng.random(n) >= 0.05
    hashes = u.hashes.copy()
    garbled = rng.random(n) < 0.05
    hashes[garbled] = rng.integers(0, 2**32, int(garbled.sum()), dtype=np.uint32)
    order = np.arange(n, dtype=np.float64) + rng.normal(0, 0.6, n)  # local swaps
    idx = np.argsort(order)[keep[np.argsort(order)]]
    hashes, first = np.unique(hashes[idx], return_index=True)  # keep items distinct
    idx = idx[np.sort(first)]
    return Book(UniqueWords([u.words[i] for i in idx], u.hashes[idx], u.pages[idx]))


def partial(u: UniqueWords, other: UniqueWords, rng: np.random.Generator) -> Book:
    n = len(u.hashes)
    size = int(n * rng.uniform(0.3, 0.7))
    start = int(rng.integers(0, n - size + 1))
    hashes = np.concatenate([u.hashes[start : start + size], other.hashes])
    _, first = np.unique(hashes, return_index=True)
    idx = np.sort(first)
    words = u.words[start : start + size] + other.words
    pages = np.concatenate([u.pages[start : start + size], other.pages])
    return Book(UniqueWords([words[i] for i in idx], hashes[idx], pages[idx]))


def rate(pairs, repeats: int, **kw) -> tuple[float, list]:
    for fa, fb in pairs:  # warm per-book caches
        verify_pair(fa, fb, **kw)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = [verify_pair(fa, fb, **kw) for fa, fb in pairs]
        times.append(time.perf_counter() - t)
    return len(pairs) / statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    books = load_books()
    by_lang: dict[str, list[Book]] = {}
    for lang, b in books.values():
        by_lang.setdefault(lang, []).append(b)
    unrelated = [(a, b) for bs in by_lang.values() for i, a in enumerate(bs) for b in bs[i + 1 :]]
    english = by_lang["en"]
    dups = [(b, noisy_copy(b.unique, rng)) for b in english]
    parts = [
        (b, partial(b.unique, english[(i + 7) % len(english)].unique, rng))
        for i, b in enumerate(english)
    ]
    pairs = unrelated + dups + parts
    rng.shuffle(pairs)
    pruned_rate, out = rate(pairs, args.repeats, threshold=0.72)
    full_rate, full = rate(pairs, args.repeats, threshold=0.0)
    pruned = sum(v is None for v in out) / len(pairs)
    accepted = sum(v is not None and v.its >= 0.72 for v in out)
    assert accepted == sum(v.its >= 0.72 for v in full), "pruning changed a decision"
    print(
        f"mix: {len(unrelated)} same-language pairs of distinct books, {len(dups)} noisy copies, "
        f"{len(parts)} partial copies; accepted at its 0.72: {accepted}"
    )
    print(f"pruned (its 0.72): {pruned_rate:,.0f} pairs/s; pruned fraction {pruned:.3f}")
    print(f"unpruned: {full_rate:,.0f} pairs/s (ratio {pruned_rate / full_rate:.1f}x)")
    rejected = [p for p, v in zip(pairs, out, strict=True) if v is None]
    survivors = [p for p, v in zip(pairs, out, strict=True) if v is not None]
    print(
        f"cost split: pruned pairs alone {rate(rejected, args.repeats, threshold=0.72)[0]:,.0f}"
        f" pairs/s, surviving pairs alone {rate(survivors, args.repeats, threshold=0.72)[0]:,.0f}"
        " pairs/s"
    )

    en_de = load_dictionary("en", "de")
    trans = [(a, b) for a in english for b in by_lang["de"]]
    trans_rate, tout = rate(trans, args.repeats, threshold=0.49, dictionary=en_de)
    tpruned = sum(v is None for v in tout) / len(trans)
    print(
        f"translated en->de ({len(trans)} pairs, TRANS-its 0.49): {trans_rate:,.0f} pairs/s; "
        f"pruned fraction {tpruned:.3f}"
    )
    print(
        f"RESULT pairs_per_s={pruned_rate:.0f} unpruned_pairs_per_s={full_rate:.0f} "
        f"pruned_fraction={pruned:.3f} translated_pairs_per_s={trans_rate:.0f}"
    )


if __name__ == "__main__":
    main()
