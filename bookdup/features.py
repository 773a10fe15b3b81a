"""Everything stored about a book, computed in one pass: the input of indexing and verification.

``extract_features`` normalises the pages in chunks and maps words to integer ids as it goes, so
a 5M-word book never holds 5M word strings at once; unique words, language, shingle
fingerprints and both signature kinds are then computed from the id array.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bookdup.arrays import distinct
from bookdup.langid import ALL_STOPWORDS, detect_language_counts
from bookdup.lsh import band_keys, choose_bands
from bookdup.minhash import (
    fingerprints_from_hashes,
    minhash,
    page_minhashes_from_hashes,
    word_hashes64,
)
from bookdup.model import Book
from bookdup.stemming import stem_hashes
from bookdup.text import normalise_joined
from bookdup.uniquewords import (
    EncodedBook,
    UniqueWords,
    encode_joined,
    hash_words,
    unique_from_encoded,
)
from bookdup.winnow import text_keys

#: Version of what ``extract_features`` stores: 2 added the unique words' neighbour contexts,
#: 3 the winnowed 3-gram keys (``winnows``, books mapping v4), 4 made them word-prefix 5-grams
#: (books mapping v5). A book stored with an older version is extracted again when its file is
#: indexed again, even if the file did not change.
FEATURES_VERSION = 4


@dataclass(frozen=True)
class FeatureParams:
    """All feature knobs in one place (changing any of them means re-indexing)."""

    # Word 5-shingles (Broder/Pugh, Google Books): long enough that common phrases
    # ("one of the most") rarely match by chance, short enough to survive OCR errors.
    shingle_k: int = 5
    # Book signature size: standard error of the Jaccard estimate sqrt(J(1-J)/128) <= 0.044;
    # Google used 100 per book.
    num_perm: int = 128
    # Per-page signature size (Google used 34): pages are small sets, 32 slots suffice
    # to tell matching pages (J ~ 0.8) from unrelated ones (J ~ 0).
    page_perm: int = 32
    # b-bit page signatures (Li & König): 16 bits make accidental collisions 2^-16 while halving
    # storage against 32 bits; 330 pages x 32 x 2 B = 21 KB per book.
    page_bits: int = 16
    # Band threshold: editions of one text have shingle Jaccard well above 0.5 (P(candidate)
    # > 0.99 at 0.7) while unrelated books sharing only boilerplate stay below 0.1
    # (P < 0.0002). Partial copies with lower Jaccard are found by unique-word terms instead.
    band_threshold: float = 0.5
    # Fewer words than this: too little text for reliable signatures, flag "short".
    short_words: int = 1000
    # "alphabetical" flag (word lists, dictionaries, indexes: DUPNIQ's false matches): at least
    # this many unique words, of which this fraction of adjacent pairs is in sorted order
    # (random text gives ~0.5).
    alphabetical_min_words: int = 50
    alphabetical_fraction: float = 0.8
    # Characters of page text normalised per chunk: bounds the word strings alive at once.
    chunk_chars: int = 4_000_000

    @property
    def bands_rows(self) -> tuple[int, int]:
        """LSH (bands, rows) for ``num_perm`` at ``band_threshold``."""
        return choose_bands(self.num_perm, self.band_threshold)


@dataclass
class BookFeatures:
    """What is indexed (bands, sampled unique-word terms) and stored (the rest) for a book."""

    book_id: str
    language: str
    language_confidence: float
    n_words: int
    n_pages: int
    content_hash: str
    unique: UniqueWords
    minhash: np.ndarray  # uint32[num_perm]
    page_minhashes: np.ndarray  # uint16[n_pages, page_perm], b-bit
    bands: list[str]
    flags: list[str] = field(default_factory=list)
    #: sorted distinct winnowed word-prefix 5-gram keys (``bookdup.winnow``), the same-language
    #: candidate keys; indexed as terms, not kept in the stored features (empty when read back)
    winnows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    #: The book's pages of text counted before the collection's masks took words out of them
    #: (``bookdup.boilerplate.drop_positions``); None: count them now (``text_pages``).
    masked_from_pages: float | None = None

    @property
    def text_pages(self) -> float:
        """Pages of text (``text_pages``), as printed: a masked licence still fills its pages,
        and Tom Sawyer's first part read 1.26 of its words per page against the whole book
        with its licence's 7 pages counted as empty."""
        if self.masked_from_pages is not None:
            return self.masked_from_pages
        return text_pages(self.unique.pages, int(self.n_pages))


def text_pages(word_pages: np.ndarray, n_pages: int) -> float:
    """The book's pages counted by their text: a page with fewer unique words than its median
    page counts as that share of a page (a title page, a volume's last lines), so that words
    per page are those of a full page. A 5-page volume whose text fills 3.1 pages read as 5
    put its words per page 40 % low, and its text ratio against its own work at 0.6."""
    counts = np.bincount(word_pages, minlength=n_pages)[:n_pages].astype(np.float64)
    held = counts[counts > 0]
    if held.size == 0:
        return float(n_pages)
    return float(np.minimum(1.0, counts / np.median(held)).sum())


