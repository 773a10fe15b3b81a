"""Relation signals on constructed cases from real Gutenberg text, and their building blocks."""

from __future__ import annotations

import json
import pickle
import random
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from bookdup.classify import CLASSIFIER_PARAMS, classify
from bookdup.collection import BooksInMemory
from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.signals import (
    RelationSignals,
    SignalParams,
    _abridgement_ends,
    _bridged,
    _covered_share,
    _dense_enough,
    _open_end,
    _rest_sample,
    _skip_ends,
    _trim_edges,
    block_test,
    compute_signals,
    end_test,
    page_signature_matches,
    shared_runs,
)
from bookdup.verify import Verification, detached, verify_pair

GUTENBERG = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gutenberg"
needs_data = pytest.mark.skipif(not GUTENBERG.is_dir(), reason="Gutenberg corpus absent")


def gutenberg_lines(name: str) -> list[str]:
    """Lines of one corpus book (``name`` without ``.txt``)."""
    return (GUTENBERG / f"{name}.txt").read_text(encoding="utf-8").splitlines()


def paginate(lines: list[str], per_page: int) -> list[str]:
    """Pages of ``per_page`` lines each."""
    return ["\n".join(lines[i : i + per_page]) for i in range(0, len(lines), per_page)]


def ocr_noise(lines: list[str], rate: float, seed: int = 0) -> list[str]:
    """Uniform character insert/delete/replace at ``rate`` per character (the papers' model)."""
    rnd = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for line in lines:
        chars: list[str] = []
        for ch in line:
            if rnd.random() >= rate:
                chars.append(ch)
                continue
            op = rnd.randrange(3)
            if op == 0:
                chars += [rnd.choice(letters), ch]
            elif op == 2:
                chars.append(rnd.choice(letters))
        out.append("".join(chars))
    return out


def book(book_id: str, lines: list[str], per_page: int = 40) -> Book:
    return Book(book_id, paginate(lines, per_page))


def signals_of(a: Book, b: Book) -> RelationSignals:
    fa, fb = extract_features(a), extract_features(b)
    return compute_signals(fa, fb, verify_pair(fa, fb, threshold=0.0))


@pytest.fixture(scope="module")
def alice() -> list[str]:
    if not GUTENBERG.is_dir():
        pytest.skip("Gutenberg corpus absent")
    return gutenberg_lines("alice-en-pg11")


@needs_data
def test_identical_copy_signals(alice):
    s = signals_of(book("a", alice), book("b", alice))
    assert s.same_content and s.book_similarity == 1.0
    assert s.slope == pytest.approx(1.0) and abs(s.offset) < 1e-6 and s.delta_pages == 0
    assert s.consecutive_corr == 0.0 and s.page_agreement == 1.0
    assert s.coverage_x == s.coverage_y == 1.0 and s.page_match_fraction == 1.0
    assert s.cs == 1.0 and s.lcs == s.x == s.y
    assert json.loads(json.dumps(s.to_dict()))["slope"] == 1.0


@needs_data
def test_repaginated_copy_has_slope_of_page_ratio_and_straddles(alice):
    s = signals_of(book("a", alice, 40), book("b", alice, 55))
    assert s.same_content
    assert s.slope == pytest.approx(40 / 55, abs=0.02)
    assert abs(s.offset) < 1.0
    assert s.delta_pages == len(paginate(alice, 40)) - len(paginate(alice, 55))
    assert s.consecutive_corr > 0.3  # Google: > 0 for different pagination
    assert s.page_agreement < 0.9 and s.sequential_fraction > 0.9
    assert s.coverage_x > 0.95 and s.coverage_y > 0.95


@needs_data
def test_a_copy_on_pages_three_times_longer_maps_its_pages_in_sequence(alice):
    """Each page of x spans 3 pages of y, 2 of them whole, and either can hold most of its
    aligned words: its best page advances by 2 to 4, not always by 3. A sequential mapping
    allows that spread (it read 0.52 and the copy OVERLAPPING_TEXT, as the demo's one wrong
    class at slope 2.2)."""
    s = signals_of(book("a", alice, 120), book("b", alice, 40))
    assert s.slope == pytest.approx(3.0, abs=0.05)
    assert s.sequential_fraction > 0.8
    assert classify(s).relation == "DIFFERENT_PAGINATION"


@needs_data
def test_noisy_copy_keeps_page_identity(alice):
    s = signals_of(book("noisy", ocr_noise(alice, 0.05)), book("clean", alice))
    assert not s.same_content
    assert s.book_similarity < 0.4  # 5% character noise breaks most 5-shingles ...
    assert s.slope == pytest.approx(1.0, abs=0.01) and abs(s.offset) < 0.5  # ... not the pages
    assert s.page_agreement > 0.97 and s.consecutive_corr < 0.05
    assert min(s.coverage_x, s.coverage_y) > 0.95


