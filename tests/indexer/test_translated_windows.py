"""`TranslatedWindows`: translated pairs held back, then handed out grouped by the book each
translates, every pair exactly once (issue 28). No node: the windows only order planned pairs."""

from __future__ import annotations

import random
from dataclasses import dataclass

from bookdup.dictionary import Dictionary
from bookdup.relate import PairPlan
from indexer.dedup_stages import (
    DEFAULT_TRANSLATION_WINDOW,
    DedupParams,
    TranslatedWindows,
    translation_window,
)
from indexer.verify_pool import Planned, affinity_key

LEXICON = Dictionary("de", "en", [], [])
PLAN = PairPlan(LEXICON, None, 1.0)


@dataclass(frozen=True)
class Book:
    """What `affinity_key` reads of a book."""

    book_id: str
    language: str
    content_hash: str = "h"


def planned_pairs(n: int, seed: int) -> list[Planned]:
    """``n`` translated pairs between 12 German and 40 English books, in random order, the
    German book first or second (the German one is translated either way)."""
    rng = random.Random(seed)
    out: list[Planned] = []
    for _ in range(n):
        de, en = Book(f"de{rng.randrange(12)}", "de"), Book(f"en{rng.randrange(40)}", "en")
        out.append((de, en, PLAN) if rng.random() < 0.5 else (en, de, PLAN))  # type: ignore[arg-type]
    return out


def translated(p: Planned) -> str:
    return affinity_key(*p)[0][0]


def test_every_pair_goes_out_once_and_each_window_in_groups() -> None:
    pairs = planned_pairs(500, seed=3)
    windows = TranslatedWindows(size=120, first=120)
    sent: list[list[Planned]] = []
    for start in range(0, len(pairs), 25):  # batches of 25 translated pairs
        sent.append(windows.add(pairs[start : start + 25]))
    sent.append(windows.drain())
    assert sent[:4] == [[], [], [], []]  # held until a window's worth is queued
    flat = [p for out in sent for p in out]
    assert sorted(map(id, flat)) == sorted(map(id, pairs))  # each pair once, none lost
    # a window goes out in order of the book it translates: a book's pairs run together
    # (the first window: the 125 pairs queued by the 5th batch, sent over the next batches)
    first = flat[:125]
    names = [translated(p) for p in first]
    assert names == sorted(names)
    assert len(set(names)) == 12


def test_a_window_goes_out_at_a_pace_ahead_of_the_queue() -> None:
    pairs = planned_pairs(400, seed=5)
    windows = TranslatedWindows(size=100, pace=1.25, first=100)
    sizes = [len(windows.add(pairs[i : i + 20])) for i in range(0, len(pairs), 20)]
    # from the 5th batch on each batch takes 25 of the window (1.25 x 20), and when the next
    # window fills the last one has gone out
    assert sizes[:4] == [0, 0, 0, 0]
    assert sizes[4:8] == [25, 25, 25, 25]
    assert sum(sizes) + len(windows.drain()) == len(pairs)


def test_windows_start_small_and_double_up_to_their_size() -> None:
    pairs = planned_pairs(2000, seed=7)
    windows = TranslatedWindows(size=400)  # the first window at 400 // 8 = 50 pairs
    formed = []
    for start in range(0, len(pairs), 10):
        before = windows.window
        windows.add(pairs[start : start + 10])
        if windows.window is not before:
            formed.append(len(windows.window))
    assert formed[:5] == [50, 100, 200, 400, 400]


def test_no_window_where_a_workers_cache_holds_the_collection() -> None:
    """80 books: each batch's translated pairs go with it; 1,000: windows; a set size wins."""
    params = DedupParams()
    assert translation_window(params, 80) == 0
    assert translation_window(params, 1000) == DEFAULT_TRANSLATION_WINDOW
    assert translation_window(DedupParams(translation_window=1), 80) == 1
    windows = TranslatedWindows(0)  # no window: every batch's pairs go out with it
    pairs = planned_pairs(60, seed=9)
    assert [len(windows.add(pairs[i : i + 20])) for i in range(0, 60, 20)] == [20, 20, 20]
    assert windows.drain() == []
