"""Feature extraction: contents, flags, degenerate books, JSON round trip, huge books."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bookdup.features import (
    BookFeatures,
    FeatureParams,
    extract_features,
    features_from_doc,
    features_to_doc,
    looks_noisy,
    unique_sample_terms,
)
from bookdup.lsh import choose_bands
from bookdup.minhash import jaccard
from bookdup.model import Book
from bookdup.uniquewords import word_hash


def _vocab(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return sorted({"".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(n)})


def _pages(n_words: int, n_pages: int, seed: int = 0, vocab_size: int = 30_000) -> list[str]:
    """Zipf-distributed text (a few thousand words occur once), split into pages."""
    vocab = np.array(_vocab(vocab_size, seed))
    rng = np.random.default_rng(seed + 1)
    words = vocab[(rng.zipf(1.2, n_words) - 1) % len(vocab)]
    return [" ".join(chunk) for chunk in np.array_split(words, n_pages)]


def _assert_same(a: BookFeatures, b: BookFeatures) -> None:
    assert (a.book_id, a.language, a.n_words, a.n_pages, a.content_hash) == (
        b.book_id,
        b.language,
        b.n_words,
        b.n_pages,
        b.content_hash,
    )
    assert a.language_confidence == pytest.approx(b.language_confidence, abs=1e-4)
    assert a.unique.words == b.unique.words
    assert np.array_equal(a.unique.hashes, b.unique.hashes)
    assert np.array_equal(a.unique.pages, b.unique.pages)
    assert a.minhash.dtype == b.minhash.dtype and np.array_equal(a.minhash, b.minhash)
    assert a.page_minhashes.dtype == b.page_minhashes.dtype
    assert np.array_equal(a.page_minhashes, b.page_minhashes)
    assert a.bands == b.bands and a.flags == b.flags


def test_params_defaults():
    p = FeatureParams()
    assert (p.shingle_k, p.num_perm, p.page_perm, p.page_bits) == (5, 128, 32, 16)
    assert p.bands_rows == choose_bands(128, p.band_threshold) == (25, 5)
    with pytest.raises(AttributeError):
        p.num_perm = 64  # frozen


def test_extract_features_contents():
    pages = ["The cat sat on the mat.", "", "The dog ate the cat's dinner 42 times."]
    f = extract_features(Book("b1", pages, language="en"))
    assert f.book_id == "b1" and f.language == "en" and f.language_confidence == 1.0
    assert f.n_words == 14 and f.n_pages == 3
    assert f.unique.words == ["sat", "on", "mat", "dog", "ate", "s", "dinner", "times"]
    assert f.unique.pages.tolist() == [0, 0, 0, 2, 2, 2, 2, 2]
    assert f.unique.hashes.tolist() == [word_hash(w) for w in f.unique.words]
    assert f.minhash.shape == (128,) and f.minhash.dtype == np.uint32
    assert f.page_minhashes.shape == (3, 32) and f.page_minhashes.dtype == np.uint16
    assert (f.page_minhashes[1] == 0xFFFF).all()
    assert len(f.bands) == 25 and f.flags == ["short"]


def test_language_detected_when_not_declared():
    text = "Es war einmal ein König, der hatte eine Tochter, und die war sehr schön. " * 30
    f = extract_features(Book("de", [text]))
    assert f.language == "de" and f.language_confidence > 0.5


def test_content_hash_ignores_layout_but_not_words():
    a = extract_features(Book("a", ["One two, three.", "Four five"]))
    b = extract_features(Book("b", ["ONE two three four", "", "five!"]))
    c = extract_features(Book("c", ["One two three four six"]))
    assert a.content_hash == b.content_hash != c.content_hash
    assert len(a.content_hash) == 40


def test_editions_share_bands_unrelated_do_not():
    pages = _pages(20_000, 60, seed=1)
    edition = [p.upper() + " 17" for p in pages]  # different case and page numbers
    other = _pages(20_000, 60, seed=2)
    fa, fb, fc = (
        extract_features(Book(i, p)) for i, p in [("a", pages), ("b", edition), ("c", other)]
    )
    assert fa.content_hash == fb.content_hash
    assert fa.bands == fb.bands
    assert not set(fa.bands) & set(fc.bands)
    assert jaccard(fa.minhash, fc.minhash, 32) < 0.05


def test_degenerate_books():
    empty = extract_features(Book("e", []))
    assert empty.flags == ["empty", "no_unique_words", "short"]
    assert empty.n_pages == 0 and empty.page_minhashes.shape == (0, 32)
    assert empty.bands == [] and empty.language == "und"
    blank = extract_features(Book("blank", ["", "12 — 13", "..."]))
    assert blank.flags[:2] == ["empty", "no_unique_words"] and blank.page_minhashes.shape == (3, 32)
    repeated = extract_features(Book("r", ["la la la", "la la"]))
    assert "no_unique_words" in repeated.flags and "empty" not in repeated.flags
    one_page = extract_features(Book("o", ["Война и мир — роман Льва Толстого"]))
    assert one_page.unique.words == ["война", "и", "мир", "роман", "льва", "толстого"]
    assert one_page.n_pages == 1 and len(one_page.bands) == 25


def test_alphabetical_flag():
    words = _vocab(400, seed=3)
    dictionary = [" ".join(f"{w} the of" for w in words[i : i + 40]) for i in range(0, 400, 40)]
    f = extract_features(Book("dict", dictionary))
    assert "alphabetical" in f.flags
    novel = extract_features(Book("novel", _pages(5000, 10, seed=4)))
    assert "alphabetical" not in novel.flags and "short" not in novel.flags


def test_doc_round_trip_and_size():
    pages = _pages(100_000, 330, seed=5)
    f = extract_features(Book("big", pages, title="x"))
    doc = features_to_doc(f)
    text = json.dumps(doc)
    g = features_from_doc(json.loads(text))
    _assert_same(f, g)
    assert doc["unique_words"].split() == f.unique.words
    assert sum(doc["unique_page_counts"]) == len(f.unique)
    # 8.8K unique words (a random vocabulary: real 100K-word books have 3K-5K): 63 KB before
    # the neighbour contexts, one byte per unique word (~9 KB base64 + gzip) after
    assert len(gzip.compress(text.encode())) <= 72 * 1024


@pytest.mark.parametrize("book", [Book("e", []), Book("b", ["", "1 2 3"]), Book("r", ["a a"])])
def test_doc_round_trip_degenerate(book):
    f = extract_features(book)
    _assert_same(f, features_from_doc(json.loads(json.dumps(features_to_doc(f)))))


def test_unique_sample_terms_consistent():
    shared = _pages(3000, 5, seed=6)
    fa = extract_features(Book("a", shared + _pages(3000, 5, seed=7)))
    fb = extract_features(Book("b", _pages(3000, 5, seed=8) + shared))
    ta, tb = unique_sample_terms(fa, 4), unique_sample_terms(fb, 4)
    assert all(len(t) == 8 and int(t, 16) % 4 == 0 for t in ta)
    assert ta == sorted(set(ta))
    assert 0.15 < len(ta) / len(fa.unique) < 0.35  # about one in four
    # the same words are sampled in both books
    common_words = set(fa.unique.words) & set(fb.unique.words)
    expected = {f"{word_hash(w):08x}" for w in common_words if word_hash(w) % 4 == 0}
    assert expected and expected <= set(ta) & set(tb)
    assert unique_sample_terms(fa, 1) == sorted({f"{h:08x}" for h in fa.unique.hashes.tolist()})


def test_chunked_normalisation_gives_same_features():
    pages = _pages(30_000, 90, seed=9)
    a = extract_features(Book("x", pages))
    b = extract_features(Book("x", pages), FeatureParams(chunk_chars=5_000))
    _assert_same(a, b)


_HUGE_BOOK = """
import resource, string, sys, time
sys.path.insert(0, {tests!r})
from test_features import _pages
from bookdup.features import extract_features
from bookdup.model import Book