def reset_pages(lines: list[str], per_page: int, drift: int) -> list[str]:
    """Pages of ``per_page`` lines whose breaks move ``drift`` lines later on every other page
    and back on the next: a re-set edition on as many pages as the original."""
    pages, at, n = [], 0, 0
    while at < len(lines):
        size = per_page + (drift if n % 2 == 0 else -drift)
        pages.append("\n".join(lines[at : at + size]))
        at, n = at + size, n + 1
    return pages


@needs_data
def test_a_rescan_breaks_its_pages_where_the_original_does(alice):
    """The same pages under 10 % noise: every page break of one book falls at the same
    aligned word as the other's. A re-set edition drifting by two lines keeps 0.98 of each
    page's words on its page, as a rescan would, but some of its breaks fall apart."""
    clean = book("clean", alice)
    rescan = signals_of(book("noisy", ocr_noise(alice, 0.1)), clean)
    assert rescan.page_breaks > 100 and rescan.page_breaks_apart == 0
    assert classify(rescan).relation == "SAME_PAGINATION"
    reset = signals_of(Book("reset", reset_pages(alice, 40, 2)), clean)
    assert reset.n_pages_x == rescan.n_pages_x and reset.page_agreement > 0.975
    assert reset.page_breaks_apart >= 3
    assert classify(reset).relation == "DIFFERENT_PAGINATION"


@needs_data
def test_volume_coverage_tells_direction(alice):
    volume = alice[: int(len(alice) * 0.4)]
    s = signals_of(book("vol", volume), book("set", alice))
    assert s.coverage_x > 0.95
    assert 0.3 < s.coverage_y < 0.55 and s.contiguity_y == 1.0
    assert s.span_y < 0.5 and s.slope == pytest.approx(1.0, abs=0.01)
    assert s.delta_page_count > 0.5 * s.n_pages_y  # Google eq. 3: y goes on past x's end


@needs_data
def test_gutenberg_licence_is_not_shared_text():
    """Unrelated PG books align on their licence; it is recognised as back matter."""
    a = book("alice", gutenberg_lines("alice-en-pg11"))
    b = book("lookingglass", gutenberg_lines("lookingglass-en-pg12"))
    s = signals_of(a, b)
    assert s.lcs > 200  # the licence alone aligns hundreds of unique words
    assert s.coverage_x < 0.05 and s.coverage_y < 0.05


@needs_data
def test_a_licence_opening_one_book_and_closing_the_other_is_not_shared_text():
    """An older PG etext opens with the licence a newer one closes with: front matter of
    one, back matter of the other. Among 3,080 books, where the collection no longer drops
    the licence, such pairs of German books were related OVERLAPPING_TEXT by it alone."""
    a = book("egmont", gutenberg_lines("egmont-de-pg2146"))  # the licence in front
    b = book("hamlet", gutenberg_lines("hamlet-de-wieland-pg7276"))  # ... at the back
    for x, y in ((a, b), (b, a)):
        s = signals_of(x, y)
        assert s.lcs > 150  # the licence aligns as many unique words either way ...
        assert s.n_page_matches == 0 and s.coverage_x == s.coverage_y == 0.0  # ... a frame


@needs_data
def test_an_anthology_opening_with_a_works_last_part_shares_text():
    """The last 42 % of a short work opening an anthology: back matter of one book, front
    matter of the other, and fewer aligned words than ``frame_max_words``, as a licence
    crossing from one edge to the other. A crossed frame stays in the back quarter of the
    book it ends (generated seed 61 lost 5 such overlaps at 10 % noise without that)."""
    work = gutenberg_lines("pride-en-chapman-pg42671")[300:2300]  # without PG's licence
    other = gutenberg_lines("sketchbook-en-pg2048")[300:4300]
    excerpt = work[int(len(work) * 0.58) :]
    fa = extract_features(book("work", work))
    fb = extract_features(book("anthology", excerpt + other))
    verification = verify_pair(fa, fb, threshold=0.0)
    s = compute_signals(fa, fb, verification)
    assert 100 < s.n_page_matches < SignalParams().frame_max_words
    assert 0.4 < s.coverage_x < 0.5 and 0.05 < s.coverage_y < 0.2
    at_half = replace(SignalParams(), frame_crossed_back=0.5)  # the back frame's allowance
    assert compute_signals(fa, fb, verification, params=at_half).coverage_x == 0.0


def test_page_signature_matches_best_page_above_threshold():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 1 << 16, size=(5, 32), dtype=np.uint16)
    y = np.vstack([x[3], rng.integers(0, 1 << 16, size=(2, 32), dtype=np.uint16), x[1]])
    y[0, :8] += 1  # page 3 of x matches y[0] at 24/32
    px, py, sim = page_signature_matches(x, y, threshold=0.5)
    assert px.tolist() == [1, 3] and py.tolist() == [3, 0]
    assert sim.tolist() == pytest.approx([1.0, 0.75], abs=1e-3)
    empty = np.full((2, 32), 0xFFFF, dtype=np.uint16)
    assert page_signature_matches(empty, empty)[0].size == 0  # empty pages never match


