"""The verification policy: plans per language pair."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from bookdup.dictionary import Dictionary
from bookdup.features import extract_features, looks_noisy
from bookdup.model import Book
from bookdup.relate import (
    SAME_LANGUAGE_FLOOR,
    SAME_LANGUAGE_Z_FLOOR,
    SCREEN_Z,
    TRANSLATION_FLOOR,
    Link,
    Planner,
    pairs_through_translations,
    plan_candidate,
    plan_pair,
    relate,
    translations_by_edition,
    verify_planned,
)


@dataclass
class FakeLexicons:
    """Lexicons held in memory: only the de→en pair exists (the canonical direction)."""

    lexicon: Dictionary

    def targets(self, source: str) -> list[str]:
        return {"en": ["de"], "de": ["en"]}.get(source, [])

    def get(self, source: str, target: str) -> Dictionary | None:
        return self.lexicon if (source, target) == ("de", "en") else None


def features(book_id: str, language: str, text: str):
    return dataclasses.replace(extract_features(Book(book_id, [text])), language=language)


@pytest.fixture
def lexicons() -> FakeLexicons:
    return FakeLexicons(Dictionary.from_mapping("de", "en", {"haus": ("house",)}))


def test_plans_follow_the_languages(lexicons) -> None:
    en, de, fr, und = (features(i, i, "a b c") for i in ("en", "de", "fr", "und"))
    same = plan_pair(en, en, lexicons)
    assert (same.threshold, same.min_z) == (SAME_LANGUAGE_FLOOR, SAME_LANGUAGE_Z_FLOOR)
    assert plan_pair(en, und, lexicons).dictionary is None  # unknown language: compare as one
    translated = plan_pair(en, de, lexicons)
    assert translated.dictionary is lexicons.lexicon and translated.min_z == TRANSLATION_FLOOR
    assert plan_pair(de, en, lexicons) == translated  # one plan whatever the argument order
    assert plan_pair(en, fr, lexicons) is None  # no lexicon links them: nothing is said


def test_planner_shares_the_policy_plans(lexicons) -> None:
    en, de, fr, und = (features(i, i, "a b c") for i in ("en", "de", "fr", "und"))
    planner = Planner(lexicons)
    for a, b in itertools.product((en, de, fr, und), repeat=2):
        for screened in (False, True):
            plan = planner.plan(a, b, screened)
            assert plan == plan_candidate(a, b, lexicons, screened=screened)
            assert planner.plan(a, b, screened) is plan  # one object per language pair
    assert planner.plan(en, de, True).screen_z == SCREEN_Z
    assert planner.plan(de, en, False).screen_z is None


def words(prefix: str, n: int) -> str:
    """``n`` distinct letter-only words (digits are dropped by normalisation)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join(prefix + letters[i // 26 % 26] + letters[i % 26] for i in range(n))


def test_relate_says_nothing_of_unrelated_books(lexicons) -> None:
    a = features("a", "en", words("alpha", 600))
    assert relate(a, features("b", "en", words("beta", 600)), lexicons) is None
    same = relate(a, features("c", "en", words("alpha", 600)), lexicons)
    assert same is not None and same.relation in {"EXACT", "SAME_PAGINATION"}


def test_order_alone_lets_a_same_language_pair_through(lexicons) -> None:
    """Two books sharing 80 unique words in order among 9,600 each: DUPNIQ-its under its
    floor, the order statistic far above its own: verified, and related (80 aligned words are
    long enough shared text, ``overlap_long``; 40 cover too few of the books' words)."""
    shared = words("common", 80).split()

    def own(prefix: str) -> list[str]:  # 9,600 distinct words (``words`` makes at most 676)
        return [w for k in "abcdefghijklmnop" for w in words(prefix + k, 600).split()]

    a_own, b_own = own("left"), own("right")
    a = features("a", "en", " ".join(a_own[:1000] + shared + a_own[1000:]))
    b = features("b", "en", " ".join(b_own[:200] + shared + b_own[200:]))
    plan = plan_pair(a, b, lexicons)
    verification = verify_planned(a, b, plan).verification
    assert verification.its < SAME_LANGUAGE_FLOOR and verification.order_z > 12
    assert relate(a, b, lexicons) is not None
    # without the order floor, the its floor alone would have dropped the pair
    assert verify_planned(a, b, dataclasses.replace(plan, min_z=None)) is None


def test_a_translation_suggests_the_other_sides_relatives() -> None:
    """A German book found to translate one English edition is compared with that edition's
    other editions and volumes (and the English one with the German's relatives); pairs of one
    language, and a book with itself, are never suggested."""
    links = [
        Link("de1", "en1", translated=True),
        Link("en1", "en2", translated=False),  # an edition of en1
        Link("en3", "en1", translated=False),  # a volume of it
        Link("de1", "de2", translated=False),  # a German edition of de1
        Link("fr1", "en9", translated=True),  # unrelated to the rest
    ]
    assert pairs_through_translations(links) == {
        ("de1", "en2"),
        ("de1", "en3"),
        ("de2", "en1"),
    }
    assert pairs_through_translations([Link("a", "b", translated=False)]) == set()


def test_a_translation_suggests_the_other_sides_translations_into_a_third_language() -> None:
    """A German and a Spanish translation of one English book are suggested to each other (no
    direct lexicon ranks them well); two translations into one language are not (a second
    translation is another text), nor are links whose languages are unknown."""
    links = [
        Link("en1", "de1", True, ("en", "de")),
        Link("es1", "en1", True, ("es", "en")),
        Link("en1", "de2", True, ("en", "de")),  # a second German translation
        Link("fr1", "en9", True),  # languages unknown (an older stored relation)
        Link("en9", "es9", True, ("en", "es")),
    ]
    assert pairs_through_translations(links) == {("de1", "es1"), ("de2", "es1")}


def test_one_book_of_each_same_text_group_asks_for_its_translations() -> None:
    """Groups are what the same-text pairs connect (a chain is one group); of each, the book
    that asks is the cleanest: not noisy, then the most unique words, then the smallest id.
    A pair with a book outside the query books joins nothing; a book alone always asks."""
    from types import SimpleNamespace

    def book(unique: int, words: int) -> Any:
        return SimpleNamespace(unique=SimpleNamespace(hashes=range(unique)), n_words=words)

    books = {
        "a": book(900, 20_000),
        "b": book(1_000, 20_000),  # the most unique words of the a-b-c chain
        "c": book(800, 20_000),
        "d": book(5_000, 6_000),  # more unique words, but noisy: e asks
        "e": book(700, 20_000),
        "f": book(700, 20_000),
        "g": book(700, 20_000),  # ties with f: the smaller id asks
        "h": book(100, 20_000),
    }
    assert looks_noisy(5_000, 6_000) and not looks_noisy(900, 20_000)
    same_text = [("a", "b"), ("c", "b"), ("d", "e"), ("g", "f"), ("h", "outside")]
    assert translations_by_edition(same_text, books) == {"a": "b", "c": "b", "d": "e", "g": "f"}
    assert translations_by_edition([], books) == {}


def test_the_screen_passes_a_translation_and_drops_shared_words_out_of_order() -> None:
    """A screened candidate (``PairPlan.screened``) is verified only when its words are shared
    in order: the same 600 translated words in the translation's order pass, in a random order
    they do not, though both books share every word with the original."""
    import random

    from bookdup.compare import screen_features
    from bookdup.relate import SCREEN_Z

    source, target = words("quelle", 600).split(), words("ziel", 600).split()
    lexicons = FakeLexicons(
        Dictionary.from_mapping("de", "en", {s: (t,) for s, t in zip(source, target, strict=True)})
    )
    shuffled = target[:]
    random.Random(7).shuffle(shuffled)
    de = features("de", "de", " ".join(source))
    translation = features("en", "en", " ".join(target))
    lookalike = features("en2", "en", " ".join(shuffled))
    plan = plan_pair(de, translation, lexicons).screened()
    assert plan.screen_z == SCREEN_Z
    assert screen_features(de, translation, dictionary=plan.dictionary) > 20
    assert screen_features(de, lookalike, dictionary=plan.dictionary) < SCREEN_Z
    assert verify_planned(de, translation, plan) is not None
    assert verify_planned(de, lookalike, plan) is None
    # a same-language plan has nothing to screen
    same = plan_pair(translation, lookalike, lexicons)
    assert same.screened() == same
    assert relate(de, translation, lexicons, screened=True).relation == "TRANSLATION"
