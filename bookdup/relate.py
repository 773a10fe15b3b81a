"""The verification policy: which pairs are compared, and with which lexicon.

The dedup job and the lookup of a text that is not indexed must decide alike, so the policy
lives here, once, and both call it. Two facts shape it:

- Below the classifier's floors (its evidence gate on its for one language, the lower edge
  of its TRANSLATION ramp on the order statistic across two) a pair can only be UNRELATED,
  so it is rejected before any page signal is computed: a lossless fast path, which is
  what makes most candidates cheap.
- Books in two languages are comparable only through a bilingual lexicon; without one for the
  pair, nothing is said about it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from bookdup.classify import CLASSIFIER_PARAMS
from bookdup.compare import describe_relation, screen_features, verify_features
from bookdup.dictionary import Dictionary, canonical_direction
from bookdup.features import BookFeatures, looks_noisy
from bookdup.langid import UNDETERMINED
from bookdup.result import RelationResult
from bookdup.signals import Collection
from bookdup.stemming import stem_lexicon
from bookdup.translate import prepare_lexicon
from bookdup.verify import Verification, detached

#: Below both lower edges of the same-language gate (its, or the order statistic) a pair can
#: only be UNRELATED.
SAME_LANGUAGE_FLOOR = CLASSIFIER_PARAMS.min_its[0]
SAME_LANGUAGE_Z_FLOOR = CLASSIFIER_PARAMS.min_z[0]
#: Below the lower edge of the TRANSLATION ramp on the order statistic a translated pair can
#: only be UNRELATED.
TRANSLATION_FLOOR = CLASSIFIER_PARAMS.translation_z[0]
#: At or above this order statistic every ramp of the classifier that reads it is saturated
#: (TRANSLATION's two, the same-language gate's): z need not be calibrated any further.
DECIDED_Z = max(
    CLASSIFIER_PARAMS.translation_z[1],
    CLASSIFIER_PARAMS.translation_z_alone[1],
    CLASSIFIER_PARAMS.min_z[1],
)


#: A screened translated candidate (``store.candidates``: ranked past the verified ones) is
#: verified only when its whole-pair order z (``bookdup.verify.order_screen``) reaches this.
#: 1,000 generated long books: unrelated hits' 99th percentile 3.0, translations' 5th 6.5;
#: 80 real books: every translation >= 4.8 (docs/EVALUATION.md, order as evidence).
SCREEN_Z = 3.0


class Lexicons(Protocol):
    """Where bilingual lexicons come from (the caller owns loading and caching them)."""

    def targets(self, source: str) -> list[str]: ...

    def get(self, source: str, target: str) -> Dictionary | None: ...


@dataclass(frozen=True)
class PairPlan:
    """How one pair is verified: through which lexicon (None: same language) from which floor.

    ``threshold`` is on its, ``min_z`` on the order statistic; a pair must reach one of the
    floors given (same language: both given; translated: ``min_z``). ``max_z``: the order
    statistic from which the decision is made (the null is calibrated only as far as the
    decision needs, ``bookdup.verify.verify_pair``); None calibrates it fully.
    """

    dictionary: Dictionary | None
    threshold: float | None
    min_z: float | None = None
    max_z: float | None = DECIDED_Z
    #: verified only when ``bookdup.verify.order_screen`` reaches it (None: always verified)
    screen_z: float | None = None

    def screened(self) -> PairPlan:
        """This plan for a screened candidate: a translated pair is screened first."""
        return self if self.dictionary is None else replace(self, screen_z=SCREEN_Z)


@dataclass(frozen=True)
class Link:
    """A found relation as the policy below reads it: two books, whether across languages, and
    their languages where known (a translation's translations are followed only with them)."""

    a: str
    b: str
    translated: bool
    languages: tuple[str, str] | None = None

    def language_of(self, book: str) -> str | None:
        """``book``'s language (one of this link's two), if the link knows it."""
        if self.languages is None:
            return None
        return self.languages[0] if book == self.a else self.languages[1]


def pairs_through_translations(links: Iterable[Link]) -> set[tuple[str, str]]:
    """Pairs a found translation suggests, as (smaller id, larger id): each side of it against
    the other side's same-language relatives (its editions, volumes, excerpts), and against the
    other side's translations into a third language.

    A translated candidate query ranks a work's whole family of editions in the other language
    by chance-level margins, and at 1,000 long books its cap of 30 missed 23 of 334 translations
    (0.949), 12 of them a relative of a book the query did find and verify as a translation
    (docs/EVALUATION.md). Two translations of one work into languages with no direct lexicon
    (German and Spanish, through English) rank each other worse still: at 10K books 80 of
    the 145 such pairs were in no list, while both were found as translations of their original.
    The evidence chain is cheap to follow: a few pairs a work.
    """
    relatives: dict[str, set[str]] = defaultdict(set)
    translated: dict[str, dict[str, str]] = defaultdict(dict)  # book -> {translation: its language}
    translations: list[Link] = []
    for link in links:
        if link.translated:
            translations.append(link)
            for one, other in ((link.a, link.b), (link.b, link.a)):
                language = link.language_of(other)
                if language is not None:
                    translated[one][other] = language
        else:
            relatives[link.a].add(link.b)
            relatives[link.b].add(link.a)
    out: set[tuple[str, str]] = set()
    for t in translations:
        for one, other in ((t.a, t.b), (t.b, t.a)):
            for relative in relatives.get(other, ()):
                if relative != one:
                    out.add((one, relative) if one < relative else (relative, one))
            own = t.language_of(one)
            for third, language in translated.get(other, {}).items():
                if own is not None and language != own and third != one:
                    out.add((one, third) if one < third else (third, one))
    return out


#: Relations that say two books hold the same text (editions, rescans, repaginations): their
#: translated candidate queries ask the same stems (``translations_by_edition``).
SAME_TEXT = frozenset({"EXACT", "SAME_PAGINATION", "DIFFERENT_PAGINATION"})


def translations_by_edition(
    same_text: Iterable[tuple[str, str]], books: Mapping[str, BookFeatures]
) -> dict[str, str]:
    """The books of ``books`` whose translations another book's queries stand for, each with
    that book: in each group that ``same_text`` pairs connect, every book but one, which asks
    for all of them.

    The one asking is the cleanest (not noisy, then the most unique words, then the smallest
    id): its stems are the group's best evidence. Editions of one text ask the same stems, so
    their translated lists are alike; the translations the one asking finds reach the others
    through ``pairs_through_translations``. Pairs with a book outside ``books`` join nothing.
    """
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in same_text:
        if a in books and b in books:
            ra, rb = root(parent.setdefault(a, a)), root(parent.setdefault(b, b))
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = defaultdict(list)
    for book in parent:
        groups[root(book)].append(book)

    def cleanest(book: str) -> tuple[bool, int, str]:
        f = books[book]
        n_unique = len(f.unique.hashes)
        return (looks_noisy(n_unique, f.n_words), -n_unique, book)

    stand_in: dict[str, str] = {}
    for members in groups.values():
        asking = min(members, key=cleanest)
        stand_in.update((m, asking) for m in members if m != asking)
    return stand_in


def prepare_lexicons(lexicons: Lexicons, languages: set[str]) -> None:
    """Load now every lexicon between ``languages`` with its stem lexicon, both hashed for
    translating: what a job's queries and plans would load on first use, done before it forks
    verification workers, which then share them instead of loading their own."""
    for source in sorted(languages):
        for target in lexicons.targets(source):
            dictionary = lexicons.get(source, target) if target in languages else None
            if dictionary is None:
                continue
            prepare_lexicon(dictionary)
            stemmed = stem_lexicon(dictionary)
            if stemmed is not None:
                prepare_lexicon(stemmed)


def plan_pair(a: BookFeatures, b: BookFeatures, lexicons: Lexicons) -> PairPlan | None:
    """The plan for comparing ``a`` with ``b``; None when no lexicon links their languages.

    A translated pair always goes through the lexicon of its languages' canonical direction
    (``bookdup.dictionary.canonical_direction``), so (a, b) and (b, a) get the same plan.
    """
    if a.language == b.language or UNDETERMINED in (a.language, b.language):
        return PairPlan(None, SAME_LANGUAGE_FLOOR, SAME_LANGUAGE_Z_FLOOR)
    dictionary = lexicons.get(*canonical_direction(a.language, b.language))
    return None if dictionary is None else PairPlan(dictionary, None, TRANSLATION_FLOOR)


def plan_candidate(
    a: BookFeatures, b: BookFeatures, lexicons: Lexicons, *, screened: bool = False
) -> PairPlan | None:
    """`plan_pair`, then `PairPlan.screened` for a screened candidate."""
    plan = plan_pair(a, b, lexicons)
    return plan.screened() if plan is not None and screened else plan


class Planner:
    """`plan_candidate` kept per (language, language, screened), which is all a plan depends
    on: a job plans over a million pairs from a few dozen language pairs, and shared plans
    are built once and pickled once a chunk (docs/EVALUATION.md, issue 28)."""

    def __init__(self, lexicons: Lexicons) -> None:
        self.lexicons = lexicons
        self._plans: dict[tuple[str, str, bool], PairPlan | None] = {}

    def plan(self, a: BookFeatures, b: BookFeatures, screened: bool = False) -> PairPlan | None:
        """The plan of (a, b): `plan_candidate`'s, the same object for every such pair."""
        key = (a.language, b.language, screened)
        try:
            return self._plans[key]
        except KeyError:
            plan = plan_candidate(a, b, self.lexicons, screened=screened)
            self._plans[key] = plan
            return plan


@dataclass(frozen=True)
class VerifiedPair:
    """A pair whose verification passed its floor: only these are worth classifying."""

    a: BookFeatures
    b: BookFeatures
    verification: Verification
    dictionary: Dictionary | None


def verify_planned(a: BookFeatures, b: BookFeatures, plan: PairPlan) -> VerifiedPair | None:
    """Verify one pair under its plan; None when it falls below the screen or the floor."""
    screen, lexicon = plan.screen_z, plan.dictionary
    if (
        screen is not None
        and lexicon is not None
        and screen_features(a, b, dictionary=lexicon, at_least=screen) < screen
    ):
        return None
    verification = verify_features(
        a,
        b,
        dictionary=plan.dictionary,
        threshold=plan.threshold,
        min_z=plan.min_z,
        max_z=plan.max_z,
    )
    return None if verification is None else VerifiedPair(a, b, verification, plan.dictionary)


def verify_detached(a: BookFeatures, b: BookFeatures, plan: PairPlan) -> VerifiedPair | None:
    """`verify_planned` whose result pickles: what a process pool runs, so that verification
    uses every core while the parent plans (it holds the lexicons) and classifies."""
    verified = verify_planned(a, b, plan)
    if verified is None:
        return None
    return replace(verified, verification=detached(verified.verification))


def classify_verified(pair: VerifiedPair, collection: Collection | None = None) -> RelationResult:
    """Page signals, the relation class and the evidence of a verified pair;
    ``collection``: the books beside it (``bookdup.signals.Collection``)."""
    return describe_relation(
        pair.a, pair.b, pair.verification, pair.dictionary, collection=collection
    )


def relate(
    a: BookFeatures,
    b: BookFeatures,
    lexicons: Lexicons,
    *,
    screened: bool = False,
    collection: Collection | None = None,
) -> RelationResult | None:
    """The relation of ``a`` to ``b`` (None when unrelated or not comparable); ``screened``:
    a screened candidate (``PairPlan.screened``); ``collection``: the books beside the pair
    (the dedup job's index), which say what shared text at the books' edges is."""
    plan = plan_candidate(a, b, lexicons, screened=screened)
    verified = verify_planned(a, b, plan) if plan is not None else None
    if verified is None:
        return None
    result = classify_verified(verified, collection)
    return None if result.relation == "UNRELATED" else result
