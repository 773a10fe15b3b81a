"""One wording for everything the read side shows: titles, relation classes, directions.

The CLI, the JSON API and the review page all word a relation with these functions, so a
containment reads the same everywhere ("this book is contained in the other").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bookdup.classify import RELATIONS
from bookdup.titles import is_digitiser_header, title_from_text

#: Relation classes in the order a reader wants them: strongest first (the classifier's order).
CLASS_ORDER = tuple(r for r in RELATIONS if r != "UNRELATED")

CLASS_LABELS = {
    "EXACT": "exact duplicate",
    "SAME_PAGINATION": "same edition, same pagination",
    "DIFFERENT_PAGINATION": "same text, different pagination",
    "CONTIGUOUS_SUBSET": "part of / contains",
    "ABRIDGED": "abridged edition",
    "OVERLAPPING_TEXT": "overlapping text",
    "SAME_WORK": "same work, another translation",
    "TRANSLATION": "translation",
    "UNRELATED": "unrelated",
}

#: A direction seen from one book (``bookdup.relate.direction_from_side``), in words.
DIRECTION_WORDS = {
    "this_in_other": "this book is contained in the other",
    "other_in_this": "the other book is contained in this one",
}

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


def relation_label(relation: str) -> str:
    return CLASS_LABELS.get(relation, relation.lower().replace("_", " "))


#: The same directions for an abridgement: the book "in" the other is the shorter.
ABRIDGED_DIRECTION_WORDS = {
    "this_in_other": "this book is an abridgement of the other",
    "other_in_this": "the other book is an abridgement of this one",
}


def direction_words(direction: str | None, relation: str | None = None) -> str:
    """A direction from one book's side in words; "" when the relation has none."""
    words = ABRIDGED_DIRECTION_WORDS if relation == "ABRIDGED" else DIRECTION_WORDS
    return words.get(direction or "", "")


def percent(value: float) -> str:
    return f"{100 * value:.0f} %"