@needs_data
def test_page_signatures_used_without_alignment(alice):
    fa = extract_features(book("a", alice, 40))
    fb = extract_features(book("b", alice, 40))
    s = compute_signals(fa, fb, None, params=SignalParams())
    assert s.lcs == 0 and s.slope == pytest.approx(1.0) and s.page_match_fraction > 0.9


@needs_data
def test_an_anthology_ending_with_a_works_last_part_shares_text():
    """The last 40 % of a work closing an anthology sits where a licence would (the back of
    both books) but aligns hundreds of unique words more than any licence: shared text."""
    work = gutenberg_lines("pride-en-chapman-pg42671")[300:13350]  # without PG's licence
    other = gutenberg_lines("sketchbook-en-pg2048")[300:6300]  # the excerpt starts past half
    excerpt = work[int(len(work) * 0.6) :]
    s = signals_of(book("work", work), book("anthology", other + excerpt))
    assert s.lcs > SignalParams().frame_max_words
    assert 0.3 < s.coverage_x < 0.5 and 0.1 < s.coverage_y < 0.35  # 0 and 0 as a frame


@needs_data
def test_an_excerpt_stopping_before_its_works_end_is_not_a_licence():
    """An anthology closing with a stretch of a work that stops 8 % before the work's end:
    at the back of both books and shorter than ``frame_max_words``, but a licence is the
    last text of both files, so this is shared text (issue 29: 0 and 0 as a frame)."""
    work = gutenberg_lines("pride-en-chapman-pg42671")[300:2300]  # without PG's licence
    other = gutenberg_lines("sketchbook-en-pg2048")[300:2300]
    excerpt = work[int(len(work) * 0.6) : int(len(work) * 0.92)]
    fa = extract_features(book("work", work))
    fb = extract_features(book("anthology", other + excerpt))
    verification = verify_pair(fa, fb, threshold=0.0)
    s = compute_signals(fa, fb, verification)
    assert 100 < s.n_page_matches < SignalParams().frame_max_words
    assert 0.28 < s.coverage_x < 0.36 and 0.1 < s.coverage_y < 0.2  # the 32 % excerpt
    at_ten = replace(SignalParams(), frame_back_edge=0.1)  # the back edge as wide as the front
    assert compute_signals(fa, fb, verification, params=at_ten).coverage_x == 0.0


@needs_data
def test_a_frame_is_boilerplate_only_where_the_collection_holds_it_apart():
    """An anthology closing with a work's last pages aligns as few words at the back of both
    books as a licence does: compared alone it is a frame. In a collection, only the work's
    editions hold that text besides the pair, so it is shared text; a licence is held by
    unrelated books too, so it stays boilerplate (the 80 real books: every licence-only pair
    has such a holder; generated anthologies: none but editions)."""
    work = gutenberg_lines("pride-en-chapman-pg42671")[300:2300]  # without PG's licence
    excerpt = work[int(len(work) * 0.8) :]
    fa = extract_features(book("work", work))
    fb = extract_features(
        book("anthology", gutenberg_lines("sketchbook-en-pg2048")[300:2300] + excerpt)
    )
    edition = extract_features(book("edition", work, per_page=30))
    v = verify_pair(fa, fb, threshold=0.0)
    assert compute_signals(fa, fb, v).coverage_x == 0.0  # alone: a frame
    s = compute_signals(fa, fb, v, collection=BooksInMemory([fa, fb, edition]))
    assert 100 < s.n_page_matches < SignalParams().frame_max_words
    assert 0.15 < s.coverage_x < 0.3 and s.coverage_y > 0.05  # the 20 % excerpt

    names = (
        "alice-en-pg11",
        "lookingglass-en-pg12",
        "tomsawyer-en-part1-pg7193",
        "pinocchio-it-pg52484",
    )
    pg = [extract_features(book(n, gutenberg_lines(n))) for n in names]
    v = verify_pair(pg[0], pg[1], threshold=0.0)
    s = compute_signals(pg[0], pg[1], v, collection=BooksInMemory(pg))
    assert s.lcs > 200 and s.coverage_x < 0.05 and s.coverage_y < 0.05  # held by both others
    alone = compute_signals(pg[0], pg[1], v, collection=BooksInMemory(pg[:2]))
    assert alone.coverage_x > 0.05  # no third book holds it: nothing tells it from text


@needs_data
def test_words_per_page_are_a_full_pages(alice):
    """A short volume printed denser than its work, with a title page and a last page of a
    few lines: its text ratio against the work is ~1 (the same words where they align), not
    what its page count says (3.2 pages of text on 5 pages read as 0.65)."""
    work = alice[60:3350]
    pages = ["ALICE'S ADVENTURES IN WONDERLAND\nVolume the first", *paginate(work[:220], 70)]
    s = signals_of(Book("volume", pages), book("work", work, per_page=40))
    assert s.text_ratio == pytest.approx(1.0, abs=0.12)


