"""Throughput of pair verification on a realistic candidate mix built from real books.

Candidates (``bench_compare.candidate_mix``; one core, per-book caches warmed first, as when a
book meets many candidates): every pair of distinct Gutenberg books of one language (mostly
unrelated books sharing a few words, plus the corpus's real editions), noisy and partial copies
of the English books, and every English book against every German book with FreeDict eng-deu.
Words unique in more than ``--max-df`` of the books (the Project Gutenberg licence) are dropped
from every sequence first, as the dedup job does (``bookdup.boilerplate.drop_common_words``).

Figures, medians over repeats, each against a baseline run in the same process:
* verify at DUPNIQ-its 0.72 vs the full path (threshold 0, alignment built for every pair);
* translated at TRANS-its 0.49 (the paper's threshold; |LCS| first, alignment only for pairs
  that pass) vs the full path;
* compare_features with threshold 0.72 (what the dedup job needs per pair).

    python benchmarks/bench_verify.py [--repeats 5] [--max-df 0.2]
"""

from __future__ import annotations

import argparse

from bench_compare import candidate_mix, load_features, strip_boilerplate, timed

from bookdup.compare import compare_features
from bookdup.dictionary import load_dictionary
from bookdup.features import BookFeatures
from bookdup.verify import Verification, verify_pair


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-df", type=float, default=0.2)
    args = ap.parse_args()
    books, dropped = strip_boilerplate(load_features(), args.max_df)
    pairs, trans, text = candidate_mix(books, args.seed)
    print(f"mix: {text}; {dropped} words in > {args.max_df:.0%} of books dropped")
    en_de = load_dictionary("en", "de")

    def fast(a: BookFeatures, b: BookFeatures) -> Verification | None:
        return verify_pair(a, b, threshold=0.72)

    def full(a: BookFeatures, b: BookFeatures) -> Verification:
        v = verify_pair(a, b, threshold=0.0)
        v.alignment  # noqa: B018 - the baseline builds every alignment
        return v

    def fast_t(a: BookFeatures, b: BookFeatures) -> Verification | None:
        v = verify_pair(a, b, threshold=0.49, dictionary=en_de)
        if v is not None and v.its >= 0.49:
            v.alignment  # noqa: B018 - accepted pairs go on to signals
        return v

    def full_t(a: BookFeatures, b: BookFeatures) -> Verification:
        v = verify_pair(a, b, threshold=0.0, dictionary=en_de)
        v.alignment  # noqa: B018
        return v

    rate, out = timed(fast, pairs, args.repeats)
    base, ref = timed(full, pairs, args.repeats)
    pruned = sum(v is None for v in out) / len(pairs)
    accepted = sum(v is not None and v.its >= 0.72 for v in out)
    assert accepted == sum(v.its >= 0.72 for v in ref), "pruning changed a decision"
    print(f"verify, its 0.72: {rate:,.0f} pairs/s vs full path {base:,.0f} ({rate / base:.1f}x)")
    print(f"  pruned by the shared-word bound: {pruned:.3f}; accepted: {accepted}")
    survivors = [p for p, v in zip(pairs, out, strict=True) if v is not None]
    rejected = [p for p, v in zip(pairs, out, strict=True) if v is None]
    print(
        f"  cost split: pruned pairs alone {timed(fast, rejected, args.repeats)[0]:,.0f} pairs/s,"
        f" surviving pairs alone {timed(fast, survivors, args.repeats)[0]:,.0f} pairs/s"
    )

    t_rate, t_out = timed(fast_t, trans, args.repeats)
    t_base, t_ref = timed(full_t, trans, args.repeats)
    assert [v is not None and v.its >= 0.49 for v in t_out] == [v.its >= 0.49 for v in t_ref]
    t_pass = sum(v is not None and v.its >= 0.49 for v in t_out) / len(trans)
    print(
        f"translated en->de, TRANS-its 0.49: {t_rate:,.0f} pairs/s vs full path {t_base:,.0f} "
        f"({t_rate / t_base:.1f}x); passing (aligned) fraction {t_pass:.3f}"
    )
    c_rate, _ = timed(lambda a, b: compare_features(a, b, threshold=0.72), pairs, args.repeats)
    print(f"compare_features, its 0.72: {c_rate:,.0f} pairs/s")
    print(
        f"RESULT pairs_per_s={rate:.0f} translated_pairs_per_s={t_rate:.0f} "
        f"compare_pairs_per_s={c_rate:.0f} pruned_fraction={pruned:.3f}"
    )


if __name__ == "__main__":
    main()
