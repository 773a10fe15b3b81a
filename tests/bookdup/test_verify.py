"""Pair verification: pruning is safe, scores follow the tables, translations separate."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.dictionary import Dictionary
from bookdup.scores import cs, its
from bookdup.text import normalise_pages
from bookdup.uniquewords import UniqueWords, hash_words, unique_words
from bookdup.verify import shared_positions, verify_pair
from readers.dictionaries import DICTD_DIR, load_dictionary
from tests.bookdup.lcs_reference import lcs_distinct

GUTENBERG = Path(__file__).resolve().parents[3] / "shared" / "data" / "gutenberg"


@dataclass
class Book:
    unique: UniqueWords


def book_of(words: list[str], per_page: int = 10) -> Book:
    pages = np.arange(len(words), dtype=np.int32) // per_page
    return Book(UniqueWords(list(words), hash_words(words), pages))


def test_identical_and_disjoint() -> None:
    words = [f"w{i}" for i in range(200)]
    v = verify_pair(book_of(words), book_of(words), threshold=0.72)
    assert (v.x, v.y, v.shared, v.lcs) == (200, 200, 200, 200)
    assert v.its == 1.0 and v.cs == 1.0
    assert np.array_equal(v.alignment[0], np.arange(200) // 10)
    other = book_of([f"z{i}" for i in range(200)])
    assert verify_pair(book_of(words), other, threshold=0.72) is None
    v = verify_pair(book_of(words), other, threshold=0.0)
    assert (v.shared, v.lcs, v.its, v.cs) == (0, 0, 0.0, 0.0)


@given(st.lists(st.integers(0, 400), max_size=150), st.lists(st.integers(0, 400), max_size=150))
@settings(max_examples=100, deadline=None)
def test_shared_positions_are_where_each_book_holds_each_shared_word(
    a: list[int], b: list[int]
) -> None:
    x, y = list(dict.fromkeys(f"w{i}" for i in a)), list(dict.fromkeys(f"w{i}" for i in b))
    px, py = shared_positions(book_of(x), book_of(y))
    got = {(x[i], y[j]) for i, j in zip(px.tolist(), py.tolist(), strict=True)}
    assert all(u == v for u, v in got) and {u for u, _ in got} == set(x) & set(y)
    assert px.size == len(got)


def test_partial_duplicate_alignment_maps_pages() -> None:
    # y = second half of x followed by new text: a contiguous subset.
    x = [f"w{i}" for i in range(300)]
    y = x[150:] + [f"n{i}" for i in range(100)]
    v = verify_pair(book_of(x), book_of(y), threshold=0.72)
    assert v.lcs == 150 and v.shared == 150
    assert round(v.its, 4) == round(its(150, 300, 250), 4)
    px, py = v.alignment
    assert np.array_equal(px, np.arange(150, 300) // 10)
    assert np.array_equal(py, np.arange(150) // 10)


def test_scores_and_bounds_agree_with_cs() -> None:
    x = [f"w{i}" for i in range(100)]
    y = x[:30] + [f"n{i}" for i in range(70)]
    v = verify_pair(book_of(x), book_of(y), threshold=0.3, score="cs")
    assert v.cs == pytest.approx(0.3)
    assert verify_pair(book_of(x), book_of(y), threshold=0.31, score="cs") is None
    with pytest.raises(ValueError):
        verify_pair(book_of(x), book_of(y), threshold=0.3, score="jaccard")


seqs = st.lists(st.integers(0, 400), min_size=0, max_size=120, unique=True)


@settings(max_examples=400, deadline=None)
@given(a=seqs, b=seqs, t=st.floats(0.0, 1.0), score=st.sampled_from(["its", "cs"]))
def test_pruning_never_changes_decision(a: list[int], b: list[int], t: float, score: str) -> None:
    fa = book_of([f"w{i}" for i in a])
    fb = book_of([f"w{i}" for i in b])
    lcs = lcs_distinct(fa.unique.hashes, fb.unique.hashes)
    full = (its if score == "its" else cs)(lcs, len(a), len(b))
    v = verify_pair(fa, fb, threshold=t, score=score)
    if v is None:
        assert full < t
    else:
        assert v.lcs == lcs
        assert (v.its, v.cs) == (its(lcs, len(a), len(b)), cs(lcs, len(a), len(b)))


@settings(max_examples=200, deadline=None)
@given(a=seqs, b=seqs, t=st.floats(0.0, 1.0))
def test_pruning_is_safe_with_translation(a: list[int], b: list[int], t: float) -> None:
    # Each source word translates to 0-3 target words: the translated side repeats items.
    lex = Dictionary.from_mapping(
        "en", "de", {f"w{i}": [f"w{(i * k) % 401}" for k in range(i % 4)] for i in range(401)}
    )
    fa = book_of([f"w{i}" for i in a])
    fb = book_of([f"w{i}" for i in b])
    v = verify_pair(fa, fb, threshold=t, dictionary=lex)
    full = verify_pair(fa, fb, threshold=0.0, dictionary=lex)
    if v is None:
        assert full.its < t
    else:
        assert (v.lcs, v.shared, v.its) == (full.lcs, full.shared, full.its)


def gutenberg_book(name: str) -> Book:
    text = (GUTENBERG / f"{name}.txt").read_text(encoding="utf-8")
    return Book(unique_words(normalise_pages(text.split("\f"))))


@pytest.mark.skipif(
    not GUTENBERG.exists() or not (DICTD_DIR / "freedict-eng-deu.index").exists(),
    reason="needs the Gutenberg sample and dict-freedict-eng-deu",
)
def test_real_translations_beat_controls() -> None:
    """TRANS on real books (the paper's Egmont experiment, with FreeDict eng-deu).

    Observed: translations 0.66-0.69, controls 0.52-0.54. FreeDict lists ~8 translations per
    English word and the Gutenberg boilerplate (English in every file) aligns by itself, so
    controls score above the paper's 0.49; 0.56 separates here.
    """
    en_de = load_dictionary("en", "de")
    pairs = {
        ("egmont-en-swanwick-pg1945", "egmont-de-pg2146"): True,
        ("alice-en-pg11", "alice-de-zimmermann-pg19778"): True,
        ("tomsawyer-en-pg74", "tomsawyer-de-hellwag-pg30165"): True,
        ("faust1-en-swanwick-pg3023", "egmont-de-pg2146"): False,  # same author (TRANS)
        ("lookingglass-en-pg12", "alice-de-zimmermann-pg19778"): False,  # same author
        ("alice-en-pg11", "verwandlung-de-pg22367"): False,
    }
    scores = {}
    for (a, b), _ in pairs.items():
        v = verify_pair(gutenberg_book(a), gutenberg_book(b), threshold=0.0, dictionary=en_de)
        scores[a, b] = v.its
        if b == "egmont-de-pg2146" and a.startswith("egmont"):
            assert v.shared > 2 * v.lcs > 600  # |X_T ∩ Y| about 2x |LCS|, as in Table 1
    true = [s for k, s in scores.items() if pairs[k]]
    false = [s for k, s in scores.items() if not pairs[k]]
    assert min(true) > 0.64
    assert max(false) < 0.56
    assert min(true) - max(false) > 0.1
    egmont = verify_pair(
        gutenberg_book("egmont-en-swanwick-pg1945"),
        gutenberg_book("egmont-de-pg2146"),
        threshold=0.56,
        dictionary=en_de,
    )
    assert egmont is not None and egmont.its == scores[next(iter(pairs))]


def test_the_prepared_cache_is_bounded_in_bytes() -> None:
    """Issue 30: the cache of prepared sequences evicts by bytes, not only by count; the
    newest entries stay, and so do their hits."""
    from bookdup import verify

    try:
        verify.set_cache_limit(max_bytes=10**12, max_entries=10**6)
        books = [book_of([f"b{b}w{i}" for i in range(2000)]) for b in range(40)]
        base_entries, base_bytes = verify.cache_usage()
        for book in books:
            verify._prepare(book.unique, None)
        entries, held = verify.cache_usage()
        assert entries == base_entries + 40
        one = (held - base_bytes) / 40
        assert one >= 2000 * 28  # 28 bytes an item in arrays (int32 indices), plus the bitset
        verify.set_cache_limit(max_bytes=int(10.5 * one))  # evicts down to 10 now
        assert verify.cache_usage()[0] == 10 and verify.cache_usage()[1] <= 10.5 * one
        for book in books:  # each new one evicts the least recently used
            verify._prepare(book.unique, None)
            assert verify.cache_usage()[1] <= 10.5 * one
        assert verify.cache_usage()[0] == 10
        newest = verify._prepare(books[-1].unique, None)  # a hit: the same object
        assert verify._prepare(books[-1].unique, None) is newest
        # count bound still applies under a large byte bound
        verify.set_cache_limit(max_bytes=10**12, max_entries=5)
        assert verify.cache_usage()[0] == 5
    finally:
        verify.set_cache_limit(verify.DEFAULT_CACHE_BYTES, verify.DEFAULT_CACHE_ENTRIES)


def test_the_prepared_cache_knows_a_book_by_its_content() -> None:
    """Issue 28: a pool worker unpickles new copies of a book with every chunk of pairs; an
    equal copy is the same cache entry (prepared, translated once), a book with the same words
    on other pages is not (its pages are part of what is prepared)."""
    import pickle

    from bookdup import verify

    book = book_of([f"c{i}" for i in range(3000)])
    first = verify._prepare(book.unique, None)
    copy = pickle.loads(pickle.dumps(book))
    assert copy.unique.hashes is not book.unique.hashes
    assert verify._prepare(copy.unique, None) is first
    repaginated = replace(book.unique, pages=book.unique.pages + 1)
    other = verify._prepare(repaginated, None)
    assert other is not first and np.array_equal(other.pages, first.pages + 1)
