"""Pair verification as the dedup job runs it, on a candidate mix built from real books.

Candidates (``bench_compare.candidate_mix``; one core, per-book caches warmed first, as when a
book meets many candidates): every pair of distinct Gutenberg books of one language (mostly
unrelated books sharing a few words, plus the corpus's real editions), noisy and partial copies
of the English books, and every English book against every German book with FreeDict eng-deu.
Words unique in more than ``--max-df`` of the books (the Project Gutenberg licence) are dropped
from every sequence first, as the dedup job does (``bookdup.boilerplate.drop_common_words``).

Each pair is verified under the job's own plan (``bookdup.relate.plan_pair``: its floors, the
order statistic calibrated only as far as the decision needs; a passing pair's alignment built,
as the classifier reads it), and, for translated pairs, under the plan of a screened candidate
(``PairPlan.screened``: the whole-pair order screen first). The baseline, run in the same
process, is the full path: no floor, the null fully calibrated, every alignment built. Medians
over repeats; the run fails if a plan drops a pair the full path puts over a floor.

    python benchmarks/bench_verify.py [--repeats 5] [--max-df 0.2]
"""

from __future__ import annotations

from bench_compare import Pair, prepared_mix, timed

from bookdup.compare import verify_features
from bookdup.features import BookFeatures
from bookdup.relate import PairPlan, VerifiedPair, plan_pair, verify_planned
from bookdup.verify import Verification
from readers.dictionaries import Dictionaries


def over_floor(v: Verification, plan: PairPlan) -> bool:
    """Whether the full path's evidence reaches one of the plan's floors."""
    z = v.order.z if v.order is not None else float("-inf")
    return (plan.threshold is not None and v.its >= plan.threshold) or (
        plan.min_z is not None and z >= plan.min_z
    )


def measure(name: str, pairs: list[Pair], plans: list[PairPlan], repeats: int) -> float:
    """pairs/s under ``plans`` (one a pair) against the full path; prints the comparison."""
    by_pair = {(a.book_id, b.book_id): p for (a, b), p in zip(pairs, plans, strict=True)}

    def planned(a: BookFeatures, b: BookFeatures) -> VerifiedPair | None:
        verified = verify_planned(a, b, by_pair[a.book_id, b.book_id])
        if verified is not None:
            verified.verification.alignment  # noqa: B018 - what the classifier reads next
        return verified

    def full(a: BookFeatures, b: BookFeatures) -> Verification:
        plan = by_pair[a.book_id, b.book_id]
        v = verify_features(a, b, dictionary=plan.dictionary)
        assert v is not None, "no floor: every pair is verified"
        v.alignment  # noqa: B018 - the baseline builds every alignment
        return v

    rate, out = timed(planned, pairs, repeats)
    base, ref = timed(full, pairs, repeats)
    lost = [
        (a.book_id, b.book_id)
        for (a, b), o, r, p in zip(pairs, out, ref, plans, strict=True)
        if o is None and p.screen_z is None and over_floor(r, p)
    ]
    assert not lost, f"{name}: the plan dropped pairs over its floor: {lost[:5]}"
    dropped = sum(o is None for o in out) / len(pairs)
    print(
        f"{name}: {rate:,.0f} pairs/s vs full path {base:,.0f} ({rate / base:.1f}x); "
        f"{len(pairs)} pairs, dropped under the floors {dropped:.3f}"
    )
    return rate


def main() -> None:
    repeats, pairs, trans, _ = prepared_mix(default_repeats=5)
    lexicons = Dictionaries(enabled=True)

    def plans(mix: list[Pair]) -> list[PairPlan]:
        out = [plan_pair(a, b, lexicons) for a, b in mix]
        assert all(p is not None for p in out), "a pair of the mix has no lexicon"
        return [p for p in out if p is not None]

    rate = measure("same language", pairs, plans(pairs), repeats)
    translated = plans(trans)
    t_rate = measure("translated en-de, verified candidates", trans, translated, repeats)
    screened = [p.screened() for p in translated]
    s_rate = measure("translated en-de, screened candidates", trans, screened, repeats)
    print(
        f"RESULT pairs_per_s={rate:.0f} translated_pairs_per_s={t_rate:.0f} "
        f"screened_translated_pairs_per_s={s_rate:.0f}"
    )


if __name__ == "__main__":
    main()
