"""Which same-language candidate key survives 10 % OCR noise (issue 29, offline).

At 10 % character noise a word 3-gram is rarely intact in both of two related books, so their
winnowed keys barely meet and some overlaps are never candidates. For each key design this
replays the job's winnowed-key query offline on generated sets: every book's keys, their
document frequencies over the set, each book's query as ``store.candidates`` builds it (keys
held by ``winnow_min_df`` … ``winnow_max_df`` books, a consistent sample of
``winnow_query_terms``, the ``winnow_minimum`` of them shared), a hit kept when it ranks within
``max_candidates`` by shared keys (ties counted against it). A truth pair of one language is a
candidate when either book's query keeps the other. Printed per set and design: the keys a book
stores, hits per query, candidate pairs per book (and those no truth relation holds), and the
pairs found per class.

A design is (stream, n, window, minimum word length): ``prefix`` the normalised words' first
``bookdup.winnow.PREFIX`` letters, which the index job winnows today, ``word`` the whole words
(before stop 51), ``stem`` their Snowball stems, ``corr`` the stems a lexicon does not know
replaced by the one headword stem one edit away (``bookdup.pivot.rescued_stems``, the rescue of
noisy books' stems); words shorter than the minimum are left out before the n-grams.

    python benchmarks/noisy_keys.py SET [SET ...] [--design prefix --design "word 3"]
        [--param winnow_min_shared_fraction=0.04]

SET: a ``bookdup generate`` output folder. Needs the FreeDict lexicons (/usr/share/dictd).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_candidates import candidate_params

from bookdup.features import FeatureParams, _normalised_chunks
from bookdup.minhash import fmix64, word_hashes64
from bookdup.model import Book
from bookdup.pivot import PivotLexicons, rescued_stems
from bookdup.stemming import stem_hashes
from bookdup.uniquewords import encode_joined
from bookdup.winnow import PREFIX, KeyFrequencies, consistent_sample, winnow
from readers import iter_books
from readers.dictionaries import Dictionaries
from store.candidates import CandidateParams

#: name -> (stream, n, window, minimum word length)
DESIGNS: dict[str, tuple[str, int, int, int]] = {
    "prefix 5-grams, window 16 (today)": ("prefix", 5, 16, 0),
    "word 3-grams, window 16 (before stop 51)": ("word", 3, 16, 0),
    "stem 3-grams, window 16": ("stem", 3, 16, 0),
    "corrected 3-grams, window 16": ("corr", 3, 16, 0),
    "word 2-grams, window 16": ("word", 2, 16, 0),
    "corrected 2-grams, window 16": ("corr", 2, 16, 0),
    "word 3-grams of words >= 4, window 8": ("word", 3, 8, 4),
    "corrected 3-grams of words >= 4, window 8": ("corr", 3, 8, 4),
    "word 2-grams of words >= 4, window 8": ("word", 2, 8, 4),
    "stem 2-grams of words >= 4, window 8": ("stem", 2, 8, 4),
    "corrected 2-grams of words >= 4, window 8": ("corr", 2, 8, 4),
    "corrected 2-grams of words >= 4, window 12": ("corr", 2, 12, 4),
    "corrected 2-grams of words >= 5, window 6": ("corr", 2, 6, 5),
}
#: name -> (the two designs whose queries both run, hits kept of the second's query)
UNIONS = {
    f"3-grams + corrected 2-grams of words >= 4, window 8 ({cap} hits)": (
        "word 3-grams, window 16 (before stop 51)",
        "corrected 2-grams of words >= 4, window 8",
        cap,
    )
    for cap in (30, 15, 10)
}
Streams = dict[str, np.ndarray]
Pair = tuple[str, str, str]


def book_streams(book: Book, language: str, lexicons: PivotLexicons) -> Streams:
    """Per-position uint64 hashes of a book's words, stems and corrected stems, and lengths."""
    enc = encode_joined(_normalised_chunks(book.pages, FeatureParams().chunk_chars))
    vocab = list(enc.vocab)
    out = {
        "word": word_hashes64(vocab)[enc.ids],
        "prefix": word_hashes64([word[:PREFIX] for word in vocab])[enc.ids],
        "len": np.fromiter(map(len, vocab), np.int32, len(vocab))[enc.ids],
    }
    stems = stem_hashes(vocab, language)
    if stems is not None:
        corrected = rescued_stems(stems, vocab, language, lexicons)
        out["stem"] = fmix64(stems.astype(np.uint64) + np.uint64(1))[enc.ids]
        out["corr"] = fmix64(corrected.astype(np.uint64) + np.uint64(1))[enc.ids]
    return out


def read_set(corpus: Path, lexicons: PivotLexicons) -> dict[str, tuple[str, Streams]]:
    """book id -> (language, streams) for every book of a generated set."""
    with (corpus / "books.jsonl").open() as fh:
        language = {d["id"]: d["language"] for d in map(json.loads, fh)}
    out = {}
    for book in iter_books([corpus / "books"]):
        if isinstance(book, Book):
            out[book.id] = (language[book.id], book_streams(book, language[book.id], lexicons))
    return out


