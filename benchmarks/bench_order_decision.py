"""The sequential order decision against the full calibration on the 80 real Gutenberg books.

Every pair of the books (``--cross``: only the cross-language ones) goes through the
verification policy (``bookdup.relate``) twice in the same run: with the full calibration
(8 shuffles and every window for each pair that might reach the floor, ``max_z=None``) and
with the sequential decision (``PairPlan.max_z``), each followed by the classification of
the pairs that pass. Prints the verification time of both, how many decisions differ (class
and direction; must be 0) and, with ``--profile FILE``, a cProfile of the fast pass.

Run: ``python benchmarks/bench_order_decision.py [--cross] [--profile out.txt]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_gutenberg import GUTENBERG  # noqa: E402
from real_translations import load  # noqa: E402

from bookdup.features import BookFeatures  # noqa: E402
from bookdup.relate import PairPlan, classify_verified, plan_pair, verify_planned  # noqa: E402
from readers.dictionaries import Dictionaries  # noqa: E402

Decision = tuple[str, str | None]


def pairs_of(
    books: dict[str, BookFeatures], lexicons: Dictionaries, cross_only: bool
) -> list[tuple[BookFeatures, BookFeatures, PairPlan]]:
    """Every pair of distinct books with a plan (both orders are decided alike)."""
    ids = sorted(books)
    out = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            fa, fb = books[a], books[b]
            if cross_only and fa.language == fb.language:
                continue
            plan = plan_pair(fa, fb, lexicons)
            if plan is not None:
                out.append((fa, fb, plan))
    return out


def decide(
    pairs: list[tuple[BookFeatures, BookFeatures, PairPlan]], full: bool
) -> tuple[list[Decision], list[Any], float]:
    """(class, direction) of every pair, its order evidence, and the verification seconds."""
    decisions, orders, spent = [], [], 0.0
    for fa, fb, plan in pairs:
        if full:
            plan = replace(plan, max_z=None)
        t0 = time.perf_counter()
        verified = verify_planned(fa, fb, plan)
        spent += time.perf_counter() - t0
        if verified is None:
            decisions.append(("UNRELATED", None))
            orders.append(None)
            continue
        result = classify_verified(verified)
        decisions.append((result.relation, result.direction))
        orders.append(result.to_dict()["order"])
    return decisions, orders, spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=GUTENBERG)
    ap.add_argument("--cross", action="store_true", help="cross-language pairs only")
    ap.add_argument("--profile", type=Path, help="write a cProfile of the fast pass here")
    args = ap.parse_args()
    books = load(args.data)
    pairs = pairs_of(books, Dictionaries(True), args.cross)
    decide(pairs[:50], False)  # warm the lexicons and stem tables
    old, old_orders, t_old = decide(pairs, True)
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    new, new_orders, t_new = decide(pairs, False)
    if profiler:
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        args.profile.write_text(out.getvalue(), encoding="utf-8")
    differ = [
        (p[0].book_id, p[1].book_id, o, n, oo, no)
        for p, o, n, oo, no in zip(pairs, old, new, old_orders, new_orders, strict=True)
        if o != n
    ]
    for row in differ:
        print("DIFFER", *row)
    related = sum(d[0] != "UNRELATED" for d in old)
    translations = sum(d[0] == "TRANSLATION" for d in old)
    print(
        f"RESULT pairs={len(pairs)} related={related} translations={translations} "
        f"full_verify_s={t_old:.1f} fast_verify_s={t_new:.1f} "
        f"speedup_x={t_old / max(t_new, 1e-9):.2f} decisions_differing={len(differ)}"
    )


if __name__ == "__main__":
    main()
