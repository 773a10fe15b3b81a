"""The order screen of translated candidates, compiled against numpy, on the 80 real books.

Pairs: every cross-language pair of the real Gutenberg books (../shared/data/gutenberg, the
collection's boilerplate dropped, ``real_translations.load``) that a lexicon makes comparable
(``bench_order_decision.pairs_of``), as tests/bookdup/test_order_decision.py screens them.
Both paths run once over all pairs first, so the prepared sequences (``verify._prepare``'s
cache) and numba's compilation are out of the timing; then the compiled screen
(``bookdup.compare.screen_features``: ``bookdup.screenkernel``) and the numpy reference
(``verify._order_screen_python`` on the same prepared sequences) are timed over all pairs,
alternated (which goes first swaps each round). Prints each path's microseconds a screen
(median and best of the rounds), the speed-up of the medians, and whether every z is equal
(asserted). ``fallback_pairs`` counts the pairs the compiled path hands to numpy;
``prepare_us_per_screen`` is the part of both that is not the screen (the translated view and
the two cached prepared sequences looked up). About 25 s.

    python benchmarks/bench_screen.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_order_decision import pairs_of  # noqa: E402
from eval_gutenberg import GUTENBERG  # noqa: E402
from real_translations import load  # noqa: E402

from bookdup import verify  # noqa: E402
from bookdup.compare import screen_features, translated_first  # noqa: E402
from bookdup.dictionary import Dictionary  # noqa: E402
from bookdup.features import BookFeatures  # noqa: E402
from bookdup.screenkernel import screen_lcs  # noqa: E402
from readers.dictionaries import Dictionaries  # noqa: E402

Pair = tuple[BookFeatures, BookFeatures, Dictionary]
Screen = Callable[[BookFeatures, BookFeatures, Dictionary], float]


def compiled(fa: BookFeatures, fb: BookFeatures, dictionary: Dictionary) -> float:
    return screen_features(fa, fb, dictionary=dictionary)


def _prepared(
    fa: BookFeatures, fb: BookFeatures, dictionary: Dictionary
) -> tuple[verify._Prepared, verify._Prepared]:
    """The sequences ``order_screen`` screens: the book in the lexicon's source language
    translated (``screen_features``), both prepared (cached)."""
    x, y = (fa, fb) if translated_first(fa, fb, dictionary) else (fb, fa)
    ux, uy, lexicon = verify._translated_view(x.unique, y.unique, dictionary)
    return verify._prepare(ux, lexicon), verify._prepare(uy, None)


def numpy_screen(fa: BookFeatures, fb: BookFeatures, dictionary: Dictionary) -> float:
    """The numpy reference, as test_order_decision's ``_numpy_screen``."""
    a, b = _prepared(fa, fb, dictionary)
    return verify._order_screen_python(a, b, verify.SCREEN_SHUFFLES)


def prepared_only(fa: BookFeatures, fb: BookFeatures, dictionary: Dictionary) -> float:
    """What both paths spend before screening (the cached sequences looked up): no z."""
    _prepared(fa, fb, dictionary)
    return 0.0


def timed(screen: Screen, pairs: list[Pair]) -> tuple[float, list[float]]:
    """Seconds for one pass over the pairs, and each pair's z."""
    gc.collect()
    t0 = time.perf_counter()
    z = [screen(fa, fb, d) for fa, fb, d in pairs]
    return time.perf_counter() - t0, z


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=GUTENBERG)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    books = load(args.data)
    pairs = [
        (fa, fb, plan.dictionary)
        for fa, fb, plan in pairs_of(books, Dictionaries(True), cross_only=True)
        if plan.dictionary is not None
    ]
    want = timed(numpy_screen, pairs)[1]  # warm: lexicons, stems, prepared sequences, numba
    assert timed(compiled, pairs)[1] == want
    fallback = sum(screen_lcs(*_prepared(*p), verify.SCREEN_SHUFFLES) is None for p in pairs)
    spent: dict[str, list[float]] = {"compiled": [], "numpy": [], "prepare": []}
    paths: list[tuple[str, Screen]] = [("compiled", compiled), ("numpy", numpy_screen)]
    for r in range(args.rounds):
        for name, screen in paths if r % 2 == 0 else paths[::-1]:
            seconds, z = timed(screen, pairs)
            assert z == want, f"{name} z differs in round {r}"
            spent[name].append(seconds)
        spent["prepare"].append(timed(prepared_only, pairs)[0])
    us = {k: 1e6 * statistics.median(v) / len(pairs) for k, v in spent.items()}
    best = {k: 1e6 * min(v) / len(pairs) for k, v in spent.items()}
    print(
        f"RESULT pairs={len(pairs)} books={len(books)} rounds={args.rounds} "
        f"fallback_pairs={fallback} compiled_us_per_screen={us['compiled']:.1f} "
        f"numpy_us_per_screen={us['numpy']:.1f} compiled_best_us={best['compiled']:.1f} "
        f"numpy_best_us={best['numpy']:.1f} speedup_x={us['numpy'] / us['compiled']:.2f} "
        f"prepare_us_per_screen={us['prepare']:.1f} "
        f"identical=1 total_s={time.perf_counter() - t0:.0f}"
    )


if __name__ == "__main__":
    main()
