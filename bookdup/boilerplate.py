"""Dropping collection-wide boilerplate words before verification.

A word that is unique inside many books (a publisher's licence page, a digitiser's notice) is
shared by unrelated books in the same order, so it would lift their LCS score — the mailing-list
false match DUPNIQ reports. Words whose hash is held by more than max-df books carry no evidence
about a pair and are removed from both sequences before alignment.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from bookdup.arrays import isin_sorted
from bookdup.features import BookFeatures
from bookdup.uniquewords import UniqueWords


def drop_common_words(features: BookFeatures, common: np.ndarray) -> BookFeatures:
    """A copy of ``features`` whose unique-word sequence skips the hashes in sorted ``common``."""
    if common.size == 0 or features.unique.hashes.size == 0:
        return features
    keep = ~isin_sorted(features.unique.hashes, common)
    if keep.all():
        return features
    words = features.unique.words
    if words is not None:
        words = [w for w, k in zip(words, keep.tolist(), strict=True) if k]
    unique = UniqueWords(words, features.unique.hashes[keep], features.unique.pages[keep])
    return dataclasses.replace(features, unique=unique)
