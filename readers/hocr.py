"""hOCR (HTML with `ocr_page` / `ocr_line` / `ocrx_word` classes), as written by Tesseract & co.

Parsed with libxml2's tolerant HTML parser (lxml), streaming into a parser target that keeps
only the text: hOCR in the wild is often not XHTML, and a book's hOCR runs to megabytes, which
the standard library's pure-Python `html.parser` took about four times as long over. Like a
browser, libxml2 applies HTML's implied end tags (a `<p>` ends where the next `<p>` or a
`<div>` starts); well-nested hOCR reads the same either way.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from bookdup.model import Book
from readers.common import (
    SNIFF_BYTES,
    BadInput,
    ReadError,
    bom_encoding,
    make_book,
    read_text_file,
    sidecar_metadata,
)

_LINE_CLASSES = frozenset({"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"})
_PARAGRAPH_CLASSES = frozenset({"ocr_par", "ocr_carea"})
_VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
_NO_CLASSES: frozenset[str] = frozenset()


class _HocrPages:
    """lxml parser target collecting page texts: one line per `ocr_line`, a blank line after each
    paragraph, a space for every word start and void element (`<br>`, `<img>` …)."""

    def __init__(self) -> None:
        self.pages: list[str] = []
        self._stack: list[frozenset[str]] = []
        self._tags: list[str] = []
        self._lines: list[str] | None = None
        self._fragments: list[str] = []

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if tag in _VOID_TAGS:
            if self._lines is not None:
                self._fragments.append(" ")
            return
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
        if tag not in self._tags:  # a void element
            return
        depth = len(self._tags) - 1 - self._tags[::-1].index(tag)
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

    def _end_page(self) -> None:
        if self._lines is None:
            return
        self._end_line()
        self.pages.append("\n".join(self._lines).strip("\n"))
        self._lines = None


def hocr_pages(path: Path, encoding: str | None) -> tuple[list[str], str, int]:
    """(pages, encoding, decode errors) of one hOCR file; one page per `ocr_page` element."""
    decoded = read_text_file(path, encoding)
    pages = parse_hocr(decoded.text)
    if not pages:
        raise BadInput("no ocr_page element in hOCR file")
    return pages, decoded.encoding, decoded.decode_errors


def parse_hocr(text: str) -> list[str]:
    """Page texts of a decoded hOCR document, one per `ocr_page` element (none: empty list).

    The text is handed over as UTF-8 with that encoding forced, so that a `<meta charset>` or
    XML declaration naming the file's original encoding cannot make libxml2 decode it again.
    """
    parser = etree.HTMLParser(target=_HocrPages(), encoding="utf-8", huge_tree=True)
    try:
        parser.feed(text.encode("utf-8", "replace"))
        pages: list[str] = parser.close()
    except etree.XMLSyntaxError:  # libxml2 recovers from broken markup; this is a last resort
        return []
    return pages


def read_hocr_book(path: Path, *, encoding: str | None = None) -> Book | ReadError:
    """Read one hOCR file as one book; id = file stem, metadata from a `.json` sidecar."""
    try:
        pages, used, errors = hocr_pages(path, encoding)
        meta = sidecar_metadata([path.with_suffix(".json")])
    except BadInput as err:
        return err.to_error(path)
    except OSError as err:
        return ReadError(str(path), err.strerror or str(err))
    return make_book(
        path.stem,
        pages,
        meta,
        source=str(path),
        extra={"kind": "hocr", "encoding": used, "decode_errors": errors},
    )


def sniff_hocr(head: bytes) -> bool:
    """hOCR declares its page elements with the `ocr_page` class near the start."""
    sample = head[:SNIFF_BYTES]
    return "ocr_page" in sample.decode(bom_encoding(sample) or "utf-8", errors="ignore")
