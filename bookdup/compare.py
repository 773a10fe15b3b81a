"""Compare two books end to end: features → verification → signals → relation.

The one-pair path behind ``bookdup compare`` and the "other editions" lookup for a text that
is not indexed; its answer is a ``bookdup.result.RelationResult``.

The lexicon is the caller's choice: a ``Dictionary`` translating x into y's language, or None
to compare the words as they are (``readers.dictionaries.resolve_dictionary`` picks one for a
pair of languages, as ``bookdup compare`` does).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bookdup.classify import CLASSIFIER_PARAMS, RELATIONS, ClassifierParams, classify
from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures, extract_features, looks_noisy
from bookdup.langid import UNDETERMINED
from bookdup.model import Book
from bookdup.noisy import RESCUE_MIN_LOCAL, RESCUE_MIN_Z, exact_local, noisy_verification
from bookdup.result import RelationResult
from bookdup.signals import SIGNAL_PARAMS, Collection, compute_signals, dense_page_ranges
from bookdup.verify import Verification, order_screen, verify_pair

__all__ = [
    "compare_books",
    "compare_features",
    "describe_relation",
    "screen_features",
    "shared_page_ranges",
    "translated_first",
    "verify_features",
]


def translated_first(fa: BookFeatures, fb: BookFeatures, dictionary: Dictionary | None) -> bool:
    """Whether the pair is verified as given (False: as (fb, fa)).

    A lexicon translates one language into the other, and the book in its source language is
    the one translated, whichever argument it was: the decision does not depend on argument
    order. Books whose language matches neither side (forced lexicon) go as given.
    """
    if dictionary is None or fa.language == dictionary.source:
        return True
    return fb.language != dictionary.source


def screen_features(
    fa: BookFeatures,
    fb: BookFeatures,
    *,
    dictionary: Dictionary,
    at_least: float | None = None,
) -> float:
    """The order screen of a translated pair (``bookdup.verify.order_screen``: with
    ``at_least``, a z surely under it may be a bound), the book in the lexicon's source
    language translated whichever argument it is."""
    x, y = (fa, fb) if translated_first(fa, fb, dictionary) else (fb, fa)
    return order_screen(x, y, dictionary, at_least=at_least)


def verify_features(
    fa: BookFeatures,
    fb: BookFeatures,
    *,
    dictionary: Dictionary | None,
    threshold: float | None = None,
    min_z: float | None = None,
    max_z: float | None = None,
) -> Verification | None:
    """The verification half of `compare_features`: None when the pair falls below a floor.

    ``threshold`` is on its, ``min_z`` on the order statistic; a pair below every floor given
    can only be UNRELATED (same-language pairs get both: the classifier's gate takes either;
    translated pairs only ``min_z``). Its shared-item count
    alone usually proves that (no alignment). None for both verifies whatever the score.
    With a lexicon, the book in its source language is translated (``translated_first``), so
    x and y of the result may be (fb, fa). ``max_z``: the order statistic above which the
    decision is made (``verify_pair``: the null calibrated only as far as the decision needs).
    """
    x, y = (fa, fb) if translated_first(fa, fb, dictionary) else (fb, fa)
    verification = verify_pair(
        x, y, threshold=threshold, score="its", dictionary=dictionary, min_z=min_z, max_z=max_z
    )
    floors = [(f, v) for f, v in ((threshold, "its"), (min_z, "order_z")) if f is not None]
    if verification is None or not floors:
        return _unfloored(fa, fb, verification, dictionary)
    if any(getattr(verification, score) >= floor for floor, score in floors):
        return verification if dictionary is not None else _reread_order(fa, fb, verification)
    return None if dictionary is not None else _rescue(fa, fb, verification, floors)


def _unfloored(
    fa: BookFeatures, fb: BookFeatures, exact: Verification | None, dictionary: Dictionary | None
) -> Verification | None:
    """A verification asked for whatever its score (``explain``): the one the dedup job
    classifies, so a pair the job rescued (`_rescue`) reads the same."""
    if exact is None or dictionary is not None:
        return exact
    floors = [(CLASSIFIER_PARAMS.min_its[0], "its"), (CLASSIFIER_PARAMS.min_z[0], "order_z")]
    if any(getattr(exact, score) >= floor for floor, score in floors):
        return _reread_order(fa, fb, exact)
    return _rescue(fa, fb, exact, floors) or exact


def _reread_order(fa: BookFeatures, fb: BookFeatures, exact: Verification) -> Verification:
    """A same-language pair over its floors whose order leaves a ramp that reads it part open
    (the gate's, or below where an overlap's order alone starts to count): its order z read
    again, with one-edit matches between noisy books, as under the floors (noise garbles the
    shared words, not their order), and its densest ordered block; the alignment kept exact —
    one-edit matches of short noisy books spread over pages they do not share."""
    gate = CLASSIFIER_PARAMS  # re-read while the order could still open a ramp that reads it
    if exact.order_z >= max(gate.min_z[1], gate.overlap_z_alone[0]) or exact.its >= gate.min_its[1]:
        return _with_block(fa, fb, exact)
    if exact.order is None or not _worth_rescuing(fa, fb, exact):
        return exact
    rescued = noisy_verification(fa, fb, one_edit=_both_noisy(fa, fb))
    if rescued is None or rescued.order is None:
        return exact
    order = rescued.order if rescued.order_z > exact.order_z else exact.order
    return replace(exact, order=order, local=rescued.local)


def _with_block(fa: BookFeatures, fb: BookFeatures, exact: Verification) -> Verification:
    """A pair whose order is decisive, read for its densest block of exact matches when the
    whole alignment is small enough for the small-block question
    (``SignalParams.own_block_max_words``): a clean 500-word excerpt aligns at z 14 and covers
    4 % of each book, which the overlap's size ramps read as chance (generated seed 63)."""
    if exact.local is not None or exact.lcs >= SIGNAL_PARAMS.own_block_max_words:
        return exact
    return replace(exact, local=exact_local(fa, fb))


