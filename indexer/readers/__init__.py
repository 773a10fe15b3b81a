"""Input readers: every supported corpus layout in, `Book` (or `ReadError`) out.

`iter_books` walks files and folders, recognises each entry's kind by extension and a sniff of its
first bytes, and yields books lazily; a bad input yields a `ReadError` and the walk goes on, so the
indexing job can report it without losing the rest of the corpus.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from pathlib import Path

from bookdup.model import Book
from indexer.readers.alto import read_alto_book, sniff_alto
from indexer.readers.common import SNIFF_BYTES, ReadError, natural_key
from indexer.readers.djvu import is_djvu_text, read_djvu_book
from indexer.readers.hocr import read_hocr_book, sniff_hocr
from indexer.readers.jsonl import read_jsonl
from indexer.readers.pagedir import page_files, read_page_folder
from indexer.readers.text import read_text_book

__all__ = ["KINDS", "ReadError", "detect_kind", "iter_books"]

KINDS = ("txt", "djvu", "jsonl", "alto", "hocr", "pages", "dir", "unknown")
"""What `detect_kind` answers: a book file's format, `pages` for a folder that is one book (page
files), `dir` for a folder of inputs, `unknown` for anything else (scans, checksums, READMEs)."""

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_XML_SUFFIXES = frozenset({".xml", ".alto"})
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".hocr"})
_UNRECOGNISED = (
    "unrecognised input kind (expected .txt, _djvu.txt, .jsonl, ALTO .xml, hOCR .html/.hocr "
    "or a folder)"
)


def _head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(SNIFF_BYTES)


def detect_kind(path: Path | str) -> str:
    """The kind of one input (one of `KINDS`), by extension, a sniff of the first bytes for
    markup, and for folders whether their files are one book's pages.

    Raises FileNotFoundError for a path that does not exist.
    """
    path = Path(path)
    if path.is_dir():
        return "pages" if page_files(path, detect_kind) is not None else "dir"
    if not path.exists():
        raise FileNotFoundError(str(path))
    suffix = path.suffix.lower()
    if is_djvu_text(path):
        return "djvu"
    if suffix == ".txt":
        return "txt"
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix == ".alto" or (suffix in _XML_SUFFIXES and sniff_alto(_head(path))):
        return "alto"
    if suffix == ".hocr" or (suffix in _HTML_SUFFIXES | _XML_SUFFIXES and sniff_hocr(_head(path))):
        return "hocr"
    return "unknown"


def _read_file(
    path: Path, kind: str, lines_per_page: int, encoding: str | None
) -> Iterator[Book | ReadError]:
    if kind == "jsonl":
        yield from read_jsonl(path, lines_per_page=lines_per_page, encoding=encoding)
    elif kind == "txt":
        yield read_text_book(path, lines_per_page=lines_per_page, encoding=encoding)
    elif kind == "djvu":
        yield read_djvu_book(path, lines_per_page=lines_per_page, encoding=encoding)
    elif kind == "alto":
        yield read_alto_book(path, encoding=encoding)
    elif kind == "hocr":
        yield read_hocr_book(path, encoding=encoding)
    else:
        yield ReadError(str(path), _UNRECOGNISED)


def _walk(
    folder: Path, lines_per_page: int, encoding: str | None, seen: set[Path]
) -> Iterator[Book | ReadError]:
    """Books under `folder`, in natural name order; files of unknown kind are skipped silently
    because corpus folders routinely hold page scans, checksums and READMEs beside the text."""
    real = folder.resolve()
    if real in seen:
        return
    seen.add(real)
    try:
        pages = page_files(folder, detect_kind)
        entries = sorted(folder.iterdir(), key=lambda p: natural_key(p.name))
    except OSError as err:
        yield ReadError(str(folder), err.strerror or str(err))
        return
    if pages is not None:
        yield read_page_folder(folder, pages, detect_kind, encoding=encoding)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            yield from _walk(entry, lines_per_page, encoding, seen)
            continue
        if pages is not None:
            continue
        try:
            kind = detect_kind(entry)
        except OSError as err:
            yield ReadError(str(entry), err.strerror or str(err))
            continue
        if kind != "unknown":
            yield from _read_file(entry, kind, lines_per_page, encoding)


def iter_books(
    paths: Iterable[Path | str], *, lines_per_page: int = 40, encoding: str | None = None
) -> Iterator[Book | ReadError]:
    """Yield a Book or a ReadError for every book found in `paths` (files or folders), lazily.

    `lines_per_page` sets the pseudo-page size for text without form feeds; `encoding` forces
    the encoding of every input instead of detecting it. Both are checked before reading, since
    a wrong value would fail every file alike.
    """
    if lines_per_page < 1:
        raise ValueError(f"lines_per_page must be at least 1, got {lines_per_page}")
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError as err:
            raise ValueError(f"unknown encoding: {encoding!r}") from err
    return _iter_paths(paths, lines_per_page, encoding)


def _iter_paths(
    paths: Iterable[Path | str], lines_per_page: int, encoding: str | None
) -> Iterator[Book | ReadError]:
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from _walk(path, lines_per_page, encoding, seen)
        elif not path.exists():
            yield ReadError(str(path), "no such file or directory")
        else:
            try:
                kind = detect_kind(path)
            except OSError as err:
                yield ReadError(str(path), err.strerror or str(err))
                continue
            yield from _read_file(path, kind, lines_per_page, encoding)
