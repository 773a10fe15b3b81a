"""One wording for everything the read side shows: titles, relation classes, directions.

Classes and directions are worded by the core (``bookdup.vocabulary``), re-exported here, so
the CLI, the JSON API and the review page say the same ("this book is contained in the other").
"""

from __future__ import annotations

from bookdup.classify import RELATIONS
from bookdup.titles import display_title
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
