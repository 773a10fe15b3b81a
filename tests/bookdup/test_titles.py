"""Titles found in a book's opening text: a Gutenberg Title: line, or X of a digitiser's header
line, never the header itself."""

from __future__ import annotations

import pytest

from bookdup.titles import header_title, is_digitiser_header, title_from_text

HEADERS = [
    (
        "The Project Gutenberg Etext of 20000 Leagues Under the Seas by Jules\r\nVerne\r\n\r\n"
        "Copyright laws are changing all over the world",
        "20000 Leagues Under the Seas",
    ),
    (
        "***The Project Gutenberg Etext of The Divine Comedy of Dante***\n"
        "Translanted by Henry Wadsworth Longfellow",
        "The Divine Comedy of Dante",
    ),
    (
        'The Project Gutenberg Etext "Divina Commedia di Dante: Inferno"\n'
        "In Italian with no accents[7-bit text]",
        "Divina Commedia di Dante: Inferno",
    ),
    (
        "Project Gutenberg Etext of Egmont, by Johann Wolfgang von Goethe\n"
        "#5 in our series by Johann Wolfgang von Goethe",
        "Egmont",
    ),
    (
        "The Project Gutenberg Etext of Die Leiden des jungen Werther--Buch 1\n"
        "#26 in our series by Johann Wolfgang von Goethe",
        "Die Leiden des jungen Werther--Buch 1",
    ),
    (
        "The Project Gutenberg EBook of Alice in Wonderland (abridged), by Lewis Carroll\n\n"
        "This eBook is for the use of anyone anywhere at no cost",
        "Alice in Wonderland (abridged)",
    ),
    ("\ufeffThe Project Gutenberg eBook, Candide, by Voltaire\n", "Candide"),
    (
        "***The Project Gutenberg's Etext of Shakespeare's First Folio***\n"
        "*********************The Tragedie of Hamlet*********************\n\nThis is our 3rd",
        "The Tragedie of Hamlet",
    ),
]


@pytest.mark.parametrize(("text", "title"), HEADERS)
def test_a_header_line_gives_the_title_it_names(text, title):
    assert header_title(text) == title
    assert title_from_text(text) == title


def test_the_title_line_comes_before_the_header():
    text = (
        "The Project Gutenberg EBook of Faust, by Goethe\n\nThis eBook is for the use of anyone\n"
        "Title: Faust: Der Tragödie erster Teil\n\nAuthor: Johann Wolfgang von Goethe\n"
    )
    assert title_from_text(text) == "Faust: Der Tragödie erster Teil"


def test_no_header_no_title():
    assert title_from_text("CHAPTER I. Down the Rabbit-Hole. Alice was beginning") is None
    assert header_title("A book about the Project Gutenberg Etext of X") is None
    assert is_digitiser_header("[The Project Gutenberg Etext of Die Leiden des…]")
    assert not is_digitiser_header("Die Leiden des jungen Werther")


def test_display_title_prefers_metadata_then_the_found_title_and_never_shows_a_header():
    from query.display import display_title

    header = (
        "The Project Gutenberg Etext of Die Leiden des jungen Werther--Buch 1 "
        "#26 in our series by Goethe"
    )
    assert display_title({"title": "Werther", "found_title": "X"}) == "Werther"
    assert display_title({"found_title": "Die Leiden", "excerpt": header}) == "[Die Leiden]"
    # indexed before found_title existed: looked for in the excerpt
    assert display_title({"excerpt": header}) == "[Die Leiden des jungen Werther--Buch 1]"
    # a header naming nothing usable is not shown either
    assert display_title({"excerpt": "Project Gutenberg's Etext ***"}) == "[untitled]"
    assert display_title({"excerpt": "It was a dark and stormy night"}).startswith("[It was")