#: Unique words per word above which a book of ``SHORT_BOOK_WORDS`` or fewer reads as noisy:
#: the 80 real books 0.02-0.13, generated books 0.09-0.32 clean and 0.28-0.48 at 10 % noise.
NOISY_UNIQUE_SHARE = 0.25
SHORT_BOOK_WORDS = 2_000
#: A clean text's hapaxes grow slower than its length, so a longer clean book's share falls,
#: while noise adds garbled words at its own rate: the bar falls as (n / 2,000)^-0.2, to
#: ``LONG_NOISY_UNIQUE_SHARE``. Generated books at every length from 2,000 to 20,000 words:
#: clean ones' 90th percentile 0.10-0.19, those at 5 % noise 0.19-0.26 at least (the
#: translations of a clean set run 0.25-0.36, noisy at any bar); the 80 real books
#: 0.013-0.147, the real derived set's clean editions up to 0.175 (stop 59).
NOISY_SHARE_FALL = 0.2
LONG_NOISY_UNIQUE_SHARE = 0.18


def looks_noisy(n_unique: int, n_words: int) -> bool:
    """Whether a book's share of unique words says OCR noise (garbled words are hapaxes),
    against a bar that falls with the book's length as a clean book's share does."""
    if n_words <= 0:
        return False
    fall = (max(n_words, SHORT_BOOK_WORDS) / SHORT_BOOK_WORDS) ** -NOISY_SHARE_FALL
    return n_unique / n_words >= max(LONG_NOISY_UNIQUE_SHARE, NOISY_UNIQUE_SHARE * fall)


def _normalised_chunks(pages: Sequence[str], chunk_chars: int) -> Iterator[list[str]]:
    """``normalise_joined`` over runs of pages of about ``chunk_chars`` characters."""
    start = 0
    while start < len(pages):
        end, size = start, 0
        while end < len(pages) and (end == start or size + len(pages[end]) <= chunk_chars):
            size += len(pages[end])
            end += 1
        yield normalise_joined(pages[start:end])
        start = end


def _content_hash(enc: EncodedBook) -> str:
    """sha1 of the normalised word sequence, pagination ignored.

    Ids are assigned in first-occurrence order, so (ids, vocabulary) determines the word
    sequence and vice versa: hashing them is hashing the words, without joining 5M strings.
    """
    digest = hashlib.sha1(np.ascontiguousarray(enc.ids, dtype="<i4").tobytes())
    digest.update("\n".join(enc.index).encode("utf-8"))
    return digest.hexdigest()


def _is_alphabetical(words: Sequence[str], params: FeatureParams) -> bool:
    if len(words) < params.alphabetical_min_words:
        return False
    in_order = sum(a <= b for a, b in zip(words, words[1:], strict=False))
    return in_order / (len(words) - 1) > params.alphabetical_fraction


def extract_features(book: Book, params: FeatureParams = FeatureParams()) -> BookFeatures:  # noqa: B008
    """Normalise, identify the language, and compute unique words and signatures of a book.

    ``content_hash`` depends only on the normalised word sequence: equal hashes mean the same
    text whatever its layout.
    """
    enc = encode_joined(_normalised_chunks(book.pages, params.chunk_chars))
    n_words = len(enc.ids)
    if book.language:
        language, confidence = book.language, 1.0
    else:
        counts = enc.counts()
        index = enc.index
        stop_counts = {w: int(counts[index[w]]) for w in ALL_STOPWORDS if w in index}
        language, confidence = detect_language_counts(stop_counts)
    unique = unique_from_encoded(enc)
    unique.stems = stem_hashes(unique.words or (), language)
    h64 = word_hashes64(enc.vocab)[enc.ids]
    sig = minhash(fingerprints_from_hashes(h64, params.shingle_k), params.num_perm)
    pages_sig = page_minhashes_from_hashes(
        h64, enc.page_lengths, params.page_perm, params.shingle_k, params.page_bits
    )
    flags = []
    if n_words == 0:
        flags.append("empty")
    if len(unique) == 0:
        flags.append("no_unique_words")
    if n_words < params.short_words:
        flags.append("short")
    if unique.words is not None and _is_alphabetical(unique.words, params):
        flags.append("alphabetical")
    bands = band_keys(sig, *params.bands_rows) if n_words else []
    return BookFeatures(
        book_id=book.id,
        language=language,
        language_confidence=confidence,
        n_words=n_words,
        n_pages=len(book.pages),
        content_hash=_content_hash(enc),
        unique=unique,
        minhash=sig,
        page_minhashes=pages_sig,
        bands=bands,
        flags=flags,
        winnows=text_keys(enc.vocab, enc.ids),
    )


def _b64(a: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _unb64(s: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), dtype=dtype).copy()


