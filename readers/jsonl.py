"""JSON Lines: one book per line, with its pages (a list) or its whole text.

The file is streamed line by line: a corpus export can be many gigabytes.
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
    SNIFF_BYTES,
    BadInput,
    ReadError,
    check_text_head,
    guess_encoding,
    make_book,
    split_pages,
)

_DETECT_BYTES = 1 << 16
"""How much of a JSONL file decides its encoding when it is neither declared nor UTF-8."""


def _detect_encoding(head: bytes) -> str:
    """UTF-8 when the head decodes as UTF-8, else charset-normalizer's guess, else Latin-1."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        return guess_encoding(head)


def _record_book(
    record: Any, *, path: Path, line: int, lines_per_page: int, encoding: str, decode_errors: int
) -> Book:
    """Turn one parsed JSON record into a Book; a missing id becomes `<file stem>:<line>`."""
    if not isinstance(record, dict):
        raise BadInput("record is not a JSON object", line)
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
        f"{path.stem}:{line}",
        pages,
        record,
        source=f"{path}:{line}",
        extra={"kind": "jsonl", "encoding": encoding, "decode_errors": decode_errors},
    )


def read_jsonl(
    path: Path, *, lines_per_page: int = 40, encoding: str | None = None
) -> Iterator[Book | ReadError]:
    """Yield one Book per non-blank line; a bad line yields a ReadError and the rest go on."""
    try:
        with path.open("rb") as raw:
            head = raw.read(_DETECT_BYTES)
            try:
                known = check_text_head(head[:SNIFF_BYTES], encoding)
            except BadInput as err:
                yield err.to_error(path)
                return
            chosen = known or _detect_encoding(head)
            if chosen == "utf-8" and head.startswith(codecs.BOM_UTF8):
                chosen = "utf-8-sig"
            raw.seek(0)
            stream = io.TextIOWrapper(raw, encoding=chosen, errors="replace")
            any_record = False
            for line_no, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                any_record = True
                try:
                    record = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as err:
                    yield ReadError(
                        str(path), f"malformed JSON: {err.msg} (column {err.colno})", line_no
                    )
                    continue
                try:
                    yield _record_book(
                        record,
                        path=path,
                        line=line_no,
                        lines_per_page=lines_per_page,
                        encoding=chosen,
                        decode_errors=line.count("\ufffd"),
                    )
                except BadInput as err:
                    yield err.to_error(path)
            if not any_record:
                yield ReadError(str(path), "empty file")
    except OSError as err:
        yield ReadError(str(path), err.strerror or str(err))
