"""Unique words (DUPNIQ): the words that occur exactly once in a book, in reading order.

A 100K-word book has a few thousand of them; they are rare enough to be discriminative and
their order is what the LCS verification aligns. Words are first mapped to integer ids
(a dict over the distinct words, then one C-level ``map`` over all words); counting and
selection are then numpy (``bincount`` and a mask), which is ~3x faster than a Python dict
loop over 100K words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import mmh3
import numpy as np

from bookdup.text import PAGE_BREAK


@dataclass
class UniqueWords:
    """Words seen once in the book, in reading order, with their hashes and 0-based pages.

    ``words`` is None in books loaded for verification only (``features_from_doc(...,
    words=False)``): the strings are 4/5 of a book's memory and alignment needs only hashes.
    """

    words: list[str] | None
    hashes: np.ndarray  # uint32, mmh3 32-bit unsigned of each word
    pages: np.ndarray  # int32, 0-based page of each word
    #: uint32 hashes of each word's Snowball stem (``bookdup.stemming``), for translated
    #: comparison; None when the book's language has no stemmer.
    stems: np.ndarray | None = None
    #: uint8 of each word's neighbours (``neighbour_context``): what tells a different
    #: translation (same names in order, other words around them) from an edition; None for
    #: books indexed before it was stored.
    context: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.hashes.size)


@dataclass
class EncodedBook:
    """A book's words as integer ids: shared input of unique words, shingles and language id."""

    ids: np.ndarray  # int32 id of each word, reading order, all pages concatenated
    page_lengths: np.ndarray  # int64 number of words on each page
    index: dict[str, int]  # word -> id, in order of first occurrence (ids 0, 1, 2, ...)

    @property
    def vocab(self) -> list[str]:
        """id -> word."""
        return list(self.index)

    def counts(self) -> np.ndarray:
        """Occurrences of each vocabulary word."""
        return np.bincount(self.ids, minlength=len(self.vocab))


def word_hash(word: str) -> int:
    """mmh3 32-bit unsigned, seed 0: the hash every module uses for a word."""
    return mmh3.hash(word, 0, signed=False)


def hash_words(words: Sequence[str]) -> np.ndarray:
    """``word_hash`` of each word, as uint32."""
    return np.fromiter(map(mmh3.hash, words), np.int32, len(words)).view(np.uint32)


def encode_joined(chunks: Iterable[Sequence[str]]) -> EncodedBook:
    """Map words to ids (first-occurrence order) from chunks of ``normalise_joined`` output.

    Each chunk is a run of pages separated by ``PAGE_BREAK``; a chunk boundary is a page
    boundary. Page lengths are recovered from the break positions with numpy.
    """
    index: dict[str, int] = {PAGE_BREAK: 0}
    parts: list[np.ndarray] = []
    for words in chunks:
        if parts:
            parts.append(np.zeros(1, np.int32))  # the break between two chunks
        new = [w for w in dict.fromkeys(words) if w not in index]
        index.update(zip(new, range(len(index), len(index) + len(new)), strict=True))
        parts.append(np.fromiter(map(index.__getitem__, words), np.int32, len(words)))
    del index[PAGE_BREAK]
    index = dict(zip(index, range(len(index)), strict=True))
    if not parts:
        return EncodedBook(np.zeros(0, np.int32), np.zeros(0, np.int64), index)
    all_ids = np.concatenate(parts)
    is_break = all_ids == 0
    bounds = np.concatenate(([-1], np.flatnonzero(is_break), [len(all_ids)]))
    return EncodedBook(all_ids[~is_break] - 1, np.diff(bounds) - 1, index)


def encode_pages(pages_words: Sequence[Sequence[str]]) -> EncodedBook:
    """``encode_joined`` for a list of per-page word lists."""
    if not pages_words:
        return encode_joined([])
    flat: list[str] = list(pages_words[0])
    for words in pages_words[1:]:
        flat.append(PAGE_BREAK)
        flat.extend(words)
    return encode_joined([flat])


def neighbour_context(
    ids: np.ndarray, positions: np.ndarray, counts: np.ndarray, vocab_hashes: np.ndarray
) -> np.ndarray:
    """One byte per position: 4 bits of the previous word's hash (low nibble) and of the next
    word's (high), 0 where that neighbour is itself seen once in the book (or absent).

    Two editions put the same words around a unique word; two translations of one work share
    its names and rare words in order, but not the words around them. Neighbours seen once
    are left out because OCR garbage is: a misread "tbe" beside a unique word says nothing
    about the text, a "the" or "said" that the book repeats does. Four bits per neighbour
    (values 1–15: two different words agree by chance 1 time in 15) keep this at one byte per
    unique word in the index.
    """
    n = ids.size
    out = np.zeros(positions.size, dtype=np.uint8)
    if n == 0 or positions.size == 0:
        return out
    fingerprint = (vocab_hashes % np.uint32(15) + np.uint32(1)).astype(np.uint8)
    repeated = counts >= 2
    for shift, step in ((0, -1), (4, 1)):
        at = positions + step
        ok = (at >= 0) & (at < n)
        word = ids[np.clip(at, 0, n - 1)]
        nibble = np.where(ok & repeated[word], fingerprint[word], 0).astype(np.uint8)
        out |= nibble << np.uint8(shift)
    return out


def unique_from_encoded(book: EncodedBook) -> UniqueWords:
    """Unique words of an encoded book (see module docstring), with their neighbour context."""
    counts = book.counts()
    positions = np.flatnonzero(counts[book.ids] == 1)
    page_of_word = np.repeat(np.arange(len(book.page_lengths), dtype=np.int32), book.page_lengths)
    vocab = book.vocab
    vocab_hashes = hash_words(vocab)
    unique_ids = book.ids[positions]
    words = [vocab[i] for i in unique_ids.tolist()]
    context = neighbour_context(book.ids, positions, counts, vocab_hashes)
    return UniqueWords(words, vocab_hashes[unique_ids], page_of_word[positions], context=context)


def unique_words(pages_words: list[list[str]]) -> UniqueWords:
    """Words occurring exactly once in the whole book, reading order, with page numbers."""
    return unique_from_encoded(encode_pages(pages_words))
