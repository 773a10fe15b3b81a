"""Shared pieces of the input readers: errors, decoding, binary sniffing, page splitting, metadata.

Every reader turns bad input into a `ReadError` value rather than an exception, so that one
broken file in a corpus of a million books is reported and the indexing job carries on.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from charset_normalizer import from_bytes

from bookdup.model import Book

SNIFF_BYTES = 8192
"""How much of a file the binary and kind sniffs look at."""

BINARY_CONTROL_RATIO = 0.30
"""Above this share of non-text control characters in the sniff window a file is binary."""

MB = 1 << 20

DEFAULT_MAX_BOOK_MB = 32
"""The largest book the readers accept, in MB of text: a plain-text file's (decompressed) size,
a JSONL record's line, the text extracted from ALTO or hOCR, a page folder's pages together.

Feature extraction holds about 13 times a book's text in memory (measured: a 32 MB book took
440 MB in one worker; a job whose two workers each read a 31 MB one-line book peaked at 1.05 GB
for all its processes), so a job of two workers stays under 1.5 GB even when both meet a book
at the limit. The largest Project Gutenberg books (the complete Shakespeare, the King James
Bible) are 4 to 6 MB of text; a larger input is usually several books in one file or damage (a
dump without line breaks). `bookdup index --max-book-mb` raises it.
"""

DEFAULT_MAX_BOOK_BYTES = DEFAULT_MAX_BOOK_MB * MB

DEFAULT_LINES_PER_PAGE = 40
"""Page size of text without form feeds (`split_pages`): about one printed page."""

GZIP_SUFFIX = ".gz"

MAX_XML_DEPTH = 256
"""Deepest element nesting accepted in ALTO and hOCR: real files nest about ten deep, and every
open element costs memory (a 7 MB file of 1M nested elements took 300 MB as a tree)."""

ENTITY_REFUSED = (
    "XML entity declaration refused: bookdup never expands entities (a 'billion laughs' file "
    "would take all memory) nor reads external ones (XXE would read local files)"
)

_TEXT_CONTROLS = frozenset("\t\n\r\f\v")
_WESTERN = ("cp1252", "latin_1")
_TIE_CHAOS = 0.05
_META_FIELDS = ("id", "title", "author", "language", "year")
_UTF16_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True)
class ReadError:
    """One input that could not be read; yielded in place of a Book so the caller can report it."""

    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.reason}"


class BadInput(Exception):
    """Raised inside a reader; turned into a `ReadError` at the reader's boundary."""

    def __init__(self, reason: str, line: int | None = None, path: Path | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.path = path  # set when the fault is in another file than the book's (a sidecar)

    def to_error(self, default: Path) -> ReadError:
        """The `ReadError` to yield, naming the file at fault."""
        return ReadError(str(self.path or default), self.reason, self.line)


class BookTooLarge(BadInput):
    """A book over the size limit; a page folder names itself rather than the page that
    crossed the limit."""


def format_mb(n_bytes: int) -> str:
    """``33554432`` → ``"32 MB"``, ``1073741825`` → ``"1024.0 MB"``."""
    mb = n_bytes / MB
    return f"{mb:g} MB" if mb == int(mb) else f"{mb:.1f} MB"


def over_limit(what: str, limit: int) -> BookTooLarge:
    """The error for a book whose text (``what``: "file is 1024.0 MB", "text is") passes
    ``limit`` bytes."""
    return BookTooLarge(f"{what} over the limit of {format_mb(limit)} for one book")


def plain_name(path: Path) -> Path:
    """The name a gzip'd file stands for (`a.txt.gz` → `a.txt`); other paths unchanged."""
    if path.name.lower().endswith(GZIP_SUFFIX) and len(path.name) > len(GZIP_SUFFIX):
        return path.with_name(path.name[: -len(GZIP_SUFFIX)])
    return path


def is_gzip(path: Path) -> bool:
    return plain_name(path) != path


def book_stem(path: Path) -> str:
    """The file's stem, the default book id: `b1.txt` and `b1.txt.gz` → `b1`."""
    return plain_name(path).stem


def sidecar_of(path: Path) -> Path:
    """The `.json` metadata sidecar beside a book file: `b1.txt(.gz)` → `b1.json`."""
    return plain_name(path).with_suffix(".json")


TRUNCATED_GZIP = (
    "truncated gzip file: the compressed data ends before its end marker "
    "(an interrupted download or copy?)"
)


@contextmanager
def open_input(path: Path) -> Iterator[IO[bytes]]:
    """The file's bytes, decompressed on the fly when its name ends in `.gz`.

    Digital libraries ship OCR gzip'd (the Internet Archive's `_chocr.html.gz` and
    `_hocr_searchtext.txt.gz`, compressed dumps); damage shows only while reading, so errors
    from the decompressor anywhere inside the block become a `BadInput` naming the problem.
    """
    try:
        with gzip.open(path, "rb") if is_gzip(path) else path.open("rb") as f:
            yield cast(IO[bytes], f)
    except EOFError as err:
        raise BadInput(TRUNCATED_GZIP) from err
    except (gzip.BadGzipFile, zlib.error) as err:
        raise BadInput(f"damaged gzip file: {err}") from err


def read_head(path: Path, size: int) -> bytes:
    """Up to ``size`` first (decompressed) bytes, for sniffing: damage gives what was read."""
    try:
        with open_input(path) as f:
            return f.read(size)
    except BadInput:
        return b""


def read_input(path: Path, max_bytes: int | None) -> bytes:
    """A whole (decompressed) file, refused with `BookTooLarge` over ``max_bytes`` before it is
    read (plain files: by their size) or as soon as decompression passes the limit (gzip)."""
    if max_bytes is not None and not is_gzip(path):
        size = path.stat().st_size
        if size > max_bytes:
            raise over_limit(f"file is {format_mb(size)},", max_bytes)
    with open_input(path) as f:
        data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise over_limit("decompressed text is", max_bytes)
    return data


@dataclass(frozen=True)
class Decoded:
    """Text with the encoding it was decoded with and how many characters could not be decoded."""

    text: str
    encoding: str
    decode_errors: int
    guessed: bool = False  # not valid UTF-8 and nothing declared: the encoding is a guess


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key so that `page2` sorts before `page10` (page files are rarely zero-padded)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.casefold())
        for part in re.split(r"(\d+)", name)
        if part
    )


