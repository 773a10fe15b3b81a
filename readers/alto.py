"""ALTO XML (LoC layout standard): text from `String/@CONTENT`, lines from `TextLine`.

One file may hold one page (a folder of them is a book, see `pagedir`) or a whole book with several
`<Page>` elements. The file is streamed through expat with element handlers and no tree at all,
so memory follows the text extracted, not the markup; element names are matched by local name,
so every ALTO version's namespace (or prefix) works.

Untrusted XML is refused, not expanded: any entity declaration (the "billion laughs" and
external-entity (XXE) attacks both need one; ALTO never does) ends the read with an error
before a single entity is expanded, expat never loads an external DTD, and elements nested
deeper than `MAX_XML_DEPTH` are refused, because each open element costs memory.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

from bookdup.model import Book
from readers.common import (
    DEFAULT_MAX_BOOK_BYTES,
    ENTITY_REFUSED,
    MAX_XML_DEPTH,
    SNIFF_BYTES,
    BadInput,
    ReadError,
    bom_encoding,
    book_stem,
    guess_encoding,
    make_book,
    open_input,
    over_limit,
    read_head,
    sidecar_metadata,
    sidecar_of,
)

_XML_DECL_ENCODING = re.compile(rb"^<\?xml[^>]*\bencoding\s*=\s*[\"']([A-Za-z0-9._-]+)[\"']")
_HYPHENS = ("-", "\u00ac", "\u00ad", "\u2010", "\u2011", "=")
_DETECT_BYTES = 1 << 16
_CHUNK = 1 << 16


@dataclass
class HyphenState:
    """Carries a pending `HypPart2` skip across lines, pages and page files of one book.

    When the first half of a hyphenated word carries the whole word in SUBS_CONTENT we emit that
    word once and drop the second half, which may sit on the next line or the next page.
    """

    skip_part2: bool = False


def _local(tag: str) -> str:
    return tag.rsplit(":", 1)[-1]


def xml_encoding(path: Path, declared: str | None) -> tuple[str | None, str]:
    """(override for the XML parser or None, encoding name to record).

    The XML declaration or a BOM is trusted; an undeclared file that is not UTF-8 (legal XML
    requires it, OCR exports do not always comply) is decoded with charset-normalizer's guess.
    """
    if declared:
        return declared, declared
    head = read_head(path, _DETECT_BYTES)
    bom = bom_encoding(head)
    if bom:
        return None, bom
    match = _XML_DECL_ENCODING.match(head.lstrip())
    if match:
        return None, match.group(1).decode("ascii").lower()
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return None, "utf-8"
    except UnicodeDecodeError:
        guess = guess_encoding(head)
        return guess, guess


def _parse_error(err: expat.ExpatError) -> BadInput:
    """Name the parser's line and (1-based) column: the fix is usually one bad character."""
    message = expat.errors.messages.get(err.code, str(err))
    return BadInput(f"malformed XML: {message} (column {err.offset + 1})", err.lineno)


def _refuse_entity(*_args: Any) -> int:
    """Expat handler for entity declarations and references: refuse, never expand or read."""
    raise BadInput(ENTITY_REFUSED)


