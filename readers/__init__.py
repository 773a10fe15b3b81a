"""Input readers: every supported corpus layout in, `Book` (or `ReadError`) out.

`iter_books` walks files and folders, recognises each entry's kind by extension and a sniff of its
first bytes, and yields books lazily; a bad input yields a `ReadError` and the walk goes on, so the
indexing job can report it without losing the rest of the corpus.

It is `iter_sources` (the walk: what each input is, nothing read) followed by `read_source` (one
input's books); the indexing job runs the walk itself and `read_source` in its worker processes,
so that reading and parsing use every core.

Every kind may also come gzip'd (`book.txt.gz`, `item_djvu.txt.gz`, `export.jsonl.gz`,
`page_0001.xml.gz`, `scan.hocr.gz`): decompressed while read, a truncated or damaged file is a
`ReadError` like any other bad input. A book larger than the size limit
(`common.DEFAULT_MAX_BOOK_MB`, the ``max_bytes`` argument) is refused without being held in
memory.
"""

from __future__ import annotations

import codecs
import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bookdup.model import Book
from readers.alto import read_alto_book, sniff_alto
from readers.common import (
    DEFAULT_LINES_PER_PAGE,
    DEFAULT_MAX_BOOK_BYTES,
    SNIFF_BYTES,
    ReadError,
    book_stem,
    natural_key,
    parse_year,
    plain_name,
    read_head,
    text_field,
)
from readers.djvu import djvu_item, is_djvu_text, read_djvu_book
from readers.hocr import read_hocr_book, sniff_hocr
from readers.jsonl import read_jsonl
from readers.manifest import Manifest, manifest_metadata, read_manifest
from readers.pagedir import page_files, read_page_folder
from readers.text import read_text_book

__all__ = [
    "DEFAULT_LINES_PER_PAGE",
    "DEFAULT_MAX_BOOK_BYTES",
    "KINDS",
    "ReadError",
    "ReadWarning",
    "Source",
    "check_read_options",
    "detect_kind",
    "iter_books",
    "iter_sources",
    "read_manifest",
    "read_source",
]

KINDS = ("txt", "djvu", "jsonl", "alto", "hocr", "pages", "dir", "unknown")
"""What `detect_kind` answers: a book file's format, `pages` for a folder that is one book (page
files), `dir` for a folder of inputs, `unknown` for anything else (scans, checksums, READMEs)."""

_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_XML_SUFFIXES = frozenset({".xml", ".alto"})
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml", ".hocr"})
_UNRECOGNISED = (
    "unrecognised input kind (expected .txt, _djvu.txt, .jsonl, ALTO .xml, hOCR .html/.hocr, "
    "any of them .gz, or a folder)"
)


def _head(path: Path) -> bytes:
    return read_head(path, SNIFF_BYTES)


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
    suffix = plain_name(path).suffix.lower()
    if is_djvu_text(path):
        return "djvu"
    if suffix == ".txt":
        return "txt"
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    head = _head(path) if suffix in _HTML_SUFFIXES | _XML_SUFFIXES else b""
    if suffix == ".alto" or (suffix in _XML_SUFFIXES and sniff_alto(head)):
        return "alto"
    if suffix == ".hocr" or (suffix in _HTML_SUFFIXES | _XML_SUFFIXES and sniff_hocr(head)):
        return "hocr"
    if not head and plain_name(path) != path:  # damaged before its first bytes: read to say so
        return "alto" if suffix in _XML_SUFFIXES else "hocr"
    return "unknown"


@dataclass(frozen=True)
class Source:
    """One input found by the walk, not yet read: cheap to find, small to send to a worker.

    ``kind`` is a `detect_kind` answer other than `dir` (`unknown` only for a file named
    explicitly: reading it gives the ReadError); for `pages` ``path`` is the folder and ``pages``
    its page files in reading order.
    """

    path: Path
    kind: str
    pages: tuple[Path, ...] = ()
    # metadata from a manifest beside the file (title, author, language, year); a sidecar's
    # own values win
    meta: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def default_id(self) -> str | None:
        """The id its book gets unless metadata names another; None for JSONL (many books)."""
        if self.kind in ("txt", "alto", "hocr"):
            return book_stem(self.path)
        if self.kind == "djvu":
            return djvu_item(self.path)
        if self.kind == "pages":
            return self.path.name
        return None


@dataclass(frozen=True)
class ReadWarning:
    """Something the walk skipped on purpose and says once (a manifest that names no book)."""

    where: str
    warning: str


def _with_manifest(book: Book | ReadError, meta: Mapping[str, Any] | None) -> Book | ReadError:
    """The book with the manifest's metadata where its own (file or sidecar) has none."""
    if not meta or not isinstance(book, Book):
        return book
    given = manifest_metadata(meta)
    values: dict[str, Any] = {
        "title": text_field(given.get("title")),
        "author": text_field(given.get("author")),
        "language": text_field(given.get("language")),
        "year": parse_year(given.get("year")),
    }
    fields = {k: v for k, v in values.items() if v is not None and getattr(book, k) is None}
    return dataclasses.replace(book, **fields) if fields else book


def check_read_options(
    lines_per_page: int, encoding: str | None, max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES
) -> None:
    """Raise ValueError for a page size, encoding or size limit that would fail every file alike."""
    if lines_per_page < 1:
        raise ValueError(f"lines_per_page must be at least 1, got {lines_per_page}")
    if max_bytes is not None and max_bytes < 1:
        raise ValueError(f"the size limit for one book must be positive, got {max_bytes} bytes")
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError as err:
            raise ValueError(f"unknown encoding: {encoding!r}") from err


