"""Winnowed word-prefix-n-gram fingerprints: candidate keys whose evidence does not fade as N grows.

Unique words (a word seen once in a book) were the keys of same-language candidate queries,
but a word seen once in a volume is rarely seen once in the whole work, and a rare word's
posting list grows with the collection: at 10K generated books related-pair recall had fallen
to 0.82. A run of shared text is a better key. Hashing every word n-gram and keeping the
minimum hash of every window of ``window`` consecutive n-grams (Schleimer, Wilkerson & Aiken,
"Winnowing", SIGMOD 2003) keeps about 2/(window + 1) of them, and two texts sharing any run of
``window + n - 1`` words are guaranteed a common key, whatever else they hold. The selection
depends only on the text around each key, so a copy, a volume or an excerpt selects the same
keys where it shares the text.

The n-grams are of each word's first ``PREFIX`` letters (``text_keys``), not of whole words:
OCR errors fall mostly past a word's second letter, where they leave the key whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from bookdup.arrays import distinct
from bookdup.minhash import fingerprints_from_hashes, word_hashes64

#: Letters of a word a key keeps. Under OCR noise 5 two-letter prefixes survive together as
#: often as 3 whole words or more (real text: 1.0-1.7x), and match by chance less often
#: (real text: about half as often; generated: ~10x less; docs/EVALUATION.md, "Keys from
#: word prefixes").
PREFIX = 2
#: Prefixes per n-gram: 5 (35 bits of a language's prefix entropy) rarely repeat by chance
#: across books once the document frequency band removes common phrases.
NGRAM = 5
#: n-grams per window: any shared run of 20 words gives a common key; ~12 % of positions kept.
WINDOW = 16


def text_keys(vocabulary: Sequence[str], ids: np.ndarray) -> np.ndarray:
    """The winnowed keys of a text given as its ``vocabulary`` and per-position word ``ids``:
    n-grams of each word's first ``PREFIX`` letters (sorted distinct uint32)."""
    prefixes = word_hashes64([word[:PREFIX] for word in vocabulary])
    return winnow(prefixes[np.asarray(ids, dtype=np.intp)])


def winnow(word_hashes: np.ndarray, n: int = NGRAM, window: int = WINDOW) -> np.ndarray:
    """Distinct 32-bit winnowed fingerprints of the word ``n``-grams (sorted uint32).

    ``word_hashes`` are 64-bit per-position word hashes (``bookdup.minhash.word_hashes64``).
    A text shorter than one window keeps its smallest n-gram hash, so a short text still has
    a key (and a text shorter than ``n`` words none).
    """
    if n < 1 or window < 1:
        raise ValueError(f"n and window must be at least 1, not n={n}, window={window}")
    h = np.asarray(word_hashes, dtype=np.uint64)
    if h.size < n:
        return np.zeros(0, np.uint32)
    grams = (fingerprints_from_hashes(h, n) >> np.uint64(32)).astype(np.uint32)
    if grams.size <= window:
        return grams[[int(np.argmin(grams))]]
    minima = sliding_window_view(grams, window).min(axis=1)
    return distinct(minima)


