"""JSON Lines: one book per line, with its pages (a list) or its whole text.

The file (gzip'd or not) is streamed line by line: a corpus export can be many gigabytes. A line
longer than the size limit for one book is skipped in bounded chunks, never held whole.
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bookdup.model import Book
from readers.common import (
    DEFAULT_LINES_PER_PAGE,
    DEFAULT_MAX_BOOK_BYTES,
    MB,
    SNIFF_BYTES,
    BadInput,
    ReadError,
    book_stem,
    check_metadata,
    check_text_head,
    guess_encoding,
    make_book,
    open_input,
    over_limit,
    split_pages,
)

_DETECT_BYTES = 1 << 16
"""How much of a JSONL file decides its encoding when it is neither declared nor UTF-8."""


def _detect_encoding(head: bytes) -> tuple[str, bool]:
    """(encoding, guessed): UTF-8 when the head decodes as UTF-8, else charset-normalizer's
    guess, else Latin-1."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8", False
    except UnicodeDecodeError:
        return guess_encoding(head), True


def _record_book(
    record: Any, *, path: Path, line: int, lines_per_page: int, decoding: dict[str, Any]
) -> Book:
    """Turn one parsed JSON record into a Book; a missing id becomes `<file stem>:<line>`."""
    if not isinstance(record, dict):
        raise BadInput("record is not a JSON object", line)
    check_metadata(record, line)
    pages = record.get("pages")
    text = record.get("text")
    if pages is not None:
        if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
            raise BadInput("'pages' is not a list of strings", line)
    elif text is not None:
        if not isinstance(text, str):
            raise BadInput("'text' is not a string", line)
        pages = split_pages(text, lines_per_page)
    else:
        raise BadInput("record has neither 'pages' nor 'text'", line)
    return make_book(
        f"{book_stem(path)}:{line}",
        pages,
        record,
        source=f"{path}:{line}",
        extra={"kind": "jsonl", **decoding},
    )


def _lines(stream: io.TextIOWrapper, max_chars: int | None) -> Iterator[tuple[int, str | int]]:
    """(line number, line) for each line, or (line number, its length) for a line longer than
    ``max_chars``, which is read on in 1 MB pieces and dropped."""
    line_no = 0
    while True:
        line = stream.readline(-1 if max_chars is None else max_chars + 1)
        if not line:
            return
        line_no += 1
        if max_chars is None or len(line) <= max_chars or line.endswith("\n"):
            yield line_no, line
            continue
        length = len(line)
        while line and not line.endswith("\n"):
            line = stream.readline(MB)
            length += len(line)
        yield line_no, length


def _record(
    path: Path, line_no: int, line: str, lines_per_page: int, decoding: dict[str, Any]
) -> Book:
    """The book of one JSONL line; `BadInput` for a line that is not a good record."""
    try:
        record = json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as err:
        raise BadInput(f"malformed JSON: {err.msg} (column {err.colno})", line_no) from err
    except RecursionError as err:
        raise BadInput("malformed JSON: nested too deeply", line_no) from err
    return _record_book(
        record,
        path=path,
        line=line_no,
        lines_per_page=lines_per_page,
        decoding={**decoding, "decode_errors": line.count("\ufffd")},
    )


def read_jsonl(
    path: Path,
    *,
    lines_per_page: int = DEFAULT_LINES_PER_PAGE,
    encoding: str | None = None,
    max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> Iterator[Book | ReadError]:
    """Yield one Book per non-blank line; a bad line yields a ReadError and the rest go on.

    A line over ``max_bytes`` characters (None: no limit) is refused without being held."""
    try:
        with open_input(path) as raw:
            head = raw.read(_DETECT_BYTES)
            try:
                known = check_text_head(head[:SNIFF_BYTES], encoding)
            except BadInput as err:
                yield err.to_error(path)
                return
            chosen, guessed = (known, False) if known else _detect_encoding(head)
            if chosen == "utf-8" and head.startswith(codecs.BOM_UTF8):
                chosen = "utf-8-sig"
            decoding: dict[str, Any] = {"encoding": chosen}
            if guessed:
                decoding["encoding_guessed"] = True
            raw.seek(0)
            stream = io.TextIOWrapper(raw, encoding=chosen, errors="replace")
            any_record = False
            for line_no, line in _lines(stream, max_bytes):
                if isinstance(line, int):
                    assert max_bytes is not None
                    any_record = True
                    too_large = over_limit(f"record is {line / MB:.1f} MB,", max_bytes)
                    yield ReadError(str(path), too_large.reason, line_no)
                    continue
                if not line.strip():
                    continue
                any_record = True
                try:
                    yield _record(path, line_no, line, lines_per_page, decoding)
                except BadInput as err:
                    yield err.to_error(path)
            if not any_record:
                yield ReadError(str(path), "empty file")
    except BadInput as err:  # the gzip stream broke off
        yield err.to_error(path)
    except OSError as err:
        yield ReadError(str(path), err.strerror or str(err))