def read_source(
    source: Source,
    *,
    lines_per_page: int = DEFAULT_LINES_PER_PAGE,
    encoding: str | None = None,
    max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> Iterator[Book | ReadError]:
    """The books of one source (one, except for JSONL), or a ReadError in place of each bad one;
    a book of more than ``max_bytes`` of text (None: no limit) is one of those."""
    for item in _read_source(source, lines_per_page, encoding, max_bytes):
        yield _with_manifest(item, source.meta)


def _read_source(
    source: Source, lines_per_page: int, encoding: str | None, max_bytes: int | None
) -> Iterator[Book | ReadError]:
    path, kind = source.path, source.kind
    if kind == "jsonl":
        yield from read_jsonl(
            path, lines_per_page=lines_per_page, encoding=encoding, max_bytes=max_bytes
        )
    elif kind == "txt":
        yield read_text_book(
            path, lines_per_page=lines_per_page, encoding=encoding, max_bytes=max_bytes
        )
    elif kind == "djvu":
        yield read_djvu_book(
            path, lines_per_page=lines_per_page, encoding=encoding, max_bytes=max_bytes
        )
    elif kind == "alto":
        yield read_alto_book(path, encoding=encoding, max_bytes=max_bytes)
    elif kind == "hocr":
        yield read_hocr_book(path, encoding=encoding, max_bytes=max_bytes)
    elif kind == "pages":
        pages = list(source.pages)
        yield read_page_folder(path, pages, detect_kind, encoding=encoding, max_bytes=max_bytes)
    else:
        yield ReadError(str(path), _UNRECOGNISED)


def _manifests(entries: list[Path]) -> dict[Path, Manifest]:
    """The metadata JSONL files among a folder's entries (`readers.manifest`)."""
    found = {}
    for entry in entries:
        if entry.is_file() and plain_name(entry).suffix.lower() in _JSONL_SUFFIXES:
            records = read_manifest(entry)
            if records is not None:
                found[entry] = Manifest(entry, records)
    return found


def _manifest_warning(manifest: Manifest, books: list[Path]) -> ReadWarning | None:
    """One line for a manifest with records that name no book file beside it, else None."""
    unmatched = manifest.unmatched(books)
    total = len(manifest.records)
    if not unmatched:
        return None
    if unmatched == total:
        return ReadWarning(
            str(manifest.path),
            f"metadata without text ({total} records) naming no book file beside it: skipped",
        )
    return ReadWarning(
        str(manifest.path),
        f"metadata of {total - unmatched} books used; {unmatched} of its {total} records "
        "name no book file beside it",
    )


def _walk(folder: Path, seen: set[Path]) -> Iterator[Source | ReadError | ReadWarning]:
    """Sources under `folder`, in natural name order; files of unknown kind are skipped silently
    because corpus folders routinely hold page scans, checksums and READMEs beside the text.

    A manifest (metadata records without text, `readers.manifest`) is not a source: its records
    go with the book files and page folders of the same folder they name."""
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
        yield Source(folder, "pages", tuple(pages))
    entries = [entry for entry in entries if not entry.name.startswith(".")]
    manifests = _manifests(entries) if pages is None else {}
    others = [entry for entry in entries if entry not in manifests]
    for entry in entries:
        if entry in manifests:
            if (warning := _manifest_warning(manifests[entry], others)) is not None:
                yield warning
            continue
        meta = next((r for m in manifests.values() if (r := m.record_for(entry))), None)
        if entry.is_dir():
            yield from (
                dataclasses.replace(s, meta=meta)
                if isinstance(s, Source) and s.kind == "pages" and s.path == entry and meta
                else s
                for s in _walk(entry, seen)
            )
            continue
        if pages is not None:
            continue
        try:
            kind = detect_kind(entry)
        except OSError as err:
            yield ReadError(str(entry), err.strerror or str(err))
            continue
        if kind != "unknown":
            yield Source(entry, kind, meta=meta if kind != "jsonl" else None)


def iter_sources(paths: Iterable[Path | str]) -> Iterator[Source | ReadError | ReadWarning]:
    """Every input under `paths` (files or folders) without reading it, lazily: a `Source` per
    book file, page folder or JSONL file, a ReadError for a path that cannot be walked, a
    ReadWarning for a manifest that names no book beside it (or one named on its own)."""
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from _walk(path, seen)
        elif not path.exists():
            yield ReadError(str(path), "no such file or directory")
        else:
            try:
                kind = detect_kind(path)
            except OSError as err:
                yield ReadError(str(path), err.strerror or str(err))
                continue
            if kind == "jsonl" and read_manifest(path) is not None:
                yield ReadWarning(
                    str(path), "metadata without text, not a corpus: skipped (index its folder)"
                )
                continue
            yield Source(path, kind)


def iter_books(
    paths: Iterable[Path | str],
    *,
    lines_per_page: int = DEFAULT_LINES_PER_PAGE,
    encoding: str | None = None,
    max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> Iterator[Book | ReadError]:
    """Yield a Book or a ReadError for every book found in `paths` (files or folders), lazily.

    `lines_per_page` sets the pseudo-page size for text without form feeds; `encoding` forces
    the encoding of every input instead of detecting it; `max_bytes` is the size limit for one
    book (None: none). They are checked before reading, since a wrong value would fail every
    file alike.
    """
    check_read_options(lines_per_page, encoding, max_bytes)
    return _read_all(iter_sources(paths), lines_per_page, encoding, max_bytes)


def _read_all(
    sources: Iterable[Source | ReadError | ReadWarning],
    lines_per_page: int,
    encoding: str | None,
    max_bytes: int | None,
) -> Iterator[Book | ReadError]:
    for source in sources:
        if isinstance(source, ReadError):
            yield source
        elif isinstance(source, Source):
            yield from read_source(
                source, lines_per_page=lines_per_page, encoding=encoding, max_bytes=max_bytes
            )
