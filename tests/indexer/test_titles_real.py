"""Titles of the real Gutenberg books: what the index stores and search shows for a book with
no reader-provided title is never a digitiser's header line (issue 26, item 3)."""

from __future__ import annotations

from bookdup.model import Book
from bookdup.titles import is_digitiser_header
from indexer.index_worker import _excerpt, found_title
from query.display import display_title
from readers.text import read_text_book

#: Books of ../shared/data/gutenberg that open with an old-style "Etext" header, and the title
#: it names.
HEADER_BOOKS = {
    "20k-leagues-en-walter-pg2488": "20000 Leagues Under the Seas",
    "commedia-en-longfellow-pg1004": "The Divine Comedy of Dante",
    "commedia-it-inferno7bit-pg997": "Divina Commedia di Dante: Inferno",
    "egmont-de-pg2146": "Egmont",
    "hamlet-en-folio-pg2265": "The Tragedie of Hamlet",  # the series' header names the play
    "werther-de-b1-pg2407": "Die Leiden des jungen Werther--Buch 1",
}


def test_titles_of_the_real_books_are_never_a_gutenberg_header(gutenberg) -> None:
    shown = {}
    for path in sorted(gutenberg.glob("*.txt")):
        book = read_text_book(path)
        assert isinstance(book, Book) and book.title is None, path
        doc = {"title": book.title, "found_title": found_title(book), "excerpt": _excerpt(book)}
        shown[path.stem] = display_title(doc)
    assert len(shown) == 80
    headers = {b: t for b, t in shown.items() if is_digitiser_header(t) or "Etext" in t}
    assert headers == {}
    assert {b: shown[b] for b in HEADER_BOOKS} == {b: f"[{t}]" for b, t in HEADER_BOOKS.items()}
    assert shown["tomsawyer-en-pg74"] == "[The Adventures of Tom Sawyer, Complete]"
    assert shown["alice-en-storyland-pg19033"] == "[Alice in Wonderland]"
    assert not any(t == "[untitled]" for t in shown.values())
