"""ALTO XML (LoC layout standard): text from `String/@CONTENT`, lines from `TextLine`.

One file may hold one page (a folder of them is a book, see `pagedir`) or a whole book with several
`<Page>` elements. Parsing streams with `iterparse` and clears each page once read; element names
are matched by local name, so every ALTO version's namespace works.
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from bookdup.model import Book
from readers.common import (
    SNIFF_BYTES,
    BadInput,
    ReadError,
    bom_encoding,
    guess_encoding,
    make_book,
    sidecar_metadata,
)

_XML_DECL_ENCODING = re.compile(rb"^<\?xml[^>]*\bencoding\s*=\s*[\"']([A-Za-z0-9._-]+)[\"']")
_HYPHENS = ("-", "\u00ac", "\u00ad", "\u2010", "\u2011", "=")
_DETECT_BYTES = 1 << 16


@dataclass
class HyphenState:
    """Carries a pending `HypPart2` skip across lines, pages and page files of one book.

    When the first half of a hyphenated word carries the whole word in SUBS_CONTENT we emit that
    word once and drop the second half, which may sit on the next line or the next page.
    """

    skip_part2: bool = False


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def xml_encoding(path: Path, declared: str | None) -> tuple[str | None, str]:
    """(override for the XML parser or None, encoding name to record).

    The XML declaration or a BOM is trusted; an undeclared file that is not UTF-8 (legal XML
    requires it, OCR exports do not always comply) is decoded with charset-normalizer's guess.
    """
    if declared:
        return declared, declared
    with path.open("rb") as f:
        head = f.read(_DETECT_BYTES)
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


def _parse_error(err: ET.ParseError) -> BadInput:
    """Name the parser's line and (1-based) column: the fix is usually one bad character."""
    line, column = err.position
    message = re.sub(r": line \d+, column \d+$", "", str(err))
    return BadInput(f"malformed XML: {message} (column {column + 1})", line)


def alto_pages(path: Path, encoding: str | None, hyphens: HyphenState) -> list[str]:
    """Text of each `<Page>` of an ALTO file: lines joined by newlines, blocks by a blank line.

    A hyphenated word split as HypPart1/HypPart2 becomes its SUBS_CONTENT; without SUBS_CONTENT
    the line keeps a trailing hyphen so that text normalisation re-joins it like plain OCR text.
    """
    if path.stat().st_size == 0:
        raise BadInput("empty file")
    parser = ET.XMLParser(encoding=encoding) if encoding else None
    pages: list[str] = []
    blocks: list[str] = []
    lines: list[str] = []
    words: list[str] = []
    line_hyphenated = False
    try:
        with path.open("rb") as f:
            for _, elem in ET.iterparse(f, events=("end",), parser=parser):
                name = _local(elem.tag)
                if name == "String":
                    kind, content = elem.get("SUBS_TYPE"), elem.get("CONTENT") or ""
                    whole = elem.get("SUBS_CONTENT")
                    if kind == "HypPart1" and whole:
                        words.append(whole)
                        hyphens.skip_part2 = True
                    elif kind == "HypPart2" and hyphens.skip_part2:
                        hyphens.skip_part2 = False
                    else:
                        words.append(content)
                        hyphens.skip_part2 = False
                        line_hyphenated = line_hyphenated or kind == "HypPart1"
                elif name == "HYP":
                    line_hyphenated = line_hyphenated or not hyphens.skip_part2
                elif name == "TextLine":
                    words = [w for w in words if w]
                    if line_hyphenated and words and not words[-1].endswith(_HYPHENS):
                        words[-1] += "-"
                    lines.append(" ".join(words))
                    words, line_hyphenated = [], False
                elif name == "TextBlock" and lines:
                    blocks.append("\n".join(lines))
                    lines = []
                elif name == "Page":
                    if lines:
                        blocks.append("\n".join(lines))
                    pages.append("\n\n".join(blocks))
                    blocks, lines = [], []
                    elem.clear()
    except ET.ParseError as err:
        raise _parse_error(err) from err
    if not pages:
        raise BadInput("no <Page> element in ALTO file")
    return pages


def read_alto_book(path: Path, *, encoding: str | None = None) -> Book | ReadError:
    """Read one ALTO file as one book (each `<Page>` a page); id = file stem, `.json` sidecar."""
    try:
        override, recorded = xml_encoding(path, encoding)
        pages = alto_pages(path, override, HyphenState())
        meta = sidecar_metadata([path.with_suffix(".json")])
    except BadInput as err:
        return err.to_error(path)
    except (OSError, LookupError) as err:
        return ReadError(str(path), str(err))
    return make_book(
        path.stem,
        pages,
        meta,
        source=str(path),
        extra={"kind": "alto", "encoding": recorded, "decode_errors": 0},
    )


def sniff_alto(head: bytes) -> bool:
    """ALTO files name the LoC ALTO namespace or have an `<alto>` root near the start."""
    sample = head[:SNIFF_BYTES]
    bom = bom_encoding(sample)
    text = sample.decode(bom or "utf-8", errors="ignore")
    return "standards/alto" in text or re.search(r"<(?:\w+:)?alto[\s>]", text) is not None
