"""In-place translation of a unique-word sequence (TRANS, SIGIR 2012, §3.3).

Each unique word of the source book is replaced, where it stands, by every translation the
lexicon gives (one-to-many, so items may repeat afterwards and the general LCS is needed);
words without a translation — mostly names, which translations tend to keep — stay as they are.
Translations are hashed like book words (``bookdup.uniquewords.hash_words``) so they compare
with the target book's unique-word hashes.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from bookdup.dictionary import Dictionary
from bookdup.uniquewords import hash_words

__all__ = ["translate_unique"]

_EMPTY = np.zeros(0, dtype=np.uint32)
# Per dictionary: word -> uint32 hashes of its translations, filled as books ask for words
# (hashing all ~1M translations of a large lexicon up front would cost seconds).
_HASHES: weakref.WeakKeyDictionary[Dictionary, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


def _translation_hashes(dictionary: Dictionary) -> dict[str, np.ndarray]:
    table = _HASHES.get(dictionary)
    if table is None:
        table = _HASHES[dictionary] = {}
    return table


def translate_unique(
    words: Sequence[str],
    pages: np.ndarray,
    dictionary: Dictionary,
    keep_untranslated: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Hashes (uint32) of the translated sequence and the source page (int32) of each item."""
    table = _translation_hashes(dictionary)
    parts: list[np.ndarray] = []
    for w in words:
        h = table.get(w)
        if h is None:
            ts = dictionary.translate(w)
            h = table[w] = hash_words(ts) if ts else _EMPTY
        parts.append(h)
    if keep_untranslated:
        missing = [i for i, h in enumerate(parts) if not h.size]
        for i, h in zip(missing, hash_words([words[i] for i in missing]), strict=True):
            parts[i] = h.reshape(1)
    if not parts:
        return _EMPTY.copy(), np.zeros(0, dtype=np.int32)
    counts = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    hashes = np.concatenate(parts).astype(np.uint32, copy=False)
    return hashes, np.repeat(np.asarray(pages, dtype=np.int32), counts)