def bom_encoding(head: bytes) -> str | None:
    """Encoding named by a byte-order mark, if the data starts with one."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith(_UTF16_BOMS[:2]):
        return "utf-32"
    if head.startswith(_UTF16_BOMS[2:]):
        return "utf-16"
    return None


def utf16_without_bom(head: bytes) -> str | None:
    """Recognise BOM-less UTF-16 of mostly-Latin text by its NUL bytes in every other position.

    Such files would otherwise be taken for binary because of those NULs.
    """
    even, odd = head[0:4096:2], head[1:4096:2]
    if len(odd) < 8:
        return None
    even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / len(odd)
    if odd_nul > 0.4 and even_nul < 0.05:
        return "utf-16-le"
    if even_nul > 0.4 and odd_nul < 0.05:
        return "utf-16-be"
    return None


def is_wide_encoding(encoding: str) -> bool:
    """UTF-16/32 text contains NUL bytes, so the binary sniff must look at characters instead."""
    name = codecs.lookup(encoding).name
    return name.startswith(("utf-16", "utf-32"))


def looks_binary(head: bytes, encoding: str | None = None) -> bool:
    """True when the sniff window has NUL bytes or more than 30% non-text control characters."""
    if encoding is not None and is_wide_encoding(encoding):
        codes = [ord(ch) for ch in head.decode(encoding, errors="ignore")]
    else:
        codes = list(head)
    if not codes:
        return False
    if 0 in codes:
        return True
    controls = sum(1 for c in codes if (c < 0x20 or c == 0x7F) and chr(c) not in _TEXT_CONTROLS)
    return controls / len(codes) > BINARY_CONTROL_RATIO


def sniff_encoding(head: bytes, declared: str | None) -> str | None:
    """The encoding known before decoding: declared, from a BOM, or BOM-less UTF-16; else None."""
    return declared or bom_encoding(head) or utf16_without_bom(head)


def check_text_head(head: bytes, declared: str | None) -> str | None:
    """Raise `BadInput` for empty or binary data; return the encoding known up front (if any)."""
    if not head:
        raise BadInput("empty file")
    known = sniff_encoding(head, declared)
    if looks_binary(head, known):
        raise BadInput("binary file, not text")
    return known


def guess_encoding(data: bytes) -> str:
    """charset-normalizer's guess for non-UTF-8 data, preferring Windows-1252/Latin-1 on a near tie.

    On short samples it cannot tell the Western code pages apart (cp1250, cp1257 and cp1252 all
    decode "Déjà" without chaos) and may pick a Central European one; the books this project
    meets (en, de, fr, it, es) are far more often Western. Latin-1 when there is no guess at all.
    """
    matches = list(from_bytes(data))
    if not matches:
        return "latin-1"
    for match in matches:
        if match.encoding in _WESTERN and match.chaos <= matches[0].chaos + _TIE_CHAOS:
            return match.encoding
    return matches[0].encoding


def decode_bytes(data: bytes, declared: str | None = None) -> Decoded:
    """Decode a whole text file: declared → UTF-8 → charset-normalizer's guess → Latin-1.

    Never fails: OCR text of unknown provenance must still be indexed; the number of replacement
    characters tells the caller how damaged the text is.
    """
    known = check_text_head(data[:SNIFF_BYTES], declared)
    guessed = False
    if known is not None:
        text, encoding = data.decode(known, errors="replace"), known
    else:
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            encoding, guessed = guess_encoding(data), True
            text = data.decode(encoding, errors="replace")
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise BadInput("empty file")
    check_no_nul(text)
    return Decoded(text, encoding, text.count("\ufffd"), guessed)


def check_no_nul(text: str, offset: int = 0) -> None:
    """Raise `BadInput` when decoded text holds a NUL character: no text format has one, so
    the file is damaged (a zero-filled block from an interrupted copy) or not text at all."""
    at = text.find("\x00")
    if at >= 0:
        raise BadInput(
            f"NUL characters in the text (the first at character {offset + at}): "
            "a damaged file (a zero-filled block?) or not a text file"
        )


def decoding_warning(extra: Mapping[str, Any]) -> str | None:
    """What to tell the user about how a book's bytes were decoded (its reader's ``extra``):
    a guessed encoding or undecodable characters mean the indexed text may be garbled."""
    encoding, errors = extra.get("encoding"), int(extra.get("decode_errors") or 0)
    parts = []
    if extra.get("encoding_guessed"):
        parts.append(f"not valid UTF-8; decoded as {encoding} (a guess)")
    if errors:
        parts.append(f"{errors} characters could not be decoded as {encoding}")
    if not parts:
        return None
    return "; ".join(parts) + " — check the text, or give the encoding with --encoding"


def read_text_file(
    path: Path, declared: str | None = None, max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES
) -> Decoded:
    """Read and decode a text file (one book or one page), gzip'd or not, of at most
    ``max_bytes`` (None: no limit)."""
    return decode_bytes(read_input(path, max_bytes), declared)


def split_pages(text: str, lines_per_page: int) -> list[str]:
    """Split text into pages at form feeds; without any, into pages of `lines_per_page` lines.

    OCR'd text without page markers still needs pages for the page-level signals, and 40 lines
    (`DEFAULT_LINES_PER_PAGE`) is about one printed page. A trailing form feed does not start
    an extra, empty page.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\f" in text:
        pages = text.split("\f")
        if not pages[-1].strip():
            pages.pop()
        return pages
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return ["\n".join(lines[i : i + lines_per_page]) for i in range(0, len(lines), lines_per_page)]


