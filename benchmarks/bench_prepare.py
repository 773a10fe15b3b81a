"""Preparing a sequence for verification (``verify._prepare``) on the real books, against the
numpy definition it replaced (issue 28).

Sequences: every Gutenberg book's unique words, and every English book translated (stems
through FreeDict eng-deu, as a translated pair sees them), whole and cut to 3,000 items (the
size of a generated corpus's books). Times per sequence, medians over repeats, one core: the
sort and grouping, the bitset levels, and the whole ``_prepare`` (translation included) with
its cache emptied before each call (the numpy steps patched in for "before").

    python benchmarks/bench_prepare.py [--repeats 7]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from bench_compare import load_features
from timing import per_item

from bookdup import verify as V
from bookdup.dictionary import Dictionary
from bookdup.sortkernel import sorted_groups
from bookdup.translate import translate_with_source
from readers.dictionaries import load_dictionary


def numpy_groups(hashes: np.ndarray) -> tuple[np.ndarray, ...]:
    """The stable argsort and grouping as ``_prepare`` computed them before."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    keep = np.ones(ordered.size, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return order, ordered[keep], np.append(np.flatnonzero(keep), hashes.size), order[keep]


def numpy_levels(values: np.ndarray) -> tuple[int, ...]:
    """The bitset levels as ``_bitset_levels`` computed them before."""
    counts = np.bincount(values & (V._BITS - 1), minlength=V._BITS)
    return tuple(
        int.from_bytes(np.packbits(counts > k, bitorder="little").tobytes(), "little")
        for k in range(int(counts.max(initial=0)))
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    books = load_features()
    en_de = load_dictionary("en", "de")
    de = next(f for f in books if f.language == "de")
    units: list[tuple[V.UniqueSequence, Dictionary | None]] = []
    seqs: list[np.ndarray] = []
    for f in books:
        units.append((f.unique, None))
        seqs.append(np.asarray(f.unique.hashes, dtype=np.uint32))
        if f.language == "en":
            ua, _, lexicon = V._translated_view(f.unique, de.unique, en_de)
            assert lexicon is not None
            units.append((ua, lexicon))
            seqs.append(translate_with_source(ua.words, ua.pages, lexicon, hashes=ua.hashes)[0])
    for old, new in zip(map(numpy_groups, seqs), map(sorted_groups, seqs), strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(old, new, strict=True))
    short = [s[:3000] for s in seqs]
    result: dict[str, float] = {}
    for name, group in (("whole", seqs), ("first 3,000 items", short)):
        values = [np.unique(s) for s in group]
        assert [numpy_levels(v) for v in values] == [V._bitset_levels(v) for v in values]
        sizes = np.array([s.size for s in group])
        print(f"{name}: {len(group)} sequences, mean {sizes.mean():,.0f} items")
        before = per_item(numpy_groups, group, args.repeats)
        after = per_item(sorted_groups, group, args.repeats)
        print(f"  sort and group: {before:,.1f} -> {after:,.1f} µs ({before / after:.1f}x)")
        result[f"sort_speedup_{name.split()[0]}_x"] = before / after
        before = per_item(numpy_levels, values, args.repeats)
        after = per_item(V._bitset_levels, values, args.repeats)
        print(f"  bitset levels:  {before:,.1f} -> {after:,.1f} µs ({before / after:.1f}x)")

    def prepare(unit: tuple[Any, Any]) -> None:
        V._CACHE.items.clear()
        V._prepare(*unit)

    after = per_item(prepare, units, args.repeats)
    compiled = V.sorted_groups, V._bitset_levels
    V.sorted_groups, V._bitset_levels = numpy_groups, numpy_levels  # type: ignore[assignment]
    before = per_item(prepare, units, args.repeats)
    V.sorted_groups, V._bitset_levels = compiled
    print(f"whole _prepare, cache emptied: {before:,.1f} -> {after:,.1f} µs per sequence")
    result |= {"prepare_numpy_us": before, "prepare_compiled_us": after}
    print("RESULT " + " ".join(f"{k}={v:.2f}" for k, v in result.items()))


if __name__ == "__main__":
    main()