class KeyFrequencies:
    """How many books hold each key, for the keys held by at least two (sorted arrays).

    A key held by one book cannot make a candidate, and a key held by many is a common phrase
    or boilerplate: a query samples its keys from the band between (``band``), so its few
    hundred terms are all keys that can point at another book. Counts are accumulated from
    each book's distinct keys and merged in bounded chunks, so the peak is a few chunks of
    keys rather than every key of the collection at once.
    """

    def __init__(self, keys: np.ndarray, counts: np.ndarray, n_books: int) -> None:
        self.keys = keys  # sorted distinct uint32
        self.counts = counts  # uint32, >= 2
        self.n_books = n_books

    @classmethod
    def from_books(
        cls, per_book: Iterable[np.ndarray], chunk: int = 20_000_000, min_count: int = 2
    ) -> KeyFrequencies:
        """Counts over ``per_book`` (each book's distinct keys); ``chunk`` keys per merge. The
        keys held by fewer than ``min_count`` books are left out (1: every key is kept, so a
        key not in the table is held by none)."""
        tables = cls.by_label((("", keys) for keys in per_book), chunk, min_count)
        return tables.get("") or cls(np.zeros(0, np.uint32), np.zeros(0, np.uint32), 0)

    @classmethod
    def by_label(
        cls,
        per_book: Iterable[tuple[str, np.ndarray]],
        chunk: int = 20_000_000,
        min_count: int = 2,
    ) -> dict[str, KeyFrequencies]:
        """``from_books`` of each label's books ((label, distinct keys) a book, e.g. its
        language), in one pass."""
        merged: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        pending: dict[str, list[np.ndarray]] = {}
        books: dict[str, int] = {}
        size = 0
        for label, book_keys in per_book:
            pending.setdefault(label, []).append(np.asarray(book_keys, dtype=np.uint32))
            books[label] = books.get(label, 0) + 1
            size += pending[label][-1].size
            if size >= chunk:
                for name, arrays in pending.items():
                    merged[name] = _merge(*merged.get(name, _EMPTY), arrays)
                pending, size = {}, 0
        for name, arrays in pending.items():
            merged[name] = _merge(*merged.get(name, _EMPTY), arrays)
        out = {}
        for name, (keys, counts) in merged.items():
            shared = counts >= min_count
            out[name] = cls(keys[shared], counts[shared], books[name])
        return out

    def df(self, keys: np.ndarray) -> np.ndarray:
        """Books holding each of ``keys`` (0 for a key not in the table: held by fewer than
        ``from_books``' ``min_count``, which the table does not tell apart)."""
        keys = np.asarray(keys, dtype=np.uint32)
        if self.keys.size == 0:
            return np.zeros(keys.size, np.uint32)
        pos = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        return np.where(self.keys[pos] == keys, self.counts[pos], 0).astype(np.uint32)

    def band(self, keys: np.ndarray, min_df: int, max_df: int) -> np.ndarray:
        """The ``keys`` held by ``min_df`` … ``max_df`` books (``min_df`` at least 2)."""
        if min_df < 2 or max_df < min_df:
            raise ValueError(f"need 2 <= min_df <= max_df, not {min_df}, {max_df}")
        df = self.df(keys)
        return np.asarray(keys, dtype=np.uint32)[(df >= min_df) & (df <= max_df)]


_EMPTY = (np.zeros(0, np.uint32), np.zeros(0, np.uint32))


def _merge(
    keys: np.ndarray, counts: np.ndarray, pending: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """(keys, counts) plus one count for every key of every array of ``pending``."""
    if not pending:
        return keys, counts
    new = np.concatenate(pending)
    all_keys = np.concatenate((keys, new))
    all_counts = np.concatenate((counts, np.ones(new.size, np.uint32)))
    order = np.argsort(all_keys, kind="stable")
    all_keys, all_counts = all_keys[order], all_counts[order]
    starts = np.flatnonzero(np.concatenate(([True], all_keys[1:] != all_keys[:-1])))
    return all_keys[starts], np.add.reduceat(all_counts, starts).astype(np.uint32)


def consistent_sample(keys: np.ndarray, target: int) -> np.ndarray:
    """The ``keys`` divisible by the smallest power of two that leaves at most ``target``
    (all of them when there are that few): the rule depends only on the key, so two books
    sample the same shared keys."""
    keys = np.asarray(keys, dtype=np.uint32)
    if target < 1:
        raise ValueError(f"target must be at least 1, not {target}")
    modulus = 1
    while np.count_nonzero(keys % np.uint32(modulus) == 0) > target:
        modulus *= 2
    return keys[keys % np.uint32(modulus) == 0]
