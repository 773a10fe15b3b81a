"""Collection boilerplate dropped before scoring, and the page signals of what remains."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from bookdup.boilerplate import boilerplate_mask, common_df, drop_common_words, frequent_df
from bookdup.features import BookFeatures, extract_features
from bookdup.signals import compute_signals
from bookdup.verify import verify_pair
from tests.bookdup.test_signals import book, gutenberg_lines, needs_data

# The books of the read-side tests' index (tests/query/corpus.py), where the bug was seen.
TEN_BOOKS = (
    "alice-en-pg11",
    "alice-en-rackham-pg28885",
    "alice-en-storyland-pg19033",
    "alice-de-zimmermann-pg19778",
    "lookingglass-en-pg12",
    "tomsawyer-en-pg74",
    "tomsawyer-en-part1-pg7193",
    "carol-en-pg46",
    "carol-en-rackham-pg24022",
    "walden-en-pg205",
)


def test_a_back_stretch_runs_to_the_end_and_a_front_one_to_the_start() -> None:
    """Only the densest part of a licence passes the density test; the rest of it, sparser in
    frequent words, goes with it up to the edge of the book. A dense stretch mid-book is the
    book's own text, held by many copies of it (the collection's boilerplate is front or back
    matter)."""
    rng = np.random.default_rng(0)
    frequent = np.arange(1, 1001, dtype=np.uint32)
    prose = rng.choice(np.arange(10_000, 100_000, dtype=np.uint32), 2000, replace=False)
    seq = prose.copy()
    seq[40:100] = frequent[:60]  # a dense header stretch in the front ...
    seq[1700:1800] = frequent[100:200]  # ... a dense licence stretch in the back ...
    seq[1800:2000:4] = frequent[200:250]  # ... whose sparse rest (25 %) runs to the end
    seq[900:960] = frequent[300:360]  # and a dense stretch mid-book: text, not boilerplate
    mask = boilerplate_mask(seq, frequent)
    assert mask[:100].all() and mask[1700:].all()  # to the edges
    assert not mask[120:1680].any()


def test_a_text_the_collection_holds_in_many_copies_is_not_boilerplate() -> None:
    """A work with dozens of editions makes its own words "frequent": its clean edition is one
    dense stretch end to end, far longer than any front or back matter, and keeps all its
    words; a licence-sized stretch at its end is still dropped when the rest is prose."""
    rng = np.random.default_rng(1)
    frequent = np.arange(1, 5001, dtype=np.uint32)
    edition = rng.permutation(frequent)[:3000]  # every word held by the work's many copies
    assert not boilerplate_mask(edition, frequent).any()
    volume = edition[:1200].copy()
    volume[:500] = rng.choice(np.arange(10_000, 100_000, dtype=np.uint32), 500, replace=False)
    assert not boilerplate_mask(volume, frequent).any()  # 700 dense of 1,200: over half
    prose = rng.choice(np.arange(10_000, 100_000, dtype=np.uint32), 3000, replace=False)
    prose[2700:] = frequent[:300]  # a 300-word licence at the end
    mask = boilerplate_mask(prose, frequent)
    assert mask[2700:].all() and not mask[:2650].any()


@cache
def _features(name: str) -> BookFeatures:
    return extract_features(book(name, gutenberg_lines(name)))


@needs_data
def test_a_volume_keeps_its_page_mapping_once_the_collection_boilerplate_is_dropped() -> None:
    """Tom Sawyer part 1 in the whole book, both masked as the dedup job's feature cache does
    in a 10-book collection. Part 1 is short, so more of the licence's words are unique in
    it and its licence is sparser in frequent words: only its middle used to be dropped
    there, all of it in the whole book. The licence's opening stayed on both sides, no longer
    reaching part 1's edge, and was fitted as shared text 200 pages off (slope 4, residual
    43 pages, instead of 1 and half a page). Its text ratio was read on the pages left with
    words, the licence's counted empty: 1.26 of part 1's words per page (stop 52)."""
    held = np.concatenate([np.unique(_features(n).unique.hashes) for n in TEN_BOOKS])
    values, df = np.unique(held, return_counts=True)
    frequent = values[df >= frequent_df(len(TEN_BOOKS))]
    common = np.zeros(0, np.uint32)
    raw_x, raw_y = _features("tomsawyer-en-part1-pg7193"), _features("tomsawyer-en-pg74")
    fx, fy = drop_common_words(raw_x, common, frequent), drop_common_words(raw_y, common, frequent)
    assert len(fx.unique) < len(raw_x.unique) and len(fy.unique) < len(raw_y.unique)
    unmasked = compute_signals(raw_x, raw_y, verify_pair(raw_x, raw_y, threshold=0.0))
    s = compute_signals(fx, fy, verify_pair(fx, fy, threshold=0.0))
    assert 0.95 < unmasked.slope < 1.05  # the unmasked pair, as `bookdup compare` sees it
    assert s.slope == pytest.approx(unmasked.slope, abs=0.02)
    # on words, those before part 1's first aligned word are not covered; on pages they are
    assert s.fit_residual < 1.0 and s.coverage_x > 0.98 and s.coverage_y < 0.3
    assert s.page_coverage_x is not None and s.page_coverage_x > 0.99
    # the masked licence still fills its pages: the same words per page, the same text ratio
    assert (fx.text_pages, fy.text_pages) == (raw_x.text_pages, raw_y.text_pages)
    assert s.text_ratio == pytest.approx(unmasked.text_ratio, abs=0.03)


def test_verification_drops_only_what_half_the_collection_holds() -> None:
    """The queries' stop list follows 5 % of the collection into its vocabulary as it grows;
    verification's must not: at 1,000 generated long books it took 30 % of each book's words
    and 180 of 334 translations. Up to 100 books both floors are the same 50 books, so the 80
    real books are verified as before."""
    from store.candidates import CandidateParams

    params = CandidateParams()
    assert common_df(80) == params.max_df(80) == 50
    for n in (1_000, 3_000, 10_000, 1_000_000):
        assert common_df(n) >= n // 2 > params.max_df(n)


def test_prepared_features_keep_the_query_stop_words() -> None:
    from store.candidates import StopLists
    from store.features import prepare_features

    rng = np.random.default_rng(3)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, 8)) for _ in range(400)]
    f = extract_features(book("a", [" ".join(words[i : i + 10]) for i in range(0, 400, 10)]))
    hashes = np.sort(f.unique.hashes)
    queries_stop, everywhere = hashes[::5], hashes[1::50]
    empty = np.zeros(0, np.uint32)
    stop = StopLists(1000, 50, frozenset(), queries_stop, empty, empty, None, everywhere)
    kept = prepare_features(f, stop).unique.hashes
    assert np.isin(queries_stop, kept).all()
    assert not np.isin(everywhere, kept).any()
    assert kept.size == f.unique.hashes.size - everywhere.size
