"""hOCR (HTML with `ocr_page` / `ocr_line` / `ocrx_word` classes), as written by Tesseract & co.

Parsed with the standard library's tolerant `html.parser`: hOCR in the wild is often not XHTML.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from bookdup.model import Book
from indexer.readers.common import (
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


class _HocrPages(HTMLParser):
    """Collects page texts: one line per `ocr_line`, a blank line after each paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pages: list[str] = []
        self._stack: list[frozenset[str]] = []
        self._tags: list[str] = []
        self._lines: list[str] | None = None
        self._fragments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID_TAGS:
            if self._lines is not None:
                self._fragments.append(" ")
            return
        classes = frozenset((dict(attrs).get("class") or "").split())
        self._tags.append(tag)
        self._stack.append(classes)
        if "ocr_page" in classes:
            self._end_page()
            self._lines = []
        elif classes & _LINE_CLASSES:
            self._end_line()
        elif "ocrx_word" in classes:
            self._fragments.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag not in self._tags:
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

    def handle_data(self, data: str) -> None:
        if self._lines is not None:
            self._fragments.append(data)

    def close(self) -> None:
        super().close()
        self._end_page()

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
    parser = _HocrPages()
    parser.feed(decoded.text)
    parser.close()
    if not parser.pages:
        raise BadInput("no ocr_page element in hOCR file")
    return parser.pages, decoded.encoding, decoded.decode_errors


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
