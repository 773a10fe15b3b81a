"""A folder per book holding one file per page (`0001.txt`, `0002.xml` …), in natural order.

Scanning projects deliver books this way; the page files may be plain text, ALTO or hOCR (each
possibly gzip'd), and a `meta.json` or `book.json` in the folder holds the book's metadata. The
size limit for one book applies to all its pages together.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bookdup.model import Book
from readers.alto import HyphenState, alto_pages, xml_encoding
from readers.common import (
    DEFAULT_MAX_BOOK_BYTES,
    BadInput,
    BookTooLarge,
    ReadError,
    book_stem,
    format_mb,
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
    match = _PAGE_NAME.match(book_stem(path))
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


def _text_page(
    path: Path, encoding: str | None, budget: int | None
) -> tuple[str, str | None, int, bool]:
    """One page from a text file; an empty page file is a blank page, not an error."""
    try:
        decoded = read_text_file(path, encoding, budget)
    except BadInput as err:
        if err.reason == "empty file":
            return "", None, 0, False
        raise
    text = decoded.text.rstrip("\f\r\n")
    return text, decoded.encoding, decoded.decode_errors, decoded.guessed


def _read_page(
    path: Path, kind: str, encoding: str | None, hyphens: HyphenState, budget: int | None
) -> tuple[list[str], str | None, int, bool]:
    """(texts, encoding, decode errors, encoding guessed) of one page file of the given kind."""
    if kind == "txt":
        text, used, errors, guessed = _text_page(path, encoding, budget)
        return [text], used, errors, guessed
    if kind == "alto":
        override, used = xml_encoding(path, encoding)
        guessed = override is not None and encoding is None
        return alto_pages(path, override, hyphens, budget), used, 0, guessed
    return hocr_pages(path, encoding, budget)


def read_page_folder(
    folder: Path,
    pages: list[Path],
    kind_of: Callable[[Path], str],
    *,
    encoding: str | None = None,
    max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> Book | ReadError:
    """Read the page files of one book; a bad page file fails the book (pagination would shift).

    At most ``max_bytes`` of text in all the pages together (None: no limit)."""
    kinds = sorted({kind_of(p) for p in pages})
    if len(kinds) > 1:
        return ReadError(str(folder), f"page folder mixes page file kinds: {', '.join(kinds)}")
    texts: list[str] = []
    encodings: set[str] = set()
    decode_errors = 0
    hyphens = HyphenState()
    current = folder
    size, guessed = 0, False
    try:
        meta = sidecar_metadata([folder / name for name in METADATA_NAMES])
        for current in pages:
            budget = None if max_bytes is None else max(0, max_bytes - size)
            found, used, errors, guess = _read_page(current, kinds[0], encoding, hyphens, budget)
            texts.extend(found)
            size += sum(len(t) for t in found)
            guessed = guessed or guess
            if used:
                encodings.add(used)
            decode_errors += errors
    except BookTooLarge:
        assert max_bytes is not None
        reason = f"page files hold over {format_mb(max_bytes)} of text, the limit for one book"
        return ReadError(str(folder), reason)
    except BadInput as err:
        return err.to_error(current)
    except (OSError, LookupError) as err:
        return ReadError(str(current), str(err))
    extra = {
        "kind": f"pages/{kinds[0]}",
        "encoding": ",".join(sorted(encodings)) or "utf-8",
        "decode_errors": decode_errors,
        **({"encoding_guessed": True} if guessed else {}),
    }
    return make_book(folder.name, texts, meta, source=str(folder), extra=extra)
