"""The dedup job asks the index whether shared text at the edges of both books is boilerplate
(``bookdup.signals.Collection``, ``store.holders.IndexedBooks``): a licence is held by
unrelated books too, the last pages of a work only by its editions. ``explain`` asks alike."""

from __future__ import annotations

import uuid

import pytest

from bookdup.features import extract_features
from bookdup.signals import SIGNAL_PARAMS
from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from query.context import ReadSide
from query.explain import explain
from store.holders import IndexedBooks
from store.iterate import iter_documents
from store.schema import IndexNames, drop_indices
from tests.bookdup.test_signals import book, gutenberg_lines
from tests.fixtures_books import paginate, write_txt

#: Longfellow's Inferno and his whole Commedia: the Inferno's licence is not the Commedia's.
INFERNO = ("commedia-en-longfellow-inferno-pg1001", "commedia-en-longfellow-pg1004")
#: Project Gutenberg books whose licences are the same text (and nothing else is shared).
LICENSED = (
    "alice-en-pg11",
    "lookingglass-en-pg12",
    "tomsawyer-en-part1-pg7193",
    "pinocchio-it-pg52484",
)


def _work() -> list[str]:
    return gutenberg_lines("pride-en-chapman-pg42671")[300:2300]  # without PG's licence


def _anthology() -> list[str]:
    work = _work()
    return gutenberg_lines("sketchbook-en-pg2048")[300:2300] + work[int(len(work) * 0.8) :]


def _part() -> list[str]:
    """The work's first 60 %, closed by 40 lines of a story no other book holds."""
    return _work()[:1200] + gutenberg_lines("sketchbook-en-pg2048")[2400:2440]


@pytest.fixture(scope="module")
def indexed(es_client, gutenberg, tmp_path_factory):
    folder = tmp_path_factory.mktemp("frames")
    texts = {"work": (_work(), 40), "edition": (_work(), 30), "anthology": (_anthology(), 40)}
    texts.update({"part": (_part(), 40), **{name: (gutenberg_lines(name), 40) for name in INFERNO}})
    texts.update({name: (gutenberg_lines(name), 40) for name in LICENSED})
    paths = [
        write_txt(folder / f"{name}.txt", paginate(lines, per_page))
        for name, (lines, per_page) in texts.items()
    ]
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    run_index(es_client, names, paths, IndexOptions(workers=1))
    run_dedup(es_client, names)
    es_client.indices.refresh(index=names.relations)
    found = {
        tuple(sorted((h["_source"]["a"], h["_source"]["b"]))): h["_source"]["relation"]
        for h in iter_documents(es_client, names.relations)
    }
    yield names, found
    drop_indices(es_client, names)


def test_a_works_last_pages_closing_an_anthology_are_shared_text(indexed) -> None:
    """Alone, the anthology's excerpt sits where a licence would, with as few aligned words;
    in the index only the work's editions hold it besides the pair."""
    _names, found = indexed
    assert found.get(("anthology", "work")) == "OVERLAPPING_TEXT"
    assert found.get(("anthology", "edition")) == "OVERLAPPING_TEXT"
    assert found.get(("edition", "work")) == "DIFFERENT_PAGINATION"


def test_a_part_ends_where_its_own_text_starts_unless_a_licence_ends_it(es_client, indexed):
    """A part of the work closed by text of its own (11 % of its unique words, 0.89 of it
    covered; no other book holds that end) is no part: it overlaps the work. The Inferno,
    closed by a licence the Commedia lacks and the licensed books hold, stays its part; in
    the job and in ``explain``."""
    names, found = indexed
    assert found.get(("part", "work")) == "OVERLAPPING_TEXT"
    assert found.get(INFERNO) == "CONTIGUOUS_SUBSET"
    rs = ReadSide(es_client, names, translations=False)
    assert explain(rs, "part", "work")["relation"] == "OVERLAPPING_TEXT"
    assert explain(rs, *INFERNO)["relation"] == "CONTIGUOUS_SUBSET"


def test_a_licence_held_by_unrelated_books_relates_nothing(indexed) -> None:
    _names, found = indexed
    assert not [pair for pair in found if set(pair) & set(LICENSED)]


def test_explain_asks_the_index_as_the_job_did(es_client, indexed) -> None:
    names, found = indexed
    rs = ReadSide(es_client, names, translations=False)
    assert explain(rs, "anthology", "work")["relation"] == found[("anthology", "work")]
    licence = explain(rs, LICENSED[0], LICENSED[1])
    assert licence["relation"] == "UNRELATED" and licence["lcs"] > 200  # aligned: the licence


def test_the_index_answers_who_holds_a_stretch_apart(es_client, indexed) -> None:
    names, _found = indexed
    books = IndexedBooks(es_client, names.books)
    work = extract_features(book("work", _work()))  # 50 pages of 40 lines
    ending = work.unique.hashes[work.unique.pages >= 40]
    opening = work.unique.hashes[work.unique.pages < 25]
    half, third = ending.size // 2, opening.size // 3
    assert books.holds_apart(ending, half, [], ["anthology", "work"])  # the edition holds it
    assert not books.holds_apart(ending, half, [], ["anthology", "work"], min_books=2)  # alone
    assert not books.holds_apart(ending, half, [], ["anthology", "work", "edition"])
    # ... and the rest of the work too: not apart from the pair
    assert not books.holds_apart(ending, half, [(opening, third)], ["anthology", "work"])
    # 10 books: too few for the small-block question (SignalParams.own_block_min_books)
    assert books.size() == 4 + len(INFERNO) + len(LICENSED) < SIGNAL_PARAMS.own_block_min_books