def _without_positions(v: Verification) -> Verification:
    return replace(v, _positions=None)


@needs_data
def test_coverage_of_a_partly_covered_page_counts_partly(alice):
    """A volume ending mid-page of its work covers that page for the words it reaches: its
    coverage of the work is its share of the work's unique words, not its pages' share; its
    page coverage (the abridgement's) counts the page whole."""
    work = alice[60:3350]
    cut = int(len(work) * 0.45)  # ends in the middle of the work's second 1000-line page
    fa = extract_features(book("volume", work[:cut]))
    fb = extract_features(book("work", work, 1000))
    v = verify_pair(fa, fb, threshold=0.0)
    words = compute_signals(fa, fb, v)
    pages = compute_signals(fa, fb, _without_positions(v))  # whole pages
    share = np.count_nonzero(np.isin(fb.unique.hashes, fa.unique.hashes)) / len(fb.unique)
    assert words.coverage_y == pytest.approx(share, abs=0.05)
    assert pages.coverage_y > words.coverage_y + 0.1  # page 2 counted whole
    assert words.coverage_x == pytest.approx(1.0, abs=0.02) and words.contiguity_y == 1.0
    assert (words.span_y, words.slope) == (pages.span_y, pages.slope)  # pages still pages
    # the abridgement's cover stays on pages, kept beside the coverage on words
    assert words.page_coverage_y == pytest.approx(pages.coverage_y)
    assert pages.page_coverage_y == pytest.approx(pages.coverage_y)


@needs_data
def test_a_detached_verification_keeps_the_aligned_positions(alice):
    """What a worker process hands the dedup job's driver gives the same signals."""
    fa = extract_features(book("volume", alice[60 : 60 + 1500]))
    fb = extract_features(book("work", alice[60:3350], 1000))
    v = verify_pair(fa, fb, threshold=0.0)
    back: Verification = pickle.loads(pickle.dumps(detached(v)))
    assert back.positions is not None and v.positions is not None
    assert all(np.array_equal(g, w) for g, w in zip(back.positions, v.positions, strict=True))
    assert back.positions[0].dtype == np.int32  # small: the pages' size
    assert compute_signals(fa, fb, back) == compute_signals(fa, fb, v)


def test_runs_a_few_words_apart_cover_the_words_between():
    """On word positions, the words between two runs of a book at most ``max_gap`` apart are
    covered (noise or the other book's cut broke the run there); a farther gap is not."""
    units = np.array([0, 5, 9, 30, 40, 49, 150, 160, 199])  # runs 0-9, 30-49, 150-199
    runs = [slice(0, 3), slice(3, 6), slice(6, 9)]
    weight = np.ones(200)
    assert _covered_share(units, runs, [], weight, 0) == pytest.approx((0.4, 50 / 80))
    assert _covered_share(units, runs, [], weight, 20) == pytest.approx((0.5, 0.5))
    front = [(slice(0, 3), "front")]  # a frame's words are out of the total
    assert _covered_share(units, runs[1:], front, weight, 20)[0] == pytest.approx(70 / 190)
    bridged = _covered_share(units, runs, [], weight, 20, frozenset({1}))
    assert bridged == pytest.approx((1.0, 0.25))  # covered throughout; the longest run a quarter


def test_a_gap_both_books_skip_alike_is_covered_a_one_sided_one_is_not():
    """Between two runs, ~250 words skipped in both books is text both hold that noise
    garbled; 250 in one and 12 in the other is text one book lacks (an abridgement's cut).
    Gaps are read on one scale: a book printing half the words where they align skips half."""
    ox = np.array([0.0, 25, 50, 290, 315, 340, 590, 615])
    oy = np.array([0.0, 25, 50, 295, 320, 345, 357, 382])
    runs = [slice(0, 3), slice(3, 6), slice(6, 8)]
    assert _bridged(runs, (ox, oy), SignalParams()) == frozenset({0})
    assert _bridged(runs, None, SignalParams()) == frozenset()
    assert _bridged(runs, (ox, oy), SignalParams(bridge_words=200)) == frozenset()
    assert _bridged(runs[:2], (ox, oy * 0.5), SignalParams()) == frozenset({0})


