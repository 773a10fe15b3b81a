"""Compare two books end to end: features → verification → signals → relation.

The one-pair path behind ``bookdup compare`` and the "other editions" lookup for a text that
is not indexed. Keys follow the papers: ``x``, ``y`` (|X|, |Y| unique words), ``shared``,
``lcs``, ``cs``, ``its`` (DUPNIQ-cs/-its, or TRANS-cs/-its when a dictionary was used).

The lexicon is the caller's choice: a ``Dictionary`` translating x into y's language, or None
to compare the words as they are (``readers.dictionaries.resolve_dictionary`` picks one for a
pair of languages, as ``bookdup compare`` does).
"""

from __future__ import annotations

from typing import Any

from bookdup.classify import CLASSIFIER_PARAMS, RELATIONS, ClassifierParams, classify
from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures, extract_features
from bookdup.langid import UNDETERMINED
from bookdup.model import Book
from bookdup.signals import compute_signals
from bookdup.verify import Verification, verify_pair

__all__ = [
    "compare_books",
    "compare_features",
    "describe_relation",
    "verify_features",
]


def verify_features(
    fa: BookFeatures,
    fb: BookFeatures,
    *,
    dictionary: Dictionary | None,
    threshold: float | None = None,
) -> Verification | None:
    """The verification half of `compare_features`: None when the pair falls below ``threshold``.

    Below the threshold (on its) a pair can only be UNRELATED; its shared-word count alone
    usually proves that (no alignment), and a translated pair's alignment is only built once
    its |LCS| passes. None as ``threshold`` verifies whatever the score.
    """
    verification = verify_pair(
        fa, fb, threshold=threshold or 0.0, score="its", dictionary=dictionary
    )
    if threshold is not None and (verification is None or verification.its < threshold):
        return None
    return verification


def describe_relation(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Verification | None,
    dictionary: Dictionary | None,
    params: ClassifierParams = CLASSIFIER_PARAMS,
) -> dict[str, Any]:
    """The classification half of `compare_features`: page signals, the class, the evidence."""
    signals = compute_signals(fa, fb, verification)
    known = UNDETERMINED not in (fa.language, fb.language)
    relation = classify(
        signals,
        params,
        same_language=fa.language == fb.language or not known,
        translated=dictionary is not None,
    )
    return {
        "x": signals.x,
        "y": signals.y,
        "shared": signals.shared,
        "lcs": signals.lcs,
        "cs": round(signals.cs, 4),
        "its": round(signals.its, 4),
        "scores": "TRANS" if dictionary is not None else "DUPNIQ",
        "relation": relation.relation,
        "confidence": round(relation.confidence, 4),
        "direction": relation.direction,
        "confidences": {k: round(v, 4) for k, v in relation.confidences.items()},
        "signals": signals.to_dict(),
        "languages": [fa.language, fb.language],
        "dictionary": f"{dictionary.source}-{dictionary.target}" if dictionary else None,
        "pruned": False,
    }


def compare_features(
    fa: BookFeatures,
    fb: BookFeatures,
    *,
    dictionary: Dictionary | None = None,
    threshold: float | None = None,
    params: ClassifierParams = CLASSIFIER_PARAMS,
) -> dict[str, Any]:
    """Relation of book x (``fa``) to book y (``fb``) with the evidence, JSON-able.

    With a ``dictionary``, x's unique words are translated (TRANS scores); None compares them
    untranslated (DUPNIQ scores), whatever the languages.

    ``threshold`` (on its) is the dedup job's fast path: a pair below it is UNRELATED without
    signals or classification (``_rejected``). Pairs at or above the threshold get exactly the
    full result. None compares whatever the score, since a single comparison wants evidence.
    """
    verification = verify_pair(
        fa, fb, threshold=threshold or 0.0, score="its", dictionary=dictionary
    )
    if threshold is not None and (verification is None or verification.its < threshold):
        return _rejected(fa, fb, verification, dictionary)
    return describe_relation(fa, fb, verification, dictionary, params)


def _rejected(
    fa: BookFeatures, fb: BookFeatures, v: Verification | None, lexicon: Dictionary | None
) -> dict[str, Any]:
    """The result for a pair below the threshold: scores as far as computed, UNRELATED.

    lcs is 0 when the pair was pruned on its shared-word count (the bound, not an |LCS|).
    """
    return {
        "x": len(fa.unique.hashes),
        "y": len(fb.unique.hashes),
        "shared": v.shared if v is not None else 0,
        "lcs": v.lcs if v is not None else 0,
        "cs": round(v.cs, 4) if v is not None else 0.0,
        "its": round(v.its, 4) if v is not None else 0.0,
        "scores": "TRANS" if lexicon is not None else "DUPNIQ",
        "relation": "UNRELATED",
        "confidence": 1.0,
        "direction": None,
        "confidences": {r: float(r == "UNRELATED") for r in RELATIONS},
        "signals": {},
        "languages": [fa.language, fb.language],
        "dictionary": f"{lexicon.source}-{lexicon.target}" if lexicon is not None else None,
        "pruned": True,
    }


def compare_books(a: Book, b: Book, *, dictionary: Dictionary | None = None) -> dict[str, Any]:
    """``compare_features`` on freshly extracted features of two books (ids added)."""
    result = compare_features(extract_features(a), extract_features(b), dictionary=dictionary)
    return {"ids": [a.id, b.id], **result}
