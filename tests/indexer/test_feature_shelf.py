"""The feature shelf: each book crosses to the workers once, unchanged, and takes bounded RAM."""

from __future__ import annotations

import errno
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from bookdup.features import BookFeatures
from indexer import feature_shelf
from indexer.feature_shelf import FeatureShelf, load_book
from indexer.verify_worker import to_tasks, verify_chunk
from tests.indexer.verify_cases import planned_pairs, same_verification


@pytest.fixture(scope="module")
def books() -> list[BookFeatures]:
    seen: dict[str, BookFeatures] = {}
    for a, b, _ in planned_pairs():
        seen.setdefault(a.book_id, a)
        seen.setdefault(b.book_id, b)
    return list(seen.values())


def test_a_book_is_written_once_and_loads_unchanged(books, tmp_path) -> None:
    shelf = FeatureShelf(root=str(tmp_path))
    refs = [shelf.ref(b) for b in books]
    assert [shelf.ref(b) for b in books] == refs  # sent again: the same file, not rewritten
    assert shelf.written == len(books) and len(set(refs)) == len(books)
    for book, ref in zip(books, refs, strict=True):
        loaded = load_book(ref)
        assert pickle.dumps(loaded) == pickle.dumps(book)
        assert load_book(ref) is loaded  # a worker reads a book once and keeps it
    shelf.close()
    assert not Path(shelf.dir).exists()


def test_trim_keeps_the_recent_books_within_the_bound(books, tmp_path) -> None:
    shelf = FeatureShelf(max_bytes=1, root=str(tmp_path))
    refs = [shelf.ref(b) for b in books]
    shelf.trim()  # over the bound: only the last book sent stays
    on_disk = [Path(r.path).exists() for r in refs]
    assert on_disk == [False] * (len(books) - 1) + [True]
    assert shelf.bytes == refs[-1].size
    again = shelf.ref(books[0])  # needed again: written again
    assert Path(again.path).exists() and shelf.written == len(books) + 1
    shelf.close()


def test_trim_keeps_the_books_of_a_batch_in_flight(books, tmp_path) -> None:
    shelf = FeatureShelf(max_bytes=1, root=str(tmp_path))
    refs = [shelf.ref(b) for b in books]
    flying = [feature_shelf.book_key(books[0]), feature_shelf.book_key(books[1])]
    shelf.pin(flying)
    shelf.pin(flying[:1])  # two batches read the first book
    shelf.trim()  # over the bound, but the pinned books stay: a worker may still read them
    assert [Path(r.path).exists() for r in refs] == [True, True] + [False] * (len(books) - 2)
    shelf.unpin(flying)  # the first batch landed: the second still reads books[0]
    shelf.trim()
    assert [Path(r.path).exists() for r in refs[:2]] == [True, False]
    assert shelf.bytes == refs[0].size  # the bound, but one book always stays
    shelf.close()


def test_the_worker_cache_is_bounded(books, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(feature_shelf, "_LOADED", type(feature_shelf._LOADED)())
    monkeypatch.setattr(feature_shelf, "_loaded_bytes", 0)
    shelf = FeatureShelf(root=str(tmp_path))
    refs = [shelf.ref(b) for b in books]
    for ref in refs:
        load_book(ref, max_bytes=refs[-1].size)
    assert list(feature_shelf._LOADED) == [refs[-1].path]  # the older books let go
    shelf.close()


def test_a_dead_jobs_shelf_is_removed(tmp_path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = tmp_path / f"bookdup-shelf-{dead.stdout.strip()}-x"
    mine = tmp_path / f"bookdup-shelf-{os.getpid()}-y"
    orphan.mkdir()
    mine.mkdir()
    FeatureShelf(root=str(tmp_path)).close()
    assert not orphan.exists() and mine.exists()


def test_a_full_shelf_sends_the_book_with_the_chunk(books, tmp_path, monkeypatch) -> None:
    """No room in shared memory (ENOSPC half-way through a book): the book travels with its
    pair as before, and no half-written file stays behind."""
    real_open = open

    def full(path, mode="r", *args, **kwargs):
        out = real_open(path, mode, *args, **kwargs)
        if "w" in mode:
            out.write(b"half")
            out.close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return out

    shelf = FeatureShelf(root=str(tmp_path))
    monkeypatch.setattr(feature_shelf, "open", full, raising=False)
    a, b, plan = planned_pairs()[0]
    (task,) = to_tasks([(a, b, plan)], shelf.ref)
    assert task[0] is a and task[1] is b
    assert shelf.written == 0 and shelf.bytes == 0 and not os.listdir(shelf.dir)
    monkeypatch.undo()
    (got,), (want,) = verify_chunk([pickle.loads(pickle.dumps(task))]), verify_chunk([task])
    assert got is not None and want is not None and same_verification(got, want)
    shelf.close()
