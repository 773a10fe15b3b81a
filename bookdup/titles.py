"""A book's title found in its text, for books whose reader gave none.

Digitisers put their own header line before the book: Project Gutenberg's ``The Project
Gutenberg EBook of X, by Y`` or, in the 1990s "Etext" releases, ``[***]The Project Gutenberg
Etext of X`` followed by its licence. That line is not a title; the title it names (X) is. In
order: the ``Title:`` line of a modern Gutenberg header, then X of a digitiser's header line,
else nothing (the read side then shows the book's first words, unless they are such a header).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Characters of the opening text searched; a header and its ``Title:`` line come first.
HEAD_CHARS = 3000
MAX_TITLE_CHARS = 120

_TITLE_LINE = re.compile(
    r"\bTitle:\s*(.+?)\s+(?:Author|Release [Dd]ate|Language|Credits|Editor|Translator|"
    r"Illustrator|Posting [Dd]ate|Most recently updated|Series|Subtitle):"
)
#: A digitiser's header: "[The] Project Gutenberg['s] Etext|EBook|E-text [of|,] X".
_HEADER = re.compile(
    r"^\W*(?:the\s+)?project\s+gutenberg(?:'s|’s)?\s+(?:e-?text|e-?book)s?\b[\s,:]*(?:of\s+)?"
    r"(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)
#: Where the title named by a header ends: the author, a series number, the licence's first
#: words, decoration.
_TITLE_END = re.compile(
    r",?\s+by\s+|\*{2,}|#\d+\s+in\s+our\s+series|\s+This\s+e-?(?:book|text)\b"
    r"|\s+Copyright\s+laws\b|\s+Please\s+take\s+a\s+look\b|\s+\*?\s*Translated\s+by\b",
    re.IGNORECASE,
)
_DECORATED = re.compile(r"\*{2,}\s*\*{2,}([^*]{3,120}?)\*{2,}")
#: Words that mark a header line wherever it begins (used to refuse one as a title).
_HEADER_WORDS = re.compile(r"project\s+gutenberg", re.IGNORECASE)


def _clean(title: str) -> str | None:
    title = " ".join(title.split()).strip(" *[]'\"“”,;:-")
    return title[:MAX_TITLE_CHARS] or None


def header_title(text: str) -> str | None:
    """X of a digitiser's header line opening ``text`` (``The Project Gutenberg EBook of X, by
    Y``); None when the text does not open with one."""
    found = _HEADER.match(" ".join(text[:HEAD_CHARS].split()))
    if not found:
        return None
    rest = found.group("rest")
    quoted = re.match(r"\s*[\"“](.+?)[\"”]", rest)
    if quoted:
        return _clean(quoted.group(1))
    end = _TITLE_END.search(rest)
    # a series' header naming the book on a decorated line of its own:
    # "***The Project Gutenberg's Etext of Shakespeare's First Folio*** ****The Tragedie of
    # Hamlet****" names the book, not the series
    inner = _DECORATED.match(rest[end.start() :]) if end else None
    if inner:
        return _clean(inner.group(1))
    title = _clean(rest[: end.start()] if end else rest[:MAX_TITLE_CHARS])
    return title if title and not _HEADER_WORDS.search(title) else None


def title_from_text(text: str) -> str | None:
    """The title a book's opening text names: a ``Title:`` line, else a header's X, else None."""
    head = " ".join(text[:HEAD_CHARS].split())
    found = _TITLE_LINE.search(head)
    if found:
        title = _clean(found.group(1))
        if title and not _HEADER_WORDS.search(title):
            return title
    return header_title(head)


def is_digitiser_header(text: str) -> bool:
    """Whether ``text`` (a title or a book's first words) is a digitiser's header line."""
    return bool(_HEADER_WORDS.search(text))


#: Words of the opening text a book with no title at all is shown by.
UNTITLED_WORDS = 8


def display_title(doc: Mapping[str, Any]) -> str:
    """The book's title (metadata); without one, the title its opening text names
    (``found_title``, found at index time: a Gutenberg ``Title:`` line, else X of a
    digitiser's header ``The Project Gutenberg Etext of X``), else its first words — never the
    header line itself.

    Plain-text books get their metadata from a ``.json`` sidecar (see README); a title found
    in the text is marked with brackets. A document indexed before ``found_title`` existed has
    it looked for in its excerpt.
    """
    title = doc.get("title")
    if title:
        return str(title)
    excerpt = str(doc.get("excerpt") or "")
    found = doc.get("found_title") or title_from_text(excerpt)
    if found:
        return f"[{found}]"
    words = excerpt.split()[:UNTITLED_WORDS]
    if words and not is_digitiser_header(" ".join(words)):
        return f"[{' '.join(words)}…]"
    return "[untitled]"
