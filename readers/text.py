"""Plain-text books: one `.txt` file per book, pages at form feeds (or every N lines)."""

from __future__ import annotations

from pathlib import Path

from bookdup.model import Book
from readers.common import (
    BadInput,
    ReadError,
    make_book,
    read_text_file,
    sidecar_metadata,
    split_pages,
)


def read_text_book(
    path: Path,
    *,
    lines_per_page: int = 40,
    encoding: str | None = None,
    book_id: str | None = None,
    kind: str = "txt",
    sidecars: list[Path] | None = None,
) -> Book | ReadError:
    """Read one text file as one book; metadata from a same-stem `.json` sidecar when present.

    The id defaults to the file stem, so a corpus without metadata still gets stable ids.
    """
    sidecars = sidecars if sidecars is not None else [path.with_suffix(".json")]
    try:
        decoded = read_text_file(path, encoding)
        meta = sidecar_metadata(sidecars)
    except BadInput as err:
        return err.to_error(path)
    except OSError as err:
        return ReadError(str(path), err.strerror or str(err))
    return make_book(
        book_id or path.stem,
        split_pages(decoded.text, lines_per_page),
        meta,
        source=str(path),
        extra={
            "kind": kind,
            "encoding": decoded.encoding,
            "decode_errors": decoded.decode_errors,
            **({"encoding_guessed": True} if decoded.guessed else {}),
        },
    )
