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

from bench_compare import prepared_mix, timed

from bookdup.compare import compare_features
from bookdup.features import BookFeatures
from bookdup.verify import Verification, verify_pair


def main() -> None:
    repeats, pairs, trans, en_de = prepared_mix(default_repeats=5)

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

    rate, out = timed(fast, pairs, repeats)
    base, ref = timed(full, pairs, repeats)
    pruned = sum(v is None for v in out) / len(pairs)
    accepted = sum(v is not None and v.its >= 0.72 for v in out)
    assert accepted == sum(v.its >= 0.72 for v in ref), "pruning changed a decision"
    print(f"verify, its 0.72: {rate:,.0f} pairs/s vs full path {base:,.0f} ({rate / base:.1f}x)")
    print(f"  pruned by the shared-word bound: {pruned:.3f}; accepted: {accepted}")
    survivors = [p for p, v in zip(pairs, out, strict=True) if v is not None]
    rejected = [p for p, v in zip(pairs, out, strict=True) if v is None]
    print(
        f"  cost split: pruned pairs alone {timed(fast, rejected, repeats)[0]:,.0f} pairs/s,"
        f" surviving pairs alone {timed(fast, survivors, repeats)[0]:,.0f} pairs/s"
    )

    t_rate, t_out = timed(fast_t, trans, repeats)
    t_base, t_ref = timed(full_t, trans, repeats)
    assert [v is not None and v.its >= 0.49 for v in t_out] == [v.its >= 0.49 for v in t_ref]
    t_pass = sum(v is not None and v.its >= 0.49 for v in t_out) / len(trans)
    print(
        f"translated en->de, TRANS-its 0.49: {t_rate:,.0f} pairs/s vs full path {t_base:,.0f} "
        f"({t_rate / t_base:.1f}x); passing (aligned) fraction {t_pass:.3f}"
    )
    c_rate, _ = timed(lambda a, b: compare_features(a, b, threshold=0.72), pairs, repeats)
    print(f"compare_features, its 0.72: {c_rate:,.0f} pairs/s")
    print(
        f"RESULT pairs_per_s={rate:.0f} translated_pairs_per_s={t_rate:.0f} "
        f"compare_pairs_per_s={c_rate:.0f} pruned_fraction={pruned:.3f}"
    )


if __name__ == "__main__":
    main()
