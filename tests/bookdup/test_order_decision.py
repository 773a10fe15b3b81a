"""The sequential order decision (``PairPlan.max_z``) decides every real pair as the full
calibration does: all pairs of the 80 real Gutenberg books (../shared/data/gutenberg), same
language and across languages, through the verification policy (``bookdup.relate``) with
and without it — the same class and direction for each, and the same relations as the
README's truth (all 72 related pairs found, no false translation).

The full calibration shuffles every translated pair that might reach the floor 8 times and
scans its windows, so this takes a few minutes: marked slow.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from readers.dictionaries import Dictionaries, available_pairs

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_fast_decision_equals_full_calibration_on_every_real_pair(gutenberg: Path) -> None:
    if not available_pairs():
        pytest.skip("no FreeDict dictionaries installed (scripts/install_dictionaries.sh)")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_order_decision import decide, pairs_of
    from eval_gutenberg import RELATED_TYPES, parse_truth
    from real_translations import load

    books = load(gutenberg)
    pairs = pairs_of(books, Dictionaries(True), cross_only=False)
    assert len(pairs) > 3000  # every pair of the 80 books that a lexicon makes comparable
    full, _, _ = decide(pairs, full=True)
    fast, orders, _ = decide(pairs, full=False)
    differ = [
        (fa.book_id, fb.book_id, old, new)
        for (fa, fb, _), old, new in zip(pairs, full, fast, strict=True)
        if old != new
    ]
    assert differ == []
    # the fast path did stop early: most translated pairs with few shuffles
    shuffles = Counter(o["shuffles"] for o in orders if o is not None)
    assert shuffles and min(shuffles) < 8
    truth = parse_truth(gutenberg / "README.md")
    related = {frozenset((t.a, t.b)) for t in truth if t.type in RELATED_TYPES}
    found = {
        frozenset((fa.book_id, fb.book_id)): relation
        for (fa, fb, _), (relation, _) in zip(pairs, fast, strict=True)
        if relation != "UNRELATED"
    }
    assert len(related) == 72 and related <= set(found)
    false_translations = [p for p, r in found.items() if r == "TRANSLATION" and p not in related]
    assert false_translations == []


def _numpy_screen(fa, fb, dictionary) -> float:
    from bookdup import verify
    from bookdup.compare import translated_first

    x, y = (fa, fb) if translated_first(fa, fb, dictionary) else (fb, fa)
    ux, uy, lexicon = verify._translated_view(x.unique, y.unique, dictionary)
    a, b = verify._prepare(ux, lexicon), verify._prepare(uy, None)
    return verify._order_screen_python(a, b, verify.SCREEN_SHUFFLES)


def test_the_order_screen_keeps_every_real_translation(gutenberg: Path) -> None:
    """Screened candidates (``bookdup.relate.PairPlan.screened``) on the 80 real books (the
    compiled screen equal to the numpy one on every cross-language pair): every
    translation of the truth reaches the screen, and most unrelated cross-language pairs do
    not (the screen is what makes a translated query's long tail cheap)."""
    if not available_pairs():
        pytest.skip("no FreeDict dictionaries installed (scripts/install_dictionaries.sh)")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_order_decision import pairs_of
    from bench_translation_candidates import TRANSLATION_TYPES
    from eval_gutenberg import parse_truth
    from real_translations import load

    from bookdup.compare import screen_features
    from bookdup.relate import SCREEN_Z

    pairs = pairs_of(load(gutenberg), Dictionaries(True), cross_only=True)
    truth = {frozenset((t.a, t.b)) for t in parse_truth(gutenberg / "README.md")}
    translations = {
        frozenset((t.a, t.b))
        for t in parse_truth(gutenberg / "README.md")
        if t.type in TRANSLATION_TYPES
    }
    z = {
        frozenset((fa.book_id, fb.book_id)): screen_features(fa, fb, dictionary=plan.dictionary)
        for fa, fb, plan in pairs
    }
    assert translations <= set(z) and len(translations) == 53
    # the compiled screen (bookdup.screenkernel) gives the numpy path's z on every pair
    assert [screen_features(fa, fb, dictionary=plan.dictionary) for fa, fb, plan in pairs] == [
        _numpy_screen(fa, fb, plan.dictionary) for fa, fb, plan in pairs
    ]
    assert min(z[p] for p in translations) >= SCREEN_Z
    unrelated = [v for p, v in z.items() if p not in truth]
    assert len(unrelated) > 1500
    assert sum(v >= SCREEN_Z for v in unrelated) < 0.05 * len(unrelated)