@dataclass
class _AltoText:
    """Expat handlers collecting the text of each `<Page>`: lines joined by newlines, blocks by
    a blank line.

    A hyphenated word split as HypPart1/HypPart2 becomes its SUBS_CONTENT; without SUBS_CONTENT
    the line keeps a trailing hyphen so that text normalisation re-joins it like plain OCR text.
    """

    hyphens: HyphenState
    max_chars: int | None
    pages: list[str] = field(default_factory=list)
    chars: int = 0
    depth: int = 0
    _blocks: list[str] = field(default_factory=list)
    _lines: list[str] = field(default_factory=list)
    _words: list[str] = field(default_factory=list)
    _hyphenated: bool = False

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth > MAX_XML_DEPTH:
            raise BadInput(f"XML nested deeper than {MAX_XML_DEPTH} elements")
        name = _local(tag)
        if name == "String":
            self._string(attrs)
        elif name == "HYP":
            self._hyphenated = self._hyphenated or not self.hyphens.skip_part2

    def _string(self, attrs: dict[str, str]) -> None:
        kind, content = attrs.get("SUBS_TYPE"), attrs.get("CONTENT") or ""
        whole = attrs.get("SUBS_CONTENT")
        if kind == "HypPart1" and whole:
            self._words.append(whole)
            self.hyphens.skip_part2 = True
        elif kind == "HypPart2" and self.hyphens.skip_part2:
            self.hyphens.skip_part2 = False
        else:
            self._words.append(content)
            self.hyphens.skip_part2 = False
            self._hyphenated = self._hyphenated or kind == "HypPart1"

    def end(self, tag: str) -> None:
        self.depth -= 1
        name = _local(tag)
        if name == "TextLine":
            self._end_line()
        elif name == "TextBlock" and self._lines:
            self._blocks.append("\n".join(self._lines))
            self._lines = []
        elif name == "Page":
            if self._lines:
                self._blocks.append("\n".join(self._lines))
            self.pages.append("\n\n".join(self._blocks))
            self._blocks, self._lines = [], []

    def _end_line(self) -> None:
        words = [w for w in self._words if w]
        if self._hyphenated and words and not words[-1].endswith(_HYPHENS):
            words[-1] += "-"
        line = " ".join(words)
        self._lines.append(line)
        self._words, self._hyphenated = [], False
        self.chars += len(line) + 1
        if self.max_chars is not None and self.chars > self.max_chars:
            raise over_limit("text is", self.max_chars)


def _parser(encoding: str | None, handler: _AltoText) -> Any:
    parser = expat.ParserCreate(encoding)
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_entity
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser


def alto_pages(
    path: Path,
    encoding: str | None,
    hyphens: HyphenState,
    max_chars: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> list[str]:
    """Text of each `<Page>` of an ALTO file (gzip'd or not), streamed; at most ``max_chars``
    characters of text (None: no limit)."""
    handler = _AltoText(hyphens, max_chars)
    parser = _parser(encoding, handler)
    with open_input(path) as f:
        chunk = f.read(SNIFF_BYTES)
        if not chunk:
            raise BadInput("empty file")
        try:
            while chunk:
                parser.Parse(chunk, False)
                chunk = f.read(_CHUNK)
            parser.Parse(b"", True)
        except expat.ExpatError as err:
            raise _parse_error(err) from err
        except BadInput as err:
            err.line = err.line or parser.CurrentLineNumber
            raise
    if not handler.pages:
        raise BadInput("no <Page> element in ALTO file")
    return handler.pages


def read_alto_book(
    path: Path, *, encoding: str | None = None, max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES
) -> Book | ReadError:
    """Read one ALTO file as one book (each `<Page>` a page); id = file stem, `.json` sidecar."""
    try:
        override, recorded = xml_encoding(path, encoding)
        pages = alto_pages(path, override, HyphenState(), max_bytes)
        meta = sidecar_metadata([sidecar_of(path)])
    except BadInput as err:
        return err.to_error(path)
    except (OSError, LookupError) as err:
        return ReadError(str(path), str(err))
    extra: dict[str, Any] = {"kind": "alto", "encoding": recorded, "decode_errors": 0}
    if override is not None and encoding is None:  # neither declared, nor UTF-8
        extra["encoding_guessed"] = True
    return make_book(book_stem(path), pages, meta, source=str(path), extra=extra)


def sniff_alto(head: bytes) -> bool:
    """ALTO files name the LoC ALTO namespace or have an `<alto>` root near the start."""
    sample = head[:SNIFF_BYTES]
    bom = bom_encoding(sample)
    text = sample.decode(bom or "utf-8", errors="ignore")
    return "standards/alto" in text or re.search(r"<(?:\w+:)?alto[\s>]", text) is not None
