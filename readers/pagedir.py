"""A folder per book holding one file per page (`0001.txt`, `0002.xml` …), in natural order.

Scanning projects deliver books this way; the page files may be plain text, ALTO or hOCR, and a
`meta.json` or `book.json` in the folder holds the book's metadata.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bookdup.model import Book
from readers.alto import HyphenState, alto_pages, xml_encoding
from readers.common import (
    BadInput,
    ReadError,
    make_book,
    natural_key,
    read_text_file,
    sidecar_metadata,
)
from readers.hocr import hocr_pages

METADATA_NAMES = ("meta.json", "book.json")
PAGE_KINDS = ("txt", "alto", "hocr")
_PAGE_NAME = re.compile(r"^(|.*[-_.\s])\d+$")


def _page_prefix(path: Path) -> str | None:
    """The part of a page-file stem before its page number (`page_0001` → `page_`), else None.

    A separator before the number is required so that a folder of books such as
    `book1.txt, book2.txt` or `alice-pg11.txt` is not mistaken for one book's pages.
    """
    match = _PAGE_NAME.match(path.stem)
    return match.group(1) if match else None


def page_files(folder: Path, kind_of: Callable[[Path], str]) -> list[Path] | None:
    """The page files when `folder` is one book (metadata file, or page-numbered names); else None.

    A lone numbered file (a mirror's `10/10.txt`) is a book of its own, not a one-page book, so
    that it still gets pseudo-pages.

    `kind_of` classifies a file (the dispatcher's `detect_kind`); files of other kinds (scans,
    checksums) are ignored.
    """
    files = sorted(
        (p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")),
        key=lambda p: natural_key(p.name),
    )
    pages = [p for p in files if kind_of(p) in PAGE_KINDS]
    if not pages:
        return None
    if any((folder / name).is_file() for name in METADATA_NAMES):
        return pages
    prefixes = {_page_prefix(p) for p in pages}
    if len(pages) > 1 and len(prefixes) == 1 and None not in prefixes:
        return pages
    return None


def _text_page(path: Path, encoding: str | None) -> tuple[str, str | None, int]:
    """One page from a text file; an empty page file is a blank page, not an error."""
    try:
        decoded = read_text_file(path, encoding)
    except BadInput as err:
        if err.reason == "empty file":
            return "", None, 0
        raise
    return decoded.text.rstrip("\f\r\n"), decoded.encoding, decoded.decode_errors


def read_page_folder(
    folder: Path,
    pages: list[Path],
    kind_of: Callable[[Path], str],
    *,
    encoding: str | None = None,
) -> Book | ReadError:
    """Read the page files of one book; a bad page file fails the book (pagination would shift)."""
    kinds = sorted({kind_of(p) for p in pages})
    if len(kinds) > 1:
        return ReadError(str(folder), f"page folder mixes page file kinds: {', '.join(kinds)}")
    texts: list[str] = []
    encodings: set[str] = set()
    decode_errors = 0
    hyphens = HyphenState()
    current = folder
    try:
        meta = sidecar_metadata([folder / name for name in METADATA_NAMES])
        for current in pages:
            if kinds[0] == "txt":
                text, used, errors = _text_page(current, encoding)
                texts.append(text)
            elif kinds[0] == "alto":
                override, used = xml_encoding(current, encoding)
                texts.extend(alto_pages(current, override, hyphens))
                errors = 0
            else:
                found, used, errors = hocr_pages(current, encoding)
                texts.extend(found)
            if used:
                encodings.add(used)
            decode_errors += errors
    except BadInput as err:
        return err.to_error(current)
    except (OSError, LookupError) as err:
        return ReadError(str(current), str(err))
    return make_book(
        folder.name,
        texts,
        meta,
        source=str(folder),
        extra={
            "kind": f"pages/{kinds[0]}",
            "encoding": ",".join(sorted(encodings)) or "utf-8",
            "decode_errors": decode_errors,
        },
    )
