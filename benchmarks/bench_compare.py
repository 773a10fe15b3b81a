"""Throughput of compare_features (verification, signals, classification) as the dedup job runs it.

Books: the 80 Gutenberg books of /work/shared/data/gutenberg, features extracted once. As in the
dedup job, words whose hash is unique in more than ``--max-df`` of the books (the Project
Gutenberg licence and header: ~450 words here) are dropped from every unique-word sequence
first (``bookdup.boilerplate.drop_common_words``); without that every pair shares the licence.

Candidates (one core; per-book caches warmed first, as when a book meets many candidates):
* every pair of distinct books of one language: mostly unrelated books sharing a few words, plus
  the corpus's real editions, volumes and abridgements;
* noisy copies (5% of a book's unique words dropped, 5% OCR-garbled, local swaps) and partial
  copies (a 30-70% slice of a book followed by another book) of the English books;
* translated: every English book against every German book with FreeDict eng-deu.

The fast path passes ``threshold`` (DUPNIQ-its 0.72; TRANS-its 0.53, the lower edge of the
classifier's TRANSLATION ramp, so no translation can be lost) and gets a cheap UNRELATED for
pairs below it. The baseline, run in the same process, is the full path (``threshold=None``:
alignment, signals and classification for every pair). Medians over repeats.

    python benchmarks/bench_compare.py [--repeats 3] [--max-df 0.2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bookdup.boilerplate import drop_common_words
from bookdup.compare import compare_features
from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.uniquewords import UniqueWords
from readers.dictionaries import load_dictionary

GUTENBERG = Path(__file__).resolve().parents[2] / "shared" / "data" / "gutenberg"
SAME_THRESHOLD = 0.72
TRANS_THRESHOLD = 0.53

Pair = tuple[BookFeatures, BookFeatures]


def load_features() -> list[BookFeatures]:
    out = []
    for line in (GUTENBERG / "manifest.jsonl").read_text().splitlines():
        m = json.loads(line)
        pages = (GUTENBERG / m["file"]).read_text(encoding="utf-8").split("\f")
        out.append(extract_features(Book(m["id"], pages, language=m["language"])))
    return out


def strip_boilerplate(books: list[BookFeatures], max_df: float) -> tuple[list[BookFeatures], int]:
    """The dedup job's max-df cut computed over these books: (stripped books, words dropped)."""
    df: Counter[int] = Counter()
    for f in books:
        df.update(np.unique(f.unique.hashes).tolist())
    common = np.array(sorted(h for h, c in df.items() if c > max_df * len(books)), np.uint32)
    return [drop_common_words(f, common) for f in books], int(common.size)


def _subset(f: BookFeatures, suffix: str, words, hashes, pages) -> BookFeatures:
    return dataclasses.replace(
        f, book_id=f.book_id + suffix, unique=UniqueWords(list(words), hashes, pages)
    )


def noisy_copy(f: BookFeatures, rng: np.random.Generator) -> BookFeatures:
    u = f.unique
    n = len(u.hashes)
    keep = rng.random(n) >= 0.05
    hashes = u.hashes.copy()
    garbled = rng.random(n) < 0.05
    hashes[garbled] = rng.integers(0, 2**32, int(garbled.sum()), dtype=np.uint32)
    order = np.argsort(np.arange(n, dtype=np.float64) + rng.normal(0, 0.6, n))  # local swaps
    idx = order[keep[order]]
    _, first = np.unique(hashes[idx], return_index=True)  # keep items distinct
    idx = idx[np.sort(first)]
    return _subset(f, "~noisy", [u.words[i] for i in idx], hashes[idx], u.pages[idx])


def partial(f: BookFeatures, other: BookFeatures, rng: np.random.Generator) -> BookFeatures:
    u, o = f.unique, other.unique
    n = len(u.hashes)
    size = int(n * rng.uniform(0.3, 0.7))
    start = int(rng.integers(0, n - size + 1))
    hashes = np.concatenate([u.hashes[start : start + size], o.hashes])
    _, first = np.unique(hashes, return_index=True)
    idx = np.sort(first)
    words = u.words[start : start + size] + o.words
    pages = np.concatenate([u.pages[start : start + size], o.pages + int(u.pages.max()) + 1])
    return _subset(f, "~part", [words[i] for i in idx], hashes[idx], pages[idx])


