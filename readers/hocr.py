"""hOCR (HTML with `ocr_page` / `ocr_line` / `ocrx_word` classes), as written by Tesseract & co.

Parsed with libxml2's tolerant HTML parser (lxml), streaming into a parser target that keeps
only the text: hOCR in the wild is often not XHTML, and a book's hOCR runs to megabytes, which
the standard library's pure-Python `html.parser` took about four times as long over. Like a
browser, libxml2 applies HTML's implied end tags (a `<p>` ends where the next `<p>` or a
`<div>` starts); well-nested hOCR reads the same either way.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import IO, Any

from lxml import etree

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
    check_no_nul,
    check_text_head,
    guess_encoding,
    make_book,
    open_input,
    over_limit,
    sidecar_metadata,
    sidecar_of,
)

_LINE_CLASSES = frozenset({"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"})
_PARAGRAPH_CLASSES = frozenset({"ocr_par", "ocr_carea"})
_VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_NO_CLASSES: frozenset[str] = frozenset()
_DETECT_BYTES = 1 << 16
_CHUNK = 1 << 16
# The prolog (XML declaration, comments) and a DOCTYPE whose internal subset declares entities.
_ENTITY_DECLARATION = re.compile(
    r"\A\s*(?:<\?.*?\?>\s*|<!--.*?-->\s*)*<!DOCTYPE[^\[>]*\[[^\]]*<!ENTITY", re.S | re.I
)


class _HocrPages:
    """lxml parser target collecting page texts: one line per `ocr_line`, a blank line after each
    paragraph, a space for every word start and void element (`<br>`, `<img>` …)."""

    def __init__(self, max_chars: int | None = None) -> None:
        self.pages: list[str] = []
        self._stack: list[frozenset[str]] = []
        self._tags: list[str] = []
        self._lines: list[str] | None = None
        self._fragments: list[str] = []
        self._max_chars = max_chars
        self._chars = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if tag in _VOID_TAGS:
            if self._lines is not None:
                self._fragments.append(" ")
            return
        if len(self._tags) >= MAX_XML_DEPTH:
            raise BadInput(f"markup nested deeper than {MAX_XML_DEPTH} elements")
        names = attrib.get("class")
        classes = frozenset(names.split()) if names else _NO_CLASSES
        self._tags.append(tag)
        self._stack.append(classes)
        if not classes:
            return
        if "ocr_page" in classes:
            self._end_page()
            self._lines = []
        elif classes & _LINE_CLASSES:
            self._end_line()
        elif "ocrx_word" in classes:
            self._fragments.append(" ")

    def end(self, tag: str) -> None:
        depth = len(self._tags) - 1
        while depth >= 0 and self._tags[depth] != tag:  # the innermost open element of the tag
            depth -= 1
        if depth < 0:  # a void element
            return
        closed = self._stack[depth:]
        del self._tags[depth:], self._stack[depth:]
        for classes in reversed(closed):
            if "ocr_page" in classes:
                self._end_page()
            elif classes & _LINE_CLASSES:
                self._end_line()
            elif classes & _PARAGRAPH_CLASSES:
                self._end_line()
                if self._lines and self._lines[-1]:
                    self._lines.append("")

    def data(self, data: str) -> None:
        if self._lines is not None:
            self._fragments.append(data)

    def close(self) -> list[str]:
        self._end_page()
        return self.pages

    def _end_line(self) -> None:
        line = " ".join("".join(self._fragments).split())
        self._fragments = []
        if line and self._lines is not None:
            self._lines.append(line)
            self._chars += len(line) + 1
            if self._max_chars is not None and self._chars > self._max_chars:
                raise over_limit("text is", self._max_chars)

    def _end_page(self) -> None:
        if self._lines is None:
            return
        self._end_line()
        self.pages.append("\n".join(self._lines).strip("\n"))
        self._lines = None


def hocr_pages(
    path: Path, encoding: str | None, max_chars: int | None = DEFAULT_MAX_BOOK_BYTES
) -> tuple[list[str], str, int, bool]:
    """(pages, encoding, decode errors, whether the encoding is a guess) of one hOCR file
    (gzip'd or not), one page per `ocr_page` element; at most ``max_chars`` characters of text
    (None: no limit)."""
    target = _HocrPages(max_chars)
    # The text is handed over as UTF-8 with that encoding forced, so that a `<meta charset>`
    # or XML declaration naming the file's original encoding cannot make libxml2 decode it again.
    parser = etree.HTMLParser(target=target, encoding="utf-8", huge_tree=True)
    pages: list[str] = []
    with open_input(path) as f:
        head = f.read(_DETECT_BYTES)
        known = check_text_head(head[:SNIFF_BYTES], encoding)
        used = known or _detect(head)
        try:
            errors = _feed(parser, f, head, used)
            pages = parser.close()
        except etree.XMLSyntaxError:  # libxml2 recovers from broken markup; a last resort
            errors = 0
    if not pages:
        raise BadInput("no ocr_page element in hOCR file")
    return pages, used, errors, known is None and used != "utf-8"


def _detect(head: bytes) -> str:
    """UTF-8 when the head decodes as UTF-8, else charset-normalizer's guess."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        return guess_encoding(head)


def _feed(parser: etree.HTMLParser, f: IO[bytes], head: bytes, encoding: str) -> int:
    """Decode the file chunk by chunk into the parser; the number of undecodable characters."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    text = decoder.decode(head, final=len(head) < _DETECT_BYTES).removeprefix("\ufeff")
    if _ENTITY_DECLARATION.match(text):
        raise BadInput(ENTITY_REFUSED)
    offset, errors, blank = 0, 0, True
    while True:
        if text:
            check_no_nul(text, offset)
            errors += text.count("\ufffd")
            blank = blank and text.isspace()
            parser.feed(text.encode("utf-8", "replace"))
            offset += len(text)
        if not head:
            break
        head = f.read(_CHUNK)
        text = decoder.decode(head, final=not head)
    if blank:
        raise BadInput("empty file")
    return errors


def read_hocr_book(
    path: Path, *, encoding: str | None = None, max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES
) -> Book | ReadError:
    """Read one hOCR file as one book; id = file stem, metadata from a `.json` sidecar."""
    try:
        pages, used, errors, guessed = hocr_pages(path, encoding, max_bytes)
        meta = sidecar_metadata([sidecar_of(path)])
    except BadInput as err:
        return err.to_error(path)
    except OSError as err:
        return ReadError(str(path), err.strerror or str(err))
    extra: dict[str, Any] = {"kind": "hocr", "encoding": used, "decode_errors": errors}
    if guessed:
        extra["encoding_guessed"] = True
    return make_book(book_stem(path), pages, meta, source=str(path), extra=extra)


def sniff_hocr(head: bytes) -> bool:
    """hOCR declares its page elements with the `ocr_page` class near the start."""
    sample = head[:SNIFF_BYTES]
    return "ocr_page" in sample.decode(bom_encoding(sample) or "utf-8", errors="ignore")