def test_chance_matches_at_a_runs_edges_are_trimmed():
    """Recorded (generated seed 62, 10 % noise, offsets in words on one scale): the shared
    text's run picks up one chance match before it and two after it, 340-990 words off in the
    abridgement, 19-108 in the volume; the run keeps the shared text. A run of even steps,
    or of steps one book takes at twice the other's length, is whole."""
    dx = [
        647,
        20,
        40,
        40,
        40,
        25,
        51,
        5,
        56,
        66,
        5,
        15,
        147,
        10,
        5,
        5,
        56,
        10,
        10,
        35,
        113,
        341,
        985,
    ]
    dy = [31, 15, 10, 222, 17, 10, 23, 2, 17, 31, 2, 8, 300, 4, 2, 2, 24, 4, 4, 14, 38, 19, 108]
    ox, oy = np.cumsum([0.0, *dx]), np.cumsum([0.0, *dy])
    assert _trim_edges(slice(0, 24), ox, oy, SignalParams()) == slice(1, 22)
    even = np.arange(0.0, 1100, 100)
    assert _trim_edges(slice(0, 11), even, even + 3, SignalParams()) == slice(0, 11)
    assert _trim_edges(slice(0, 11), even * 2, even, SignalParams()) == slice(0, 11)
    short = slice(0, 5)  # too few items to tell the edges from the run
    assert _trim_edges(short, ox, oy, SignalParams()) == short


def test_a_match_beyond_a_gap_no_noise_leaves_in_both_books_is_trimmed():
    """Recorded (generated seed 63 at 2 %, a volume 79 % inside an anthology): the shared
    text steps 4-40 words at a time in both books, then two chance matches in the texts that
    follow it in each, 366-374 words on in the volume and 218-298 in the anthology. With them
    the volume read 0.954 covered and the anthology's subset; without, the 0.79 it shares.
    A run as sparse as a 10 %-noise one keeps a step that long."""
    dx = [
        23,
        9,
        5,
        5,
        18,
        14,
        5,
        5,
        9,
        5,
        5,
        18,
        5,
        9,
        5,
        5,
        5,
        5,
        5,
        9,
        5,
        9,
        5,
        27,
        18,
        9,
        9,
        5,
        5,
    ]
    dy = [
        24,
        6,
        6,
        6,
        12,
        18,
        6,
        6,
        6,
        6,
        6,
        24,
        6,
        6,
        6,
        6,
        6,
        6,
        18,
        12,
        6,
        6,
        6,
        19,
        13,
        11,
        6,
        6,
        6,
    ]
    ox, oy = np.cumsum([0.0, *dx, 366, 374]), np.cumsum([0.0, *dy, 218, 298])
    n = ox.size
    assert _trim_edges(slice(0, n), ox, oy, SignalParams()) == slice(0, n - 2)
    sparse_x, sparse_y = (
        np.cumsum([0.0, *[v * 8 for v in dx], 366]),
        np.cumsum([0.0, *[v * 8 for v in dy], 298]),
    )
    assert _trim_edges(slice(0, n - 1), sparse_x, sparse_y, SignalParams()) == slice(0, n - 1)


def test_a_tail_of_chance_matches_is_trimmed_however_many_they_are():
    """Recorded (generated seed 64 at 10 %, an edition against an anthology holding 58 % of
    itself from it): the shared text steps ~20 words at a time, then the LCS strings seven
    chance matches 7-603 words apart through the anthology's next work, reading the anthology
    0.86 covered and the edition's subset. No single step among the last two is a gap no
    noise leaves, but the tail as a whole is: its mean step is over ten times the run's."""
    body_x = [4, 7, 12, 24, 22, 79, 7, 14, 18, 8, 20, 16, 25, 31, 9, 12, 40, 18, 22, 15] * 4
    body_y = [2, 2, 11, 23, 23, 64, 5, 14, 20, 2, 18, 17, 22, 30, 12, 10, 35, 20, 19, 16] * 4
    tail_x, tail_y = [46, 195, 603, 278, 230, 343, 257], [527, 272, 122, 7, 108, 149, 221]
    ox = np.cumsum([0.0, *body_x, *tail_x])
    oy = np.cumsum([0.0, *body_y, *tail_y])
    n = ox.size
    assert _trim_edges(slice(0, n), ox, oy, SignalParams()) == slice(0, n - len(tail_x))
    head = slice(0, n)  # the same chance matches before the shared text
    assert _trim_edges(head, ox[-1] - ox[::-1], oy[-1] - oy[::-1], SignalParams()) == slice(7, n)
    # a 10 %-noise run (steps 40-80) with a hole of 600 words in both books, then its last
    # four items: the hole is noise, and at most the last item goes
    noisy = [40, 80, 55, 60, 45, 70, 50, 65] * 4 + [600, 50, 60, 45, 55]
    on = np.cumsum([0.0, *noisy])
    assert _trim_edges(slice(0, on.size), on, on * 1.1, SignalParams()).stop >= on.size - 1
    off = SignalParams(edge_gap_factor=0)
    assert _trim_edges(slice(0, n), ox, oy, off).stop > n - len(tail_x)


