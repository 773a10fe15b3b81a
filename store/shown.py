"""What search shows of a book, read from doc values: the index writer's and the reader's contract.

A search hit used to load the book's stored ``_source`` (~35 KB with its features, zstd-compressed)
for a few short fields; under load the node spent most of its search time decompressing it
(issue 30). The shown fields are keyword or numeric fields with doc values, so the reader asks
for them there and loads no stored field. ``display_title`` marks a document whose shown fields
all have their doc values; it is empty when a shown text is too long for the mapping's
``ignore_above``, and missing on a book indexed before it (the next dedup run writes it, see
``indexer.clustering``): the reader loads such a book's ``_source`` instead.

No Elasticsearch import here: the index worker processes load this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bookdup.titles import display_title

#: Shown field → the field its doc value is read from.
DOC_VALUES = {
    "book_id": "book_id",
    "title": "title.raw",
    "author": "author.raw",
    "found_title": "found_title.raw",
    "language": "language",
    "year": "year",
    "edition_cluster": "edition_cluster",
    "work_cluster": "work_cluster",
    "edition_rank": "edition_rank",
    "partial": "partial",
    "display_title": "display_title",
}
MARKER = "display_title"
#: The stored fields the marker is computed from.
SHOWN_FROM = ["title", "author", "found_title", "excerpt"]
#: The mapping's ``ignore_above`` (512) counts UTF-16 units; 256 characters are at most 512.
MAX_SHOWN_CHARS = 256


def shown_fields(
    title: str | None, author: str | None, found_title: str | None, excerpt: str
) -> dict[str, Any]:
    """A book document's title fields and the marker: empty when a shown text has no doc value."""
    doc: dict[str, Any] = {"title": title, "found_title": found_title, "excerpt": excerpt}
    shown = display_title(doc)
    fits = all(len(s or "") <= MAX_SHOWN_CHARS for s in (title, author, found_title, shown))
    doc[MARKER] = shown if fits else ""
    return doc


def from_doc_values(fields: Mapping[str, list[Any]]) -> dict[str, Any] | None:
    """A hit's shown fields from its ``fields`` (``docvalue_fields``); None without the marker."""
    if not fields.get(MARKER, [""])[0]:
        return None
    return {name: fields.get(dv, [None])[0] for name, dv in DOC_VALUES.items()}
