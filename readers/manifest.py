"""Manifests: a JSONL file of metadata records (id, title, author, language, year; no text)
beside the book files it describes, as catalogue exports often sit beside the texts.

Such a file is not a corpus: its records give the metadata of the book files in the same
folder that they name (by ``file``, the file's name, or by ``id``, the book id the file
implies), and a manifest that names none of them is skipped with one warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from readers.common import (
    MB,
    BadInput,
    book_stem,
    check_metadata,
    open_input,
    plain_name,
    read_input,
)

MAX_MANIFEST_BYTES = 64 * MB
"""A larger JSONL file is read as a corpus, whatever it holds."""

_HEAD_BYTES = 1 << 16
_TEXT_KEYS = ("text", "pages")
_NAMING_KEYS = ("id", "file")
#: What a manifest record gives a book it names (a sidecar's own values win).
MANIFEST_FIELDS = ("title", "author", "language", "year")


def _metadata_record(line: str) -> dict[str, Any] | None:
    """The record of one line if it is metadata (an object naming a book, without text)."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(record, dict) or any(k in record for k in _TEXT_KEYS):
        return None
    if not any(isinstance(record.get(k), str | int) for k in _NAMING_KEYS):
        return None
    try:
        check_metadata(record)
    except BadInput:
        return None
    return record


def read_manifest(path: Path) -> list[dict[str, Any]] | None:
    """The records of a metadata JSONL file, or None when ``path`` is a corpus (or anything
    else: a line with text, a malformed line, a file over `MAX_MANIFEST_BYTES`)."""
    try:
        head = _head(path)
        first = [line for line in head.split("\n")[:-1] if line.strip()][:20]
        if not first or any(_metadata_record(line) is None for line in first):
            return None
        data = read_input(path, MAX_MANIFEST_BYTES).decode("utf-8")
    except (BadInput, OSError, UnicodeDecodeError):
        return None
    records = []
    for line in data.splitlines():
        if not line.strip():
            continue
        record = _metadata_record(line)
        if record is None:
            return None
        records.append(record)
    return records or None


def _head(path: Path) -> str:
    with open_input(path) as f:
        return f.read(_HEAD_BYTES).decode("utf-8", errors="replace")


def entry_names(entry: Path) -> tuple[str, ...]:
    """What a manifest record may call a book file or page folder: its name, its book id."""
    if entry.is_dir():
        return (entry.name,)
    return (entry.name, plain_name(entry).name, book_stem(entry))


class Manifest:
    """One manifest's records by the file name and by the id they give."""

    def __init__(self, path: Path, records: list[dict[str, Any]]) -> None:
        self.path = path
        self.records = records
        self._by_name: dict[str, dict[str, Any]] = {}
        for record in records:
            for key in _NAMING_KEYS:
                value = record.get(key)
                if isinstance(value, str | int):
                    self._by_name.setdefault(str(value), record)

    def record_for(self, entry: Path) -> dict[str, Any] | None:
        return next((self._by_name[n] for n in entry_names(entry) if n in self._by_name), None)

    def unmatched(self, entries: Iterable[Path]) -> int:
        """How many records name none of ``entries``."""
        matched = {id(r) for e in entries if (r := self.record_for(e)) is not None}
        return sum(1 for r in self.records if id(r) not in matched)


def manifest_metadata(record: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a manifest record a book takes."""
    return {k: record[k] for k in MANIFEST_FIELDS if record.get(k) is not None}