def features_to_doc(f: BookFeatures) -> dict[str, Any]:
    """Compact JSON-able form: words space-joined, pages as per-page counts, arrays base64 LE."""
    page_counts = np.bincount(f.unique.pages, minlength=f.n_pages)
    return {
        "book_id": f.book_id,
        "language": f.language,
        "language_confidence": round(f.language_confidence, 4),
        "n_words": f.n_words,
        "n_pages": f.n_pages,
        "content_hash": f.content_hash,
        "unique_words": " ".join(f.unique.words or ()),
        "unique_page_counts": page_counts.tolist(),
        **(
            {"unique_context": _b64(f.unique.context, "u1")} if f.unique.context is not None else {}
        ),
        "minhash": _b64(f.minhash, "<u4"),
        "page_minhashes": _b64(f.page_minhashes, "<u2"),
        "page_perm": int(f.page_minhashes.shape[1]),
        "bands": list(f.bands),
        "flags": list(f.flags),
    }


def features_from_doc(d: dict[str, Any], *, words: bool = True) -> BookFeatures:
    """Inverse of ``features_to_doc`` (unique-word hashes and stems are recomputed from the
    words, so books indexed before stems existed get them too; their neighbour context, which
    needs the full text, stays None until they are indexed again).

    ``words=False`` keeps only the hashes (``unique.words`` None): a dedup job caches
    thousands of books for verification, ~100 KB each without the strings against ~800 KB.
    A noisy book (``bookdup.noisy.looks_noisy``) keeps its words: its pairs under the floor
    are re-read with one-edit matches.
    """
    split = d["unique_words"].split()
    counts = np.asarray(d["unique_page_counts"], dtype=np.int64)
    pages = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    page_sigs = _unb64(d["page_minhashes"], "<u2").astype(np.uint16)
    context = _unb64(d["unique_context"], "u1") if "unique_context" in d else None
    return BookFeatures(
        book_id=d["book_id"],
        language=d["language"],
        language_confidence=float(d["language_confidence"]),
        n_words=int(d["n_words"]),
        n_pages=int(d["n_pages"]),
        content_hash=d["content_hash"],
        unique=UniqueWords(
            split if words or looks_noisy(len(split), int(d["n_words"])) else None,
            hash_words(split),
            pages,
            stem_hashes(split, d["language"]),
            context if context is not None and context.size == len(split) else None,
        ),
        minhash=_unb64(d["minhash"], "<u4").astype(np.uint32),
        page_minhashes=page_sigs.reshape(int(d["n_pages"]), int(d["page_perm"])),
        bands=list(d["bands"]),
        flags=list(d["flags"]),
    )


def hex_terms(hashes: np.ndarray) -> list[str]:
    """32-bit hashes as the 8-hex-digit keyword terms every key field holds."""
    return [f"{x:08x}" for x in np.asarray(hashes, dtype=np.uint32).tolist()]


def terms_to_hashes(terms: Sequence[str]) -> np.ndarray:
    """Inverse of ``hex_terms``, vectorised: a book's 7,000 keys are read back on every run."""
    if not terms:
        return np.zeros(0, np.uint32)
    digits = np.frombuffer("".join(terms).encode("ascii"), dtype=np.uint8).reshape(-1, 8)
    nibbles = np.where(digits >= ord("a"), digits - (ord("a") - 10), digits - ord("0"))
    shifts = np.arange(28, -1, -4, dtype=np.uint32)
    return (nibbles.astype(np.uint32) << shifts).sum(axis=1, dtype=np.uint32)


def unique_sample_terms(f: BookFeatures, modulus: int) -> list[str]:
    """Unique-word hashes with ``h % modulus == 0`` as sorted 8-hex-digit keyword terms.

    The sample depends only on the word, so two books sample the same shared words.
    """
    h = f.unique.hashes
    return [f"{x:08x}" for x in distinct(h[h % np.uint32(modulus) == 0]).tolist()]


#: Stems are indexed as a consistent sample: the distinct stem hashes divisible by this (a
#: power of two), so that a translated query sampling hashes divisible by any power of two at
#: least this large finds every book holding its sampled stems (``store.candidates``).
STEM_MODULUS = 2


def stem_sample(stems: np.ndarray | None, modulus: int = STEM_MODULUS) -> list[str]:
    """Distinct stem hashes with ``h % modulus == 0`` as sorted 8-hex-digit keyword terms
    (none for a language without a stemmer)."""
    if stems is None:
        return []
    h = np.asarray(stems, dtype=np.uint32)
    return [f"{x:08x}" for x in distinct(h[h % np.uint32(modulus) == 0]).tolist()]


def stem_sample_from_doc(d: dict[str, Any], modulus: int = STEM_MODULUS) -> list[str]:
    """``stem_sample`` of stored features (``features_to_doc``): what a migration gives a book
    indexed before the stems field existed."""
    return stem_sample(stem_hashes(d.get("unique_words", "").split(), d["language"]), modulus)
