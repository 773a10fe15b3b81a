"""Reading test inputs through the public iterator, shared by the reader tests."""

from __future__ import annotations

from pathlib import Path

from bookdup.model import Book
from readers import ReadError, iter_books


def read_all(*paths: Path, **kwargs) -> list[Book | ReadError]:
    return list(iter_books(list(paths), **kwargs))


def read_one(path: Path, **kwargs) -> Book:
    (book,) = read_all(path, **kwargs)
    assert isinstance(book, Book), str(book)
    return book


def read_error(path: Path, **kwargs) -> ReadError:
    (error,) = read_all(path, **kwargs)
    assert isinstance(error, ReadError), error
    return error