def parse_year(value: Any) -> int | None:
    """Year from metadata: an int, or the first 3–4 digit number in a string such as "c. 1869"."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    match = re.search(r"\d{3,4}", str(value))
    return int(match.group()) if match else None


def text_field(value: Any) -> str | None:
    """A metadata string; several authors given as a list are joined with "; "."""
    if value is None:
        return None
    if isinstance(value, list):
        value = "; ".join(str(v).strip() for v in value if v is not None and str(v).strip())
    text = str(value).strip()
    return text or None


MAX_METADATA_BYTES = MB
"""A metadata sidecar larger than this is not metadata (a book saved under the wrong name)."""

_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
_FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str, int), "a string or an integer"),
    "title": ((str, int, float), "a string"),
    "author": ((str, list), "a string or a list of strings"),
    "language": ((str,), "a string"),
    "year": ((int, str), "an integer or a string"),
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "a number")


def check_metadata(meta: Mapping[str, Any], line: int | None = None) -> None:
    """Raise `BadInput` for a metadata field of the wrong JSON type (an id that is an object, a
    language that is a list): turned into text it would be a garbled id or field."""
    for name, (types, wanted) in _FIELD_TYPES.items():
        value = meta.get(name)
        if value is None:
            continue
        wrong = isinstance(value, bool) or not isinstance(value, types)
        if isinstance(value, list):
            wrong = wrong or not all(isinstance(v, str) for v in value)
        if wrong:
            raise BadInput(f"{name!r} must be {wanted}, not {_json_type(value)}", line)


def load_metadata(path: Path) -> dict[str, Any]:
    """Read a JSON metadata sidecar; it must hold one JSON object with fields of the right types."""
    size = path.stat().st_size
    if size > MAX_METADATA_BYTES:
        limit = format_mb(MAX_METADATA_BYTES)
        raise BadInput(f"metadata file is {format_mb(size)}, over the limit of {limit}", path=path)
    try:
        meta = json.loads(path.read_bytes())
    except json.JSONDecodeError as err:
        reason = f"malformed JSON metadata: {err.msg} (column {err.colno})"
        raise BadInput(reason, err.lineno, path) from err
    except UnicodeDecodeError as err:
        raise BadInput(f"metadata is not UTF-8: {err.reason}", path=path) from err
    except RecursionError as err:
        raise BadInput("malformed JSON metadata: nested too deeply", path=path) from err
    if not isinstance(meta, dict):
        raise BadInput("metadata is not a JSON object", path=path)
    try:
        check_metadata(meta)
    except BadInput as err:
        raise BadInput(f"metadata: {err.reason}", path=path) from err
    return meta


def make_book(
    default_id: str,
    pages: list[str],
    meta: Mapping[str, Any],
    *,
    source: str,
    extra: dict[str, Any],
) -> Book:
    """Build a Book from pages and metadata; unknown metadata keys go to `extra`.

    The reader's own keys in `extra` (kind, encoding, decode_errors) win over metadata keys of the
    same name, because they describe what was actually read.
    """
    book_id = text_field(meta.get("id")) or default_id
    merged = {k: v for k, v in meta.items() if k not in _META_FIELDS and k not in ("pages", "text")}
    merged.update(extra)
    return Book(
        id=book_id,
        pages=pages,
        title=text_field(meta.get("title")),
        author=text_field(meta.get("author")),
        language=text_field(meta.get("language")),
        year=parse_year(meta.get("year")),
        source=source,
        extra=merged,
    )


def sidecar_metadata(candidates: list[Path]) -> dict[str, Any]:
    """Metadata from the first existing sidecar among `candidates`, or {} when there is none."""
    for candidate in candidates:
        if candidate.is_file():
            return load_metadata(candidate)
    return {}
