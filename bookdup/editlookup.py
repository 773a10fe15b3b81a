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

import numpy as np
from numba import njit

from bookdup.uniquewords import hash_words

#: A word shorter than this is not looked up: its one-edit neighbourhood holds too many words.
MIN_WORD_LENGTH = 5
#: A headword one deletion from a word of ``MIN_WORD_LENGTH`` letters may be a letter shorter.
MIN_HEAD_LENGTH = MIN_WORD_LENGTH - 1

_PRIME = np.uint64(0x100000001B3)
_BASIS = np.uint64(0xCBF29CE484222325)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def deletion_keys(word: str) -> set[str]:
    """The word and each one-letter deletion of it (what ``_key`` hashes, as strings)."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def _codepoints(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The words' code points end to end (uint32) and each word's start, plus the end."""
    lengths = np.fromiter(map(len, words), np.int64, len(words))
    codes = np.frombuffer("".join(words).encode("utf-32-le"), np.uint32)
    return codes, np.r_[0, np.cumsum(lengths)]


@njit(cache=True, nogil=True)
def _key(codes: np.ndarray, start: int, end: int, skip: int) -> np.uint64:
    """64-bit hash of the code points ``codes[start:end]`` but the one at ``skip`` (FNV-1a,
    then murmur3's finaliser to spread it)."""
    h = _BASIS
    for i in range(start, end):
        if i != skip:
            h = (h ^ np.uint64(codes[i])) * _PRIME
    h ^= h >> _S33
    h *= _C1
    h ^= h >> _S33
    h *= _C2
    return h ^ (h >> _S33)


@njit(cache=True, nogil=True)
def _skips(codes: np.ndarray, start: int, end: int) -> int:
    """How many distinct deletions the word has: deleting any letter of a run of one
    letter gives the same string, so each run counts once."""
    n = 0
    for i in range(start, end):
        if i == start or codes[i] != codes[i - 1]:
            n += 1
    return n


@njit(cache=True, nogil=True)
def _neighbourhoods(codes: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct deletion keys of every word and the index of the word holding each."""
    n_keys = 0
    for w in range(bounds.size - 1):
        n_keys += 1 + _skips(codes, bounds[w], bounds[w + 1])
    keys = np.empty(n_keys, np.uint64)
    owner = np.empty(n_keys, np.int64)
    k = 0
    for w in range(bounds.size - 1):
        start, end = bounds[w], bounds[w + 1]
        keys[k] = _key(codes, start, end, -1)
        owner[k] = w
        k += 1
        for i in range(start, end):
            if i == start or codes[i] != codes[i - 1]:
                keys[k] = _key(codes, start, end, i)
                owner[k] = w
                k += 1
    return keys, owner


@njit(cache=True, nogil=True)
def _find(
    codes: np.ndarray, bounds: np.ndarray, min_length: int, keys: np.ndarray, heads: np.ndarray
) -> np.ndarray:
    """For each word of at least ``min_length`` letters, the one head its deletion keys meet;
    0 when they meet none, two, or a key two headwords hold (head 0)."""
    out = np.zeros(bounds.size - 1, np.uint32)
    for w in range(bounds.size - 1):
        start, end = bounds[w], bounds[w + 1]
        if end - start < min_length:
            continue
        found = np.uint32(0)
        for i in range(start - 1, end):  # skip start - 1: the whole word
            if i > start and codes[i] == codes[i - 1]:
                continue  # the same deletion as the letter before
            key = _key(codes, start, end, i)
            at = np.searchsorted(keys, key)
            if at == keys.size or keys[at] != key:
                continue
            head = heads[at]
            if head == 0 or (found != 0 and found != head):
                found = np.uint32(0)
                break
            found = head
        out[w] = found
    return out


def deletion_neighbourhoods(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct deletion keys (``deletion_keys``, hashed) of every word, and the index in
    ``words`` of the word holding each: one compiled pass, where Python's sets took ~20x."""
    return _neighbourhoods(*_codepoints(words))


@dataclass(frozen=True)
class OneEditLookup:
    """The deletion keys of a lexicon's headwords: ``keys`` sorted distinct uint64 hashes,
    ``heads`` the ``hash_words`` hash of the one headword holding each key, 0 when two do."""

    keys: np.ndarray
    heads: np.ndarray

    @classmethod
    def build(cls, headwords: Iterable[str]) -> OneEditLookup:
        """The lookup of the distinct headwords of at least ``MIN_HEAD_LENGTH`` letters."""
        words = sorted({w for w in headwords if len(w) >= MIN_HEAD_LENGTH})
        keys, owner = deletion_neighbourhoods(words)
        heads = hash_words(words)[owner]
        del owner
        order = np.argsort(keys)
        keys, heads = keys[order], heads[order]
        del order  # the peak: German's 2.5M keys, ~12 bytes each, thrice
        # a headword's keys are distinct, so a key seen twice is held by two headwords
        starts = np.flatnonzero(np.r_[keys.size > 0, keys[1:] != keys[:-1]])
        held_by = np.diff(np.r_[starts, keys.size])
        return cls(keys[starts], np.where(held_by > 1, np.uint32(0), heads[starts]))

    @property
    def nbytes(self) -> int:
        """Bytes of the two arrays."""
        return int(self.keys.nbytes + self.heads.nbytes)

    def find(self, words: Sequence[str]) -> np.ndarray:
        """The uint32 hash of the one headword within one edit of each word, 0 for a word
        shorter than ``MIN_WORD_LENGTH``, meeting no headword, two, or a shared key."""
        if not len(words) or not self.keys.size:
            return np.zeros(len(words), np.uint32)
        codes, bounds = _codepoints(words)
        return _find(codes, bounds, MIN_WORD_LENGTH, self.keys, self.heads)