def candidate_mix(books: list[BookFeatures], seed: int) -> tuple[list[Pair], list[Pair], str]:
    """(same-language candidates shuffled, translated en->de candidates, description)."""
    rng = np.random.default_rng(seed)
    by_lang: dict[str, list[BookFeatures]] = {}
    for f in books:
        by_lang.setdefault(f.language, []).append(f)
    same = [(a, b) for bs in by_lang.values() for i, a in enumerate(bs) for b in bs[i + 1 :]]
    en = by_lang["en"]
    dups = [(f, noisy_copy(f, rng)) for f in en]
    parts = [(f, partial(f, en[(i + 7) % len(en)], rng)) for i, f in enumerate(en)]
    pairs = same + dups + parts
    rng.shuffle(pairs)
    trans = [(a, b) for a in en for b in by_lang["de"]]
    text = (
        f"{len(same)} same-language pairs of corpus books, {len(dups)} noisy copies, "
        f"{len(parts)} partial copies; {len(trans)} translated en->de pairs"
    )
    return pairs, trans, text


def timed(fn: Callable[[Any, Any], Any], pairs: list[Pair], repeats: int) -> tuple[float, list]:
    """pairs/s (median over repeats, caches warmed by a first pass) and the last outputs."""
    out = [fn(a, b) for a, b in pairs]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = [fn(a, b) for a, b in pairs]
        times.append(time.perf_counter() - t)
    return len(pairs) / statistics.median(times), out


def prepared_mix(default_repeats: int) -> tuple[int, list[Pair], list[Pair], Dictionary]:
    """Command-line options, then the boilerplate-stripped candidate mix both benchmarks time."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=default_repeats)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-df", type=float, default=0.2)
    args = ap.parse_args()
    books, dropped = strip_boilerplate(load_features(), args.max_df)
    pairs, trans, text = candidate_mix(books, args.seed)
    print(f"mix: {text}; {dropped} words in > {args.max_df:.0%} of books dropped")
    return args.repeats, pairs, trans, load_dictionary("en", "de")


def main() -> None:
    repeats, pairs, trans, en_de = prepared_mix(default_repeats=3)

    def fast(a: BookFeatures, b: BookFeatures) -> dict:
        return compare_features(a, b, threshold=SAME_THRESHOLD).to_dict()

    def full(a: BookFeatures, b: BookFeatures) -> dict:
        return compare_features(a, b).to_dict()

    def fast_t(a: BookFeatures, b: BookFeatures) -> dict:
        return compare_features(a, b, dictionary=en_de, threshold=TRANS_THRESHOLD).to_dict()

    def full_t(a: BookFeatures, b: BookFeatures) -> dict:
        return compare_features(a, b, dictionary=en_de).to_dict()

    rate, out = timed(fast, pairs, repeats)
    base, ref = timed(full, pairs, repeats)
    t_rate, t_out = timed(fast_t, trans, repeats)
    t_base, t_ref = timed(full_t, trans, repeats)
    for o, r in zip(out + t_out, ref + t_ref, strict=True):
        assert o["pruned"] or o == r, "an accepted pair differs from the full path"
    rejected = sum(o["pruned"] for o in out) / len(out)
    related = [r for r in ref if r["relation"] != "UNRELATED"]
    lost = [r for o, r in zip(out, ref, strict=True) if o["pruned"] and r in related]
    t_lost = sum(
        o["pruned"] and r["relation"] != "UNRELATED" for o, r in zip(t_out, t_ref, strict=True)
    )
    print(
        f"same-language, its {SAME_THRESHOLD}: {rate:,.0f} pairs/s vs full path {base:,.0f} "
        f"({rate / base:.1f}x); below threshold {rejected:.3f}"
    )
    print(
        f"  full path relates {len(related)} pairs; {len(lost)} of them fall below the threshold"
        + (
            f" (its {min(r['its'] for r in lost):.3f}-{max(r['its'] for r in lost):.3f}, "
            f"{Counter(r['relation'] for r in lost)})"
            if lost
            else ""
        )
    )
    print(
        f"translated, TRANS-its {TRANS_THRESHOLD}: {t_rate:,.0f} pairs/s vs full path "
        f"{t_base:,.0f} ({t_rate / t_base:.1f}x); translations lost: {t_lost}"
    )
    print(
        f"RESULT compare_pairs_per_s={rate:.0f} translated_compare_pairs_per_s={t_rate:.0f} "
        f"baseline_ratio={rate / base:.1f}"
    )


if __name__ == "__main__":
    main()