def _rescue(
    fa: BookFeatures, fb: BookFeatures, exact: Verification, floors: list[tuple[float, str]]
) -> Verification | None:
    """A same-language pair under its floors, its order already suggestive: verified again
    with unique words matched up to one edit between noisy books (``bookdup.noisy``), since
    noise garbles much of the shared evidence, and read for its densest ordered block; None
    unless that reaches a floor or the block the classifier's gate
    (``ClassifierParams.min_local``)."""
    if not _worth_rescuing(fa, fb, exact):
        return None
    one_edit = _both_noisy(fa, fb)
    rescued = noisy_verification(fa, fb, one_edit=one_edit)
    if rescued is None or any(getattr(rescued, s) >= f for f, s in floors):
        return rescued
    if rescued.local is None or rescued.local_score < CLASSIFIER_PARAMS.min_local[0]:
        return None
    return noisy_verification(fa, fb, block=rescued.local, one_edit=one_edit)


def _noisy(f: BookFeatures) -> bool:
    return looks_noisy(len(f.unique.hashes), f.n_words)


def _both_noisy(fa: BookFeatures, fb: BookFeatures) -> bool:
    """Whether the re-read also matches words one edit apart: only between two noisy books
    (the dedup job keeps the words of noisy books alone, ``features_from_doc``)."""
    return _noisy(fa) and _noisy(fb)


def _worth_rescuing(fa: BookFeatures, fb: BookFeatures, exact: Verification) -> bool:
    """A pair whose exact matches already suggest order: over the whole books, or in one
    dense block (``bookdup.localscan``: a short excerpt the whole pair's order hides). Noisy
    or clean: at 0-2 % noise an excerpt of 500 words aligns 34-39 words in one dense run at
    whole-pair z 8-9, which the gate reads as chance (issue 29, stop 58)."""
    return exact.order_z >= RESCUE_MIN_Z or exact_local(fa, fb).score >= RESCUE_MIN_LOCAL


def shared_page_ranges(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Verification | None,
    dictionary: Dictionary | None,
    collection: Collection | None = None,
) -> dict[str, list[int]] | None:
    """Where the shared text of (fa, fb) lies, as pages (1-based, inclusive) of each: the dense
    aligned part (``bookdup.signals.dense_page_ranges``), for a verdict's "pages … of A match
    pages … of B". ``verification`` as for `describe_relation`; None without shared text."""
    if translated_first(fa, fb, dictionary):
        ranges = dense_page_ranges(fa, fb, verification, collection=collection)
        return None if ranges is None else {"a": list(ranges[0]), "b": list(ranges[1])}
    ranges = dense_page_ranges(fb, fa, verification, collection=collection)
    return None if ranges is None else {"a": list(ranges[1]), "b": list(ranges[0])}


