"""Plain-text books: one `.txt` (or `.txt.gz`) file per book, pages at form feeds (or every N
lines)."""

from __future__ import annotations

from pathlib import Path

from bookdup.model import Book
from readers.common import (
    DEFAULT_LINES_PER_PAGE,
    DEFAULT_MAX_BOOK_BYTES,
    BadInput,
    ReadError,
    book_stem,
    make_book,
    read_text_file,
    sidecar_metadata,
    sidecar_of,
    split_pages,
)


def read_text_book(
    path: Path,
    *,
    lines_per_page: int = DEFAULT_LINES_PER_PAGE,
    encoding: str | None = None,
    book_id: str | None = None,
    kind: str = "txt",
    sidecars: list[Path] | None = None,
    max_bytes: int | None = DEFAULT_MAX_BOOK_BYTES,
) -> Book | ReadError:
    """Read one text file as one book; metadata from a same-stem `.json` sidecar when present.

    The id defaults to the file stem, so a corpus without metadata still gets stable ids. A
    file over ``max_bytes`` is refused before it is read.
    """
    sidecars = sidecars if sidecars is not None else [sidecar_of(path)]
    try:
        decoded = read_text_file(path, encoding, max_bytes)
        meta = sidecar_metadata(sidecars)
    except BadInput as err:
        return err.to_error(path)
    except OSError as err:
        return ReadError(str(path), err.strerror or str(err))
    return make_book(
        book_id or book_stem(path),
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
