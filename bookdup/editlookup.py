"""A lexicon's headwords looked up up to one edit (issue 27): an OCR-garbled word back to its entry.

At 10 % character noise many of a book's rare words are garbled, so no lexicon knows them and
the pivot keys (``bookdup.pivot``) drop them. A garbled word one edit from exactly one
headword is most often that headword: the deletion neighbourhood (the word and each one-letter
deletion of it) of every headword is indexed, and a word takes the one headword its own
neighbourhood meets. Meeting none, or two, or a key two headwords hold, it stays unknown
(docs/EVALUATION.md, "Pivot pair keys: garbled words looked up up to one edit").

Compact: one sorted uint64 hash a deletion key and the uint32 hash of the headword holding it
(~12 bytes a key; a Python dict of the strings took ~80), searched with ``np.searchsorted``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

import mmh3
import numpy as np

from bookdup.uniquewords import hash_words

#: A word shorter than this is not looked up: its one-edit neighbourhood holds too many words.
MIN_WORD_LENGTH = 5
#: A headword one deletion from a word of ``MIN_WORD_LENGTH`` letters may be a letter shorter.
MIN_HEAD_LENGTH = MIN_WORD_LENGTH - 1
#: Headwords hashed at a time while building (bounds the strings alive at once).
_BUILD_CHUNK = 4_000


def deletion_keys(word: str) -> set[str]:
    """The word and each one-letter deletion of it."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def _hash64(keys: Sequence[str]) -> np.ndarray:
    """64-bit murmur3 hash of each key, as uint64."""
    return np.fromiter((mmh3.hash64(k)[0] for k in keys), np.int64, len(keys)).view(np.uint64)


@dataclass(frozen=True)
class OneEditLookup:
    """The deletion keys of a lexicon's headwords: ``keys`` sorted distinct uint64 hashes,
    ``heads`` the ``hash_words`` hash of the one headword holding each key, 0 when two do."""

    keys: np.ndarray
    heads: np.ndarray

    @classmethod
    def build(cls, headwords: Iterable[str]) -> OneEditLookup:
        """The lookup of the distinct headwords of at least ``MIN_HEAD_LENGTH`` letters."""
        words = iter(sorted({w for w in headwords if len(w) >= MIN_HEAD_LENGTH}))
        key_parts, head_parts = [np.zeros(0, np.uint64)], [np.zeros(0, np.uint32)]
        while chunk := list(islice(words, _BUILD_CHUNK)):
            neighbourhoods = [deletion_keys(w) for w in chunk]
            key_parts.append(_hash64([k for n in neighbourhoods for k in n]))
            head_parts.append(np.repeat(hash_words(chunk), [len(n) for n in neighbourhoods]))
        keys, heads = np.concatenate(key_parts), np.concatenate(head_parts)
        del key_parts, head_parts  # the peak: German's 2.5M keys, ~12 bytes each, thrice
        order = np.argsort(keys)
        keys, heads = keys[order], heads[order]
        del order
        # a headword's keys are distinct, so a key seen twice is held by two headwords
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        held_by = np.diff(np.r_[starts, keys.size])
        return cls(keys[starts], np.where(held_by > 1, np.uint32(0), heads[starts]))

    @property
    def nbytes(self) -> int:
        """Bytes of the two arrays."""
        return int(self.keys.nbytes + self.heads.nbytes)

    def find(self, words: Sequence[str]) -> np.ndarray:
        """The uint32 hash of the one headword within one edit of each word, 0 for a word
        shorter than ``MIN_WORD_LENGTH``, meeting no headword, two, or a shared key."""
        out = np.zeros(len(words), np.uint32)
        asked = [i for i, w in enumerate(words) if len(w) >= MIN_WORD_LENGTH]
        if not asked or not self.keys.size:
            return out
        neighbourhoods = [deletion_keys(words[i]) for i in asked]
        hashes = _hash64([k for n in neighbourhoods for k in n])
        word = np.repeat(np.arange(len(asked)), [len(n) for n in neighbourhoods])
        at = np.minimum(np.searchsorted(self.keys, hashes), self.keys.size - 1)
        hit = self.keys[at] == hashes
        word, head = word[hit], self.heads[at[hit]]
        ambiguous = np.zeros(len(asked), bool)
        ambiguous[word[head == 0]] = True
        pairs = np.unique(np.stack([word, head]).T[head != 0], axis=0)
        heads_met = np.bincount(pairs[:, 0], minlength=len(asked))
        one = pairs[(heads_met[pairs[:, 0]] == 1) & ~ambiguous[pairs[:, 0]]]
        out[np.asarray(asked)[one[:, 0]]] = one[:, 1]
        return out