def tag(i):  # a letters-only word unique to page i
    out = "zzzzzzzzzz"  # longer than any vocabulary word
    while True:
        i, r = divmod(i, 26)
        out += string.ascii_lowercase[r]
        if not i:
            return out

base = _pages(100_000, 320, seed=10)
pages = [p + " " + tag(i) for i, p in enumerate(base * 50)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
f = extract_features(Book("huge", pages))
elapsed = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f.n_words, f.n_pages, len(f.unique), f.unique.pages[-1], elapsed, (after - before) / 1024)
"""


def test_five_million_word_book():
    """A 5M-word, 16K-page book in a fresh process: results and peak memory added by extraction."""
    code = _HUGE_BOOK.format(tests=str(Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    n_words, n_pages, n_unique, last_page, _seconds, added_mb = out.stdout.split()
    assert int(n_words) == 5_000_000 + 16_000 and int(n_pages) == 16_000
    assert int(n_unique) == 16_000 and int(last_page) == 15_999  # only the page tags are unique
    assert float(added_mb) < 1_500  # peak RSS added (the page text itself is ~30 MB)


def test_the_noise_bar_falls_with_a_book_s_length_as_a_clean_book_s_share_does() -> None:
    """Recorded shares of unique words per word: a 5 %-noise anthology of 15,109 words reads
    0.222 and a 5 %-noise book of 5,204 words 0.239 (generated seeds 70 and 75); the longest
    clean books hold fewer hapaxes a word (the 80 real books at most 0.147, the real derived
    set's clean editions 0.175), the shortest more (clean books under 2,000 words up to 0.24)."""

    def noisy(share: float, n_words: int) -> bool:
        return looks_noisy(round(share * n_words), n_words)

    assert noisy(0.222, 15_109) and noisy(0.239, 5_204)
    assert not noisy(0.175, 15_000) and not noisy(0.147, 40_000)
    assert not noisy(0.24, 1_500) and noisy(0.26, 1_500)
    lengths = range(1_000, 60_000, 500)
    bars = [next(k for k in range(n) if looks_noisy(k, n)) / n for n in lengths]
    assert all(b <= a + 1 / n for a, b, n in zip(bars, bars[1:], lengths, strict=False))
    assert max(bars) == pytest.approx(0.25, abs=1e-3) and min(bars) == pytest.approx(0.18, abs=1e-3)
    assert not looks_noisy(0, 0)
