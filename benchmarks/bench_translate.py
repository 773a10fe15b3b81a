"""Translating a sequence (``translate.translate_with_source``) on the real books, against the
numpy definition it replaced (issue 28).

Sequences: every English Gutenberg book's stems through FreeDict eng-deu's stem lexicon (as a
translated pair's verification sees them: hashes only) and its words through eng-deu (words
given, each hash hit confirmed on the word). Times per sequence, medians over repeats, one
core; the outputs are checked equal first.

    python benchmarks/bench_translate.py [--repeats 7]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
from bench_compare import load_features
from timing import per_item

from bookdup import translate as T
from bookdup.dictionary import Dictionary
from bookdup.stemming import stem_lexicon
from bookdup.uniquewords import hash_words
from readers.dictionaries import load_dictionary

Call = tuple[Sequence[str] | None, np.ndarray, np.ndarray | None, Dictionary]


def numpy_translate(
    words: Sequence[str] | None,
    pages: np.ndarray,
    dictionary: Dictionary,
    keep_untranslated: bool = True,
    *,
    hashes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``translate_with_source`` as numpy computed it before."""
    lex = T.hashed_lexicon(dictionary)
    if hashes is None:
        assert words is not None
        hashes = hash_words(words)
    hashes = np.asarray(hashes, dtype=np.uint32)
    pages = np.asarray(pages, dtype=np.int32)
    if lex.keys.size == 0 or hashes.size == 0:
        every = np.arange(hashes.size, dtype=np.int64)
        if keep_untranslated:
            return hashes, pages, every
        return hashes[:0], pages[:0], every[:0]
    slot = np.minimum(np.searchsorted(lex.keys, hashes), lex.keys.size - 1)
    hit = lex.keys[slot] == hashes
    if words is not None:
        candidates = np.flatnonzero(hit)
        entries = lex.entries[slot[candidates]].tolist()
        pairs = zip(entries, candidates.tolist(), strict=True)
        same = [dictionary.words[e] == words[i] for e, i in pairs]
        hit[candidates[~np.asarray(same, dtype=bool)]] = False
    n = np.where(hit, lex.starts[slot + 1] - lex.starts[slot], 1 if keep_untranslated else 0)
    source = np.repeat(np.arange(hashes.size), n)
    within = np.arange(source.size) - np.repeat(np.cumsum(n) - n, n)
    translated = hit[source]
    target = np.where(translated, lex.starts[slot][source] + within, 0)
    out = np.where(translated, lex.targets[target], hashes[source]).astype(np.uint32)
    return out, pages[source], source.astype(np.int64)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    reps = ap.parse_args().repeats
    en_de = load_dictionary("en", "de")
    stems = stem_lexicon(en_de)
    assert stems is not None
    books = [f for f in load_features() if f.language == "en"]
    kinds: dict[str, list[Call]] = {
        "stems": [(None, f.unique.pages, f.unique.stems, stems) for f in books],
        "words": [(f.unique.words, f.unique.pages, f.unique.hashes, en_de) for f in books],
    }
    T.warm()
    result: dict[str, float] = {}
    for name, calls in kinds.items():
        for c in calls:
            want = numpy_translate(c[0], c[1], c[3], hashes=c[2])
            got = T.translate_with_source(c[0], c[1], c[3], hashes=c[2])
            assert all(
                a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(want, got, strict=True)
            )
        sizes = np.array([c[1].size for c in calls])
        print(f"{name}: {len(calls)} sequences, mean {sizes.mean():,.0f} items")
        old = per_item(lambda c: numpy_translate(c[0], c[1], c[3], hashes=c[2]), calls, reps)
        new = per_item(lambda c: T.translate_with_source(*c[:2], c[3], hashes=c[2]), calls, reps)
        print(f"  translate: {old:,.1f} -> {new:,.1f} µs ({old / new:.2f}x)")
        result |= {f"{name}_numpy_us": old, f"{name}_new_us": new}
    print("RESULT " + " ".join(f"{k}={v:.2f}" for k, v in result.items()))


if __name__ == "__main__":
    main()