def test_a_few_items_past_a_long_skip_in_both_books_are_left_out_of_a_run():
    """Recorded (generated seed 66 at 10 %, an anthology holding 75 % of a 13,400-word book):
    the shared text skips 0-48 unique words between aligned ones in each book, then two chance
    matches skip 156 / 100 and 27 / 120. On neighbouring pages, the page rule kept them in the
    run and read the anthology 0.86 covered, its subset. A hole noise leaves in both books
    inside the run, however long, stays; so do as many items as a run needs past one."""
    body = [(2, 2), (0, 1), (4, 10), (48, 38), (15, 17), (25, 28), (3, 7), (1, 1), (35, 42)] * 3
    tail = [(5, 3), (156, 100), (27, 120)]
    hole = [(300, 280)]

    def positions(steps: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        return tuple(np.cumsum([0, *(1 + s[i] for s in steps)]) for i in (0, 1))  # type: ignore[return-value]

    p = SignalParams()
    q = positions([*body, *hole, *body, *tail])
    n = q[0].size
    assert _skip_ends(slice(0, n), q, p) == slice(0, n - 2)
    head = positions([*tail[::-1], *body])  # the same chance matches before the shared text
    assert _skip_ends(slice(0, head[0].size), head, p) == slice(2, head[0].size)
    long_tail = positions([*body, *hole, *body[: p.min_run_words]])
    assert _skip_ends(slice(0, long_tail[0].size), long_tail, p) == slice(0, long_tail[0].size)
    assert _skip_ends(slice(0, n), q, SignalParams(max_skip_words=0)) == slice(0, n)
    # the same tail whose neighbour words agree (a table of contents, an index) stays
    agree, comparable = np.zeros(n, np.uint8), np.ones(n, np.uint8)
    assert _skip_ends(slice(0, n), q, p, (agree, comparable)) == slice(0, n - 2)
    agree[-2:] = 1
    assert _skip_ends(slice(0, n), q, p, (agree, comparable)) == slice(0, n)


def test_a_run_the_trims_leave_shorter_than_a_run_is_no_shared_text():
    """Recorded (generated seed 63 at 10 %, an edition against an anthology ending with 27 % of
    it): 8 chance matches on neighbouring pages formed a run beside the shared text; cut to 7
    at a long skip, they still bridged to it and read the pair an abridgement. A run needs 8
    aligned words after its trims as before them."""
    chance = [(5, 6), (4, 5), (6, 4), (5, 5), (3, 6), (6, 5), (96, 95)]
    body = [(3, 2), (0, 1), (4, 6), (8, 7), (2, 2)] * 8
    steps = [*chance, (500, 520), *body]
    qx = 1002 + np.cumsum([0, *(1 + sx for sx, _ in steps)])
    qy = 1002 + np.cumsum([0, *(1 + sy for _, sy in steps)])

    def book(q: np.ndarray) -> BookFeatures:
        pages = np.arange(int(q[-1]) + 1000, dtype=np.int64) // 100  # text around: no frame
        unique = SimpleNamespace(pages=pages)
        return cast(BookFeatures, SimpleNamespace(unique=unique, n_pages=int(pages[-1]) + 1))

    fa, fb = book(qx), book(qy)
    px, py = fa.unique.pages[qx], fb.unique.pages[qy]
    runs, frames = shared_runs(px, py, fa, fb, positions=(qx, qy))
    assert runs == [slice(8, qx.size)] and frames == []
    whole, _ = shared_runs(px, py, fa, fb, SignalParams(max_skip_words=0), positions=(qx, qy))
    assert whole == [slice(0, 8), slice(8, qx.size)]


def test_a_run_of_chance_matches_beside_the_shared_text_is_not_shared_text():
    """Recorded (generated seed 64 at 10 %, a volume 0.66 inside an anthology): 8 matches of
    the anthology's other work, 2-439 words apart, then the shared text at ~20-word steps.
    Counted, they read the volume as the anthology's re-pagination. A second run as dense
    as the first is more shared text (an anthology holding two excerpts of one work)."""
    chance_x, chance_y = [245, 86, 267, 105, 8, 345, 2], [5, 208, 44, 439, 43, 220, 149]
    body_x = [5, 2, 48, 43, 23, 3, 13, 16, 23, 37, 22, 50, 25, 20, 74, 11, 20, 34, 54, 2] * 5
    body_y = [15, 3, 50, 34, 34, 3, 19, 30, 19, 43, 16, 67, 27, 18, 88, 12, 24, 27, 42, 3] * 5
    ox = np.cumsum([0.0, *chance_x, 97, *body_x])
    oy = np.cumsum([0.0, *chance_y, 481, *body_y])
    runs = [slice(0, 8), slice(8, ox.size)]
    assert _dense_enough(runs, (ox, oy), SignalParams().sparse_run_factor) == runs[1:]
    twice = np.cumsum([0.0, *body_x[:30], 900, *body_x])
    both = [slice(0, 31), slice(31, twice.size)]
    assert _dense_enough(both, (twice, twice), SignalParams().sparse_run_factor) == both
    assert _dense_enough(runs, (ox, oy), 0) == runs


def test_a_frame_s_rest_is_sampled_through_the_whole_book():
    """The family test asks whether a holder of a frame holds the books' other words too (an
    edition does). A sample taken from the front only missed a second-half volume holding a
    work's ending: the volume read as no edition (4 of 300), and an anthology's excerpt of the
    ending was a licence (held-out seed 66)."""
    hashes = np.arange(1000, dtype=np.uint64)
    frame = np.arange(600, 900)
    sample = _rest_sample(hashes, frame, SignalParams())
    assert sample.size == 300 and not np.isin(sample, hashes[600:900]).any()
    assert np.isin(sample, hashes[900:]).sum() >= 40  # the last tenth: a sixth of the rest
    assert sample.min() == 0 and sample.max() == 999
    few = _rest_sample(hashes[:500], np.arange(100, 300), SignalParams())
    assert np.array_equal(few, np.concatenate([hashes[:100], hashes[300:500]]))


@needs_data
def test_text_ratio_reads_word_offsets_where_positions_are_known(alice):
    """A 5-page volume against a 5-page abridgement of its whole work (every other block of
    ten lines), both at 10 % noise: the abridgement holds half the volume's words where they
    align, read on the aligned words' offsets; the volume against the work itself reads 1.
    Without positions the page fit gives the ratio."""
    work = alice[60:460]
    volume = ocr_noise(work[:200], 0.1, seed=3)
    abridged = [line for i, line in enumerate(ocr_noise(work, 0.1, seed=4)) if i // 10 % 2 == 0]
    fa, fb = extract_features(book("volume", volume)), extract_features(book("cut", abridged))
    assert fa.n_pages == fb.n_pages == 5
    v = verify_pair(fa, fb, threshold=0.0)
    assert 0.4 < compute_signals(fa, fb, v).text_ratio < 0.62
    assert 0.4 < compute_signals(fa, fb, _without_positions(v)).text_ratio < 0.62
    whole = extract_features(book("work", ocr_noise(work, 0.1, seed=5)))
    part = compute_signals(fa, whole, verify_pair(fa, whole, threshold=0.0))
    assert part.text_ratio == pytest.approx(1.0, abs=0.1)


def test_a_skip_in_an_abridgement_near_its_run_s_end_is_chance():
    """Recorded (generated seed 64 at 10 %, an abridgement against a volume of its work, 0.59
    of the volume shared): the run opens on a title-page word and three chance matches, then
    skips 486 words in the abridgement and 13 in the volume. An abridgement's cuts skip in
    the full text only, so a skip in the abridgement is no cut: the run starts after it, and
    reads 1.7 words of the volume per word of the abridgement where its head made it 1.08,
    a part. A skip of the full text is a cut, and stays."""
    ox = [
        325,
        533,
        557,
        579,
        1065,
        1091,
        1095,
        1111,
        1141,
        1146,
        1153,
        1156,
        1215,
        1222,
        1245,
        1247,
        1252,
        1287,
        1314,
        1326,
        1331,
        1381,
        1388,
        1398,
        1411,
        1453,
        1458,
        1468,
        1493,
        1498,
        1508,
        1510,
        1555,
        1568,
        1590,
        1633,
        1641,
        1646,
        1693,
        1713,
        1728,
        1784,
    ]
    oy = [277, 352, 362, 386, 399, 428, 433, 446, 591, 596, 609, 611, 659, 665, 691, 693, 697,
          852, 878, 899, 905, 996, 1003, 1012, 1025, 1070, 1076, 1090, 1190, 1194, 1212, 1214,
          1289, 1367, 1407, 1445, 1449, 1453, 1497, 1517, 1527, 1567]  # fmt: skip
    x, y, run = np.array(ox, float), np.array(oy, float), slice(0, len(ox))
    assert _abridgement_ends(run, x, y, SignalParams()) == slice(4, len(ox))
    assert _abridgement_ends(run, x, y, SignalParams(edge_contrary_steps=0)) == run
    assert _abridgement_ends(run, y, x, SignalParams()) == slice(4, len(ox))  # y abridged
    cut = x.copy()  # the same skip where x is the full text, cut throughout: a cut of its own
    cut[5:] += np.cumsum(np.full(cut.size - 5, 50.0))
    assert _abridgement_ends(run, cut, y, SignalParams()) == run
    same = np.arange(len(ox)) * 30.0  # no abridgement: the edges' own rule decides
    same[4:] += 486
    assert _abridgement_ends(run, same, same, SignalParams()) == run


def test_an_end_without_aligned_words_is_read_in_mean_steps():
    """A book's longer end beyond its runs, frames aside: as a share of its unique words and
    in mean steps between the runs' aligned words (a title page leaves a step or two)."""
    positions = np.array([0, 10, 20, 30, 40, *range(100, 901, 8)])
    runs, front = [slice(5, positions.size)], [(slice(0, 5), "front")]
    share, steps, where = _open_end(positions, runs, [], 1000)
    assert share == pytest.approx(0.1) and steps == pytest.approx(100 / 8) and where == (0, 100)
    share, steps, where = _open_end(positions, runs, front, 1000)  # the head's frame is out
    assert share == pytest.approx(99 / 959) and steps == pytest.approx(99 / 8)
    assert where == (901, 1000)
    whole = np.array([*range(3, 998, 8)])
    assert _open_end(whole, [slice(0, whole.size)], [], 1000)[1] < 1.0


def test_an_end_many_books_hold_apart_from_the_pair_is_boilerplate():
    """A volume's licence its complete edition lacks: five unrelated books hold it, so the
    volume's end past the shared text is no text of its own. An end that one or two other
    books hold, or that books holding the pair's text too hold, is."""
    rng = np.random.default_rng(7)
    text, licence, other = (rng.choice(2**62, n, replace=False) for n in (900, 100, 400))

    def features(book_id: str, *parts: np.ndarray) -> BookFeatures:
        unique = SimpleNamespace(hashes=np.concatenate(parts))
        return cast(BookFeatures, SimpleNamespace(book_id=book_id, unique=unique))

    volume, whole = features("volume", text[:450], licence), features("whole", text, other)
    holders = [features(f"pg{i}", rng.choice(2**62, 300), licence) for i in range(5)]
    p = SignalParams()
    ask = end_test(volume, whole, BooksInMemory([volume, whole, *holders]), p)
    assert ask is not None and ask(True, 450, 550)  # the volume's last 100 unique words
    assert not cast(Any, end_test(volume, whole, BooksInMemory(holders[:2]), p))(True, 450, 550)
    family = [features(f"ed{i}", text, licence) for i in range(5)]  # they hold the text too
    assert not cast(Any, end_test(volume, whole, BooksInMemory(family), p))(True, 450, 550)
    assert end_test(volume, whole, None, p) is None


def test_a_small_shared_block_many_books_hold_is_boilerplate():
    """A 40-word block two books share in a dense block (score 20): held apart by five
    unrelated books, it is a disclaimer; held by none, or by editions of the pair's own
    text, it is the pair's. Not asked without a collection, of a weak block or of a
    shared text long enough for the size ramps."""
    rng = np.random.default_rng(11)
    text_a, text_b, block = (rng.choice(2**62, n, replace=False) for n in (800, 900, 40))

    def features(book_id: str, *parts: np.ndarray) -> BookFeatures:
        unique = SimpleNamespace(hashes=np.concatenate(parts))
        return cast(BookFeatures, SimpleNamespace(book_id=book_id, unique=unique))

    a, b = features("a", text_a[:400], block, text_a[400:]), features("b", text_b, block)
    items = (np.arange(400, 440), np.arange(900, 940))
    decisive = SimpleNamespace(local_score=20.0)
    holders = [features(f"pg{i}", rng.choice(2**62, 300), block) for i in range(5)]
    few = BooksInMemory([a, b, *holders[:3]])  # too few books for an absent holder to count
    assert block_test(a, b, decisive, items, few, SignalParams()) == {}
    assert block_test(a, b, decisive, items, few, SignalParams(own_block=False)) == {}
    p = SignalParams(own_block_min_books=0)
    assert block_test(a, b, decisive, items, BooksInMemory([a, b, *holders]), p) == {
        "shared_held_apart": True
    }
    alone = block_test(a, b, decisive, items, BooksInMemory([a, b]), p)
    assert alone == {"shared_held_apart": False}
    family = [features(f"ed{i}", text_a, block) for i in range(5)]  # they hold a's text too
    assert block_test(a, b, decisive, items, BooksInMemory(family), p) == alone
    weak = SimpleNamespace(local_score=p.own_block_asked - 1)
    assert block_test(a, b, weak, items, BooksInMemory(holders), p) == {}
    assert block_test(a, b, decisive, items, None, p) == {}
    long_text = (np.arange(p.own_block_max_words), np.arange(p.own_block_max_words))
    assert block_test(a, b, decisive, long_text, BooksInMemory(holders), p) == {}
    c = features("c", block, text_b)  # opens with the block a holds inside: asked
    opening = (np.arange(400, 440), np.arange(40))
    assert block_test(a, c, decisive, opening, BooksInMemory([a, c]), p) == alone
    header = features("d", block, text_a)  # c and d both open with it: front matter
    assert block_test(c, header, decisive, (np.arange(40),) * 2, BooksInMemory([c]), p) == {}
    closing = features("e", text_a, block)  # closes e, opens c: a frame's place too
    at_edges = (np.arange(800, 840), np.arange(40))
    assert block_test(closing, c, decisive, at_edges, BooksInMemory([c]), p) == {}


def test_the_collection_is_asked_about_every_end_the_classifier_reads():
    """An end is asked of the collection from ``end_min_steps``: below the classifier's ramp,
    which reads nothing shorter, and over the shares it reads."""
    p, c = SignalParams(), CLASSIFIER_PARAMS
    assert p.end_min_steps <= c.open_end_steps[0]
    assert p.end_asked[0] <= c.open_end_share[0] and p.end_min_coverage <= c.contained_coverage[0]
