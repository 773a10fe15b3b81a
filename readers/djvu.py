"""Internet Archive `<item>_djvu.txt` full texts (also gzip'd): pages are separated by form
feeds."""

from __future__ import annotations

from pathlib import Path

from bookdup.model import Book
from readers.common import (
    DEFAULT_LINES_PER_PAGE,
    DEFAULT_MAX_BOOK_BYTES,
    ReadError,
    plain_name,
    sidecar_of,
)
from readers.text import read_text_book

SUFFIX = "_djvu.txt"


def is_djvu_text(path: Path) -> bool:
    """Internet Archive names its OCR text after the item, with this suffix."""
    name = plain_name(path).name
    return name.lower().endswith(SUFFIX) and len(name) > len(SUFFIX)


def djvu_item(path: Path) -> str:
    """The Internet Archive item identifier: the file name without the suffix (and `.gz`)."""
    return plain_name(path).name[: -len(SUFFIX)]


def read_djvu_book(
    path: Path,
    *,
    lines_per_page: int = DEFAULT_LINES_PER_PAGE,
    encoding: str | None = None,
    max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> Book | ReadError:
    """Read one `_djvu.txt`; the id is the Internet Archive item identifier (the name's prefix)."""
    item = djvu_item(path)
    return read_text_book(
        path,
        lines_per_page=lines_per_page,
        encoding=encoding,
        book_id=item,
        kind="djvu",
        sidecars=[sidecar_of(path), path.with_name(item + ".json")],
        max_bytes=max_bytes,
    )
