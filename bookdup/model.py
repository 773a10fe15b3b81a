"""The book model every reader produces and every algorithm consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Book:
    """A book as it arrives: metadata plus its pages in reading order.

    Pages are kept because relation classes (same/different pagination, subsets)
    are decided from page-level evidence.
    """

    id: str
    pages: list[str]
    title: str | None = None
    author: str | None = None
    language: str | None = None  # declared ISO 639-1 code; None means "detect it"
    year: int | None = None
    source: str | None = None  # file the book was read from, for error messages
    extra: dict[str, Any] = field(default_factory=dict)
