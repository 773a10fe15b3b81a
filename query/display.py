"""One wording for everything the read side shows: titles, relation classes, directions.

Classes and directions are worded by the core (``bookdup.vocabulary``), re-exported here, so
the CLI, the JSON API and the review page say the same ("this book is contained in the other").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bookdup.classify import RELATIONS
from bookdup.vocabulary import CLASS_LABELS, direction_words, relation_label

__all__ = [
    "CLASS_LABELS",
    "CLASS_ORDER",
    "direction_words",
    "display_title",
    "percent",
    "relation_label",
]

#: Relation classes in the order a reader wants them: strongest first (the classifier's order).
CLASS_ORDER = tuple(r for r in RELATIONS if r != "UNRELATED")

_GUTENBERG_TITLE = re.compile(
    r"\bTitle:\s*(.+?)\s+(?:Author|Release [Dd]ate|Language|Credits|Editor|Translator|"
    r"Illustrator|Posting [Dd]ate|Most recently updated):"
)
_EBOOK_OF = re.compile(r"\beBook of\s+(.+?)(?:,\s+by\s+|\s+This eBook\b)")
UNTITLED_WORDS = 8


def display_title(doc: Mapping[str, Any]) -> str:
    """The book's title; without one, a title found in its opening text, else its first words.

    Plain-text books get their metadata from a ``.json`` sidecar (see README); when there is
    none the title is guessed at display time and marked with brackets.
    """
    title = doc.get("title")
    if title:
        return str(title)
    excerpt = str(doc.get("excerpt") or "")
    for pattern in (_GUTENBERG_TITLE, _EBOOK_OF):
        found = pattern.search(excerpt[:2000])
        if found:
            return f"[{found.group(1).strip()[:120]}]"
    words = excerpt.split()[:UNTITLED_WORDS]
    return f"[{' '.join(words)}…]" if words else "[untitled]"


def percent(value: float) -> str:
    return f"{100 * value:.0f} %"