def truth_pairs(corpus: Path) -> list[Pair]:
    """(a, b, relation) of every truth pair within one language."""
    with (corpus / "ground_truth.jsonl").open() as fh:
        rows = [json.loads(line) for line in fh]
    return [
        (d["a"], d["b"], d["relation"])
        for d in rows
        if len(d.get("languages") or []) == 2 and d["languages"][0] == d["languages"][1]
    ]


def measure(
    books: dict[str, tuple[str, Streams]], design: tuple[str, int, int, int], p: CandidateParams
) -> tuple[float, float, dict[str, dict[str, int]]]:
    """(keys per book, hits per query, each book's kept hits -> their rank) of one design."""
    stream, n, window, min_length = design
    ids = sorted(books)
    keys = {}
    for b in ids:
        s = books[b][1]
        h = s.get(stream, s["word"])
        keys[b] = winnow(h[s["len"] >= min_length] if min_length else h, n, window)
    table = KeyFrequencies.from_books(keys[b] for b in ids)
    postings: dict[int, list[int]] = defaultdict(list)
    for i, b in enumerate(ids):
        for k in table.band(keys[b], p.winnow_min_df, p.winnow_max_df).tolist():
            postings[k].append(i)
    language = np.array([books[b][0] for b in ids])
    kept: dict[str, dict[str, int]] = {}
    n_hits = []
    for i, b in enumerate(ids):
        band = table.band(keys[b], p.winnow_min_df, p.winnow_max_df)
        picked = consistent_sample(band, p.winnow_query_terms)
        shared = np.zeros(len(ids), np.int64)
        for k in picked.tolist():
            shared[postings[k]] += 1
        shared[i] = 0
        shared[language != language[i]] = 0
        hits = np.flatnonzero(shared >= p.winnow_minimum(picked.size))
        n_hits.append(hits.size)
        ranks = {int(j): int(np.count_nonzero(shared[hits] >= shared[j])) for j in hits}
        kept[b] = {ids[j]: r for j, r in ranks.items() if r <= p.max_candidates}
    return float(np.mean([k.size for k in keys.values()])), float(np.mean(n_hits)), kept


def candidates(kept: dict[str, dict[str, int]]) -> set[tuple[str, str]]:
    """Book pairs either book's query keeps."""
    return {(min(a, b), max(a, b)) for a, hits in kept.items() for b in hits}


#: OVERLAPPING_TEXT pairs found per design over every set (the RESULT line's)
OVERLAPS_FOUND: dict[str, int] = defaultdict(int)


def report(
    name: str, keys: float, hits: float, cand: set[tuple[str, str]], truth: list[Pair], n_books: int
) -> None:
    """One line: the design's index and query figures and its pairs found per class."""
    related = {(min(a, b), max(a, b)) for a, b, _ in truth}
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a, b, relation in truth:
        by_class[relation][0] += (min(a, b), max(a, b)) in cand
        by_class[relation][1] += 1
    unrelated = len(cand - related) / n_books
    OVERLAPS_FOUND[name] += by_class["OVERLAPPING_TEXT"][0]
    classes = " ".join(f"{c[:4]} {f}/{t}" for c, (f, t) in sorted(by_class.items()))
    print(
        f"  {name:48} keys/book {keys:5.0f} hits/query {hits:5.1f} pairs/book"
        f" {len(cand) / n_books:5.2f} unrelated/book {unrelated:5.2f} | {classes}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", type=Path)
    parser.add_argument(
        "--design", action="append", default=[], help="only the designs naming this (repeatable)"
    )
    parser.add_argument(
        "--param", action="append", default=[], help="a CandidateParams field NAME=VALUE"
    )
    args = parser.parse_args()
    lexicons = PivotLexicons.from_lexicons(Dictionaries(True))
    params = candidate_params(args.param)
    designs = {
        name: d
        for name, d in DESIGNS.items()
        if not args.design or any(w in name for w in args.design)
    }
    unions = {n: u for n, u in UNIONS.items() if u[0] in designs and u[1] in designs}
    for corpus in args.sets:
        books = read_set(corpus, lexicons)
        truth = truth_pairs(corpus)
        print(corpus, flush=True)
        found = {}
        for name, design in designs.items():
            keys, hits, kept = measure(books, design, params)
            found[name] = (keys, hits, candidates(kept))
            report(name, keys, hits, found[name][2], truth, len(books))
        for name, (first, second, cap) in unions.items():
            (k1, h1, c1), (k2, h2, _) = found[first], found[second]
            kept = measure(books, DESIGNS[second], replace(params, max_candidates=cap))[2]
            c2 = candidates(kept)
            report(name, k1 + k2, h1 + h2, c1 | c2, truth, len(books))
            lifted = sorted(
                (a, b)
                for a, b, r in truth
                if r == "OVERLAPPING_TEXT" and (min(a, b), max(a, b)) in c2 - c1
            )
            print(f"    OVERLAPPING_TEXT found by the second only: {lifted}", flush=True)
    today = next(iter(designs))
    best = max(OVERLAPS_FOUND, key=lambda name: OVERLAPS_FOUND[name])
    print(
        f"RESULT sets={len(args.sets)} overlaps_found_today={OVERLAPS_FOUND[today]}"
        f" overlaps_found_best={OVERLAPS_FOUND[best]}"
    )


if __name__ == "__main__":
    main()
