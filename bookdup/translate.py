"""In-place translation of a unique-word sequence (TRANS, SIGIR 2012, §3.3).

Each unique word of the source book is replaced, where it stands, by every translation the
lexicon gives (one-to-many, so items may repeat afterwards and the general LCS is needed);
words without a translation — mostly names, which translations tend to keep — stay as they are.
Translations are hashed like book words (``bookdup.uniquewords.hash_words``) so they compare
with the target book's unique-word hashes.

The lexicon is turned once into sorted word-hash keys and grouped translation hashes (~0.2 s for
280K entries), so a book is translated with two compiled passes (``_lookup``, ``_expand``)
instead of one dictionary lookup per word: the dedup job translates every query book once per
target language and every candidate pair's book again, and per-word lookups made that its
slowest step.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
from numba import njit

from bookdup.dictionary import Dictionary
from bookdup.sortkernel import radix_argsort
from bookdup.uniquewords import hash_words

__all__ = [
    "HashedLexicon",
    "hashed_lexicon",
    "in_lexicon",
    "remember_hashed_lexicon",
    "translate_unique",
    "translate_with_source",
    "warm",
]


@dataclass(frozen=True)
class HashedLexicon:
    """A lexicon as arrays: ``targets[starts[i]:starts[i + 1]]`` translate source ``keys[i]``."""

    keys: np.ndarray  # uint32, sorted, unique: word hashes of source words
    entries: np.ndarray  # int64: index of each key's word in ``Dictionary.words``
    starts: np.ndarray  # int64, size keys.size + 1
    targets: np.ndarray  # uint32 translation hashes grouped by key

    def arrays(self) -> dict[str, np.ndarray]:
        """The four arrays by name: what a reader's disk cache stores."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> HashedLexicon:
        """Inverse of ``arrays``; raises KeyError when one is missing."""
        return cls(**{f.name: np.asarray(arrays[f.name]) for f in fields(cls)})


_LEXICONS: weakref.WeakKeyDictionary[Dictionary, HashedLexicon] = weakref.WeakKeyDictionary()


def _build(dictionary: Dictionary) -> HashedLexicon:
    """Hash and group a lexicon; of source words sharing a 32-bit hash (13 of 280K in de-en)
    only the first keeps its translations, the others stay untranslated."""
    src = hash_words(dictionary.words)
    counts = np.fromiter(
        (t.count(" ") + 1 for t in dictionary.translations), np.int64, len(dictionary.words)
    )
    flat = hash_words(" ".join(dictionary.translations).split(" ")) if counts.size else src
    offsets = np.concatenate([[0], np.cumsum(counts)])
    order = np.argsort(src, kind="stable")
    first = np.ones(order.size, dtype=bool)
    first[1:] = src[order][1:] != src[order][:-1]
    order = order[first]
    kept = counts[order]
    starts = np.concatenate([[0], np.cumsum(kept)])
    gather = np.repeat(offsets[order] - starts[:-1], kept) + np.arange(int(starts[-1]))
    return HashedLexicon(src[order], order, starts, flat[gather].astype(np.uint32))


def _lexicon(dictionary: Dictionary) -> HashedLexicon:
    lexicon = _LEXICONS.get(dictionary)
    if lexicon is None:
        lexicon = _LEXICONS[dictionary] = _build(dictionary)
    return lexicon


def hashed_lexicon(dictionary: Dictionary) -> HashedLexicon:
    """``dictionary`` hashed and grouped (built once per lexicon object, or given by
    `remember_hashed_lexicon`): what a reader caches on disk."""
    return _lexicon(dictionary)


def remember_hashed_lexicon(dictionary: Dictionary, lexicon: HashedLexicon) -> None:
    """Give ``dictionary`` its hashed form computed earlier (a reader's disk cache): hashing
    the 20 lexicons of five languages and their stem lexicons took ~2.7 s of every dedup
    run's preparation, reading them back ~0.1 s."""
    _LEXICONS[dictionary] = lexicon


def prepare_lexicon(dictionary: Dictionary) -> None:
    """Hash ``dictionary`` into the arrays books are translated with, now rather than on the
    first book (e.g. before forking workers, which then share them)."""
    _lexicon(dictionary)