def describe_relation(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Verification | None,
    dictionary: Dictionary | None,
    params: ClassifierParams = CLASSIFIER_PARAMS,
    collection: Collection | None = None,
) -> RelationResult:
    """The classification half of `compare_features`: page signals, the class, the evidence.

    ``verification`` comes from `verify_features` on the same arguments (so it may have
    compared (fb, fa)); the result is worded for (fa, fb) either way. ``collection``: the
    books beside the pair, which say whether shared text at both books' edges is boilerplate
    (``bookdup.signals.Collection``); without it, such text always is.
    """
    if not translated_first(fa, fb, dictionary):
        return _describe(fb, fa, verification, dictionary, params, collection).flipped()
    return _describe(fa, fb, verification, dictionary, params, collection)


def _describe(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Verification | None,
    dictionary: Dictionary | None,
    params: ClassifierParams,
    collection: Collection | None,
) -> RelationResult:
    signals = compute_signals(fa, fb, verification, collection=collection)
    known = UNDETERMINED not in (fa.language, fb.language)
    relation = classify(
        signals,
        params,
        same_language=fa.language == fb.language or not known,
        translated=dictionary is not None,
    )
    return RelationResult(
        x=signals.x,
        y=signals.y,
        shared=signals.shared,
        lcs=signals.lcs,
        cs=round(signals.cs, 4),
        its=round(signals.its, 4),
        order=verification.order if verification is not None else None,
        scores="TRANS" if dictionary is not None else "DUPNIQ",
        relation=relation.relation,
        confidence=round(relation.confidence, 4),
        direction=relation.direction,
        confidences={k: round(v, 4) for k, v in relation.confidences.items()},
        signals=signals.to_dict(),
        languages=(fa.language, fb.language),
        dictionary=f"{dictionary.source}-{dictionary.target}" if dictionary else None,
        translated="x" if dictionary is not None else None,
    )


def compare_features(
    fa: BookFeatures,
    fb: BookFeatures,
    *,
    dictionary: Dictionary | None = None,
    threshold: float | None = None,
    min_z: float | None = None,
    params: ClassifierParams = CLASSIFIER_PARAMS,
) -> RelationResult:
    """Relation of book x (``fa``) to book y (``fb``) with the evidence.

    With a ``dictionary``, the book in its source language is translated (TRANS scores and
    the order statistic; the same result whichever argument it is); None compares the words
    untranslated (DUPNIQ scores), whatever the languages.

    ``threshold`` (on its) and ``min_z`` (on the order statistic) are the dedup job's fast
    path: a pair below either is UNRELATED without signals or classification
    (``_rejected``). Pairs above get exactly the full result. None compares whatever the
    score, since a single comparison wants evidence.
    """
    verification = verify_features(fa, fb, dictionary=dictionary, threshold=threshold, min_z=min_z)
    if verification is None and (threshold is not None or min_z is not None):
        return _rejected(fa, fb, dictionary)
    return describe_relation(fa, fb, verification, dictionary, params)


def _rejected(fa: BookFeatures, fb: BookFeatures, lexicon: Dictionary | None) -> RelationResult:
    """The result for a pair below a floor: UNRELATED, scores not reported.

    Reported as 0 (lcs 0: pruned on its shared-word count or below the floor; run
    `compare_features` without floors for the evidence).
    """
    return RelationResult(
        x=len(fa.unique.hashes),
        y=len(fb.unique.hashes),
        shared=0,
        lcs=0,
        cs=0.0,
        its=0.0,
        order=None,
        scores="TRANS" if lexicon is not None else "DUPNIQ",
        relation="UNRELATED",
        confidence=1.0,
        direction=None,
        confidences={r: float(r == "UNRELATED") for r in RELATIONS},
        signals={},
        languages=(fa.language, fb.language),
        dictionary=f"{lexicon.source}-{lexicon.target}" if lexicon is not None else None,
        pruned=True,
    )


def compare_books(a: Book, b: Book, *, dictionary: Dictionary | None = None) -> dict[str, Any]:
    """``compare_features`` on freshly extracted features of two books, as JSON with their ids
    (``ids``) first: what ``bookdup compare --json`` prints."""
    result = compare_features(extract_features(a), extract_features(b), dictionary=dictionary)
    return {"ids": [a.id, b.id], **result.to_dict()}
