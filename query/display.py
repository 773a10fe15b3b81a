"""One wording for everything the read side shows: titles, relation classes, directions.

Classes and directions are worded by the core (``bookdup.vocabulary``), re-exported here, so
the CLI, the JSON API and the review page say the same ("this book is contained in the other").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bookdup.classify import RELATIONS
from bookdup.titles import is_digitiser_header, title_from_text
from bookdup.vocabulary import CLASS_LABELS, direction_words, relation_label

__all__ = [
    "CLASS_LABELS",
    "CLASS_ORDER",
    "direction_words",
    "display_title",
    "relation_label",
]

#: Relation classes in the order a reader wants them: strongest first (the classifier's order).
CLASS_ORDER = tuple(r for r in RELATIONS if r != "UNRELATED")

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