def translate_unique(
    words: Sequence[str] | None,
    pages: np.ndarray,
    dictionary: Dictionary,
    keep_untranslated: bool = True,
    *,
    hashes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Hashes (uint32) of the translated sequence and the source page (int32) of each item.

    ``hashes`` are the words' own hashes when the caller has them (books carry them). Without
    ``words`` a hash match is taken as the word itself: a wrong translation then needs a 32-bit
    collision with one of the lexicon's words (about 1 book word in 40,000 for 100K entries).
    """
    out, pages_out, _ = translate_with_source(
        words, pages, dictionary, keep_untranslated, hashes=hashes
    )
    return out, pages_out


def translate_with_source(
    words: Sequence[str] | None,
    pages: np.ndarray,
    dictionary: Dictionary,
    keep_untranslated: bool = True,
    *,
    hashes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``translate_unique`` plus the source word (its position, int64) of each item."""
    lex = _lexicon(dictionary)
    if hashes is None:
        if words is None:
            raise ValueError("translate_unique needs the words or their hashes")
        hashes = hash_words(words)
    hashes = np.asarray(hashes, dtype=np.uint32)
    pages = np.asarray(pages, dtype=np.int32)
    if lex.keys.size == 0 or hashes.size == 0:
        every = np.arange(hashes.size, dtype=np.int64)
        if keep_untranslated:
            return hashes, pages, every
        return hashes[:0], pages[:0], every[:0]
    slot, hit = _lookup(lex.keys, hashes)
    if words is not None:
        # A hash match is confirmed on the word, so no word borrows another's translations.
        candidates = np.flatnonzero(hit)
        entries = lex.entries[slot[candidates]].tolist()
        pairs = zip(entries, candidates.tolist(), strict=True)
        same = [dictionary.words[e] == words[i] for e, i in pairs]
        hit[candidates[~np.asarray(same, dtype=bool)]] = False
    return _expand(hashes, pages, slot, hit, lex.starts, lex.targets, keep_untranslated)


@njit(cache=True, nogil=True)
def _lookup(keys: np.ndarray, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(slot, hit) of each of ``hashes`` in the sorted non-empty ``keys``: slot is
    ``min(np.searchsorted(keys, hashes), keys.size - 1)``, hit whether ``keys[slot]`` is the
    hash. The hashes are visited in sorted order (a radix argsort), each search galloping on
    from the previous one's slot, so it stays in cache lines just read: a binary search of
    each over the whole of a 60K-110K key lexicon missed the cache at most steps
    (~2.8x as long on the real books, benchmarks/bench_translate.py)."""
    n = hashes.size
    slot = np.empty(n, dtype=np.int64)
    hit = np.empty(n, dtype=np.bool_)
    last = keys.size - 1
    lo = 0  # first key >= the previous hash: no later (larger) hash lies before it
    for i in radix_argsort(hashes)[0]:
        q = hashes[i]
        if lo <= last and keys[lo] < q:
            step = 1
            hi = lo + 1
            while hi <= last and keys[hi] < q:  # keys[lo] < q: double the step past it
                lo = hi
                step <<= 1
                hi = lo + step
            hi = min(hi, last + 1)
            lo += 1
            while lo < hi:  # the first key >= q lies in (lo, hi]
                mid = (lo + hi) >> 1
                if keys[mid] < q:
                    lo = mid + 1
                else:
                    hi = mid
        s = min(lo, last)
        slot[i] = s
        hit[i] = keys[s] == q
    return slot, hit


@njit(cache=True, nogil=True)
def _expand(
    hashes: np.ndarray,
    pages: np.ndarray,
    slot: np.ndarray,
    hit: np.ndarray,
    starts: np.ndarray,
    targets: np.ndarray,
    keep: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item replaced by its translations (``targets`` of its ``slot`` where ``hit``, else
    itself when ``keep``), with its page and position: one pass to count and one to write,
    where numpy's repeat/cumsum/where over every item were ~2/3 of a translation (issue 28)."""
    total = 0
    for i in range(hashes.size):
        if hit[i]:
            total += starts[slot[i] + 1] - starts[slot[i]]
        elif keep:
            total += 1
    out = np.empty(total, dtype=np.uint32)
    out_pages = np.empty(total, dtype=np.int32)
    source = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(hashes.size):
        if hit[i]:
            for t in range(starts[slot[i]], starts[slot[i] + 1]):
                out[k] = targets[t]
                out_pages[k] = pages[i]
                source[k] = i
                k += 1
        elif keep:
            out[k] = hashes[i]
            out_pages[k] = pages[i]
            source[k] = i
            k += 1
    return out, out_pages, source


def warm() -> None:
    """Load (or compile) the kernels now, as ``bookdup.bitlcs.warm`` does for its own."""
    hashes = np.zeros(1, dtype=np.uint32)
    slot, hit = _lookup(hashes, hashes)
    _expand(hashes, np.zeros(1, np.int32), slot, hit, np.arange(2), hashes, True)


def in_lexicon(dictionary: Dictionary, hashes: np.ndarray) -> np.ndarray:
    """Whether the lexicon translates each word hash (bool per hash): the others are kept as
    they are by ``translate_with_source`` — names, but also OCR-garbled words."""
    lex = _lexicon(dictionary)
    hashes = np.asarray(hashes, dtype=np.uint32)
    if lex.keys.size == 0:
        return np.zeros(hashes.size, dtype=bool)
    return _lookup(lex.keys, hashes)[1]
