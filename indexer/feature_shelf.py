"""Books' features sent to the verification workers once, by reference, not with every chunk.

A batch's pairs go to the workers in many chunks, and most chunks hold most of the batch's
books: pickled with each chunk, a book crossed the pipe and was unpickled a dozen times a
batch (the cost: docs/EVALUATION.md, issue 28). The parent instead writes each book once to
a file in shared memory (`FeatureShelf`), a chunk carries `BookRef`s, and each worker loads
a book once and keeps it (`load_book`). Both sides of the file format live here.

The shelf is bounded: after a batch settles, the books least recently sent are removed until
it holds ``max_bytes``; a batch's own books are never removed while it is in flight. That
bookkeeping (`RecentBooks`) is the Dask verifier's too, whose handles are futures
(`indexer.verify_dask`).
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path
from typing import Generic, TypeVar

from bookdup.features import BookFeatures

__all__ = ["BookKey", "BookRef", "FeatureShelf", "RecentBooks", "book_key", "load_book"]

#: Bytes of pickled features the shelf keeps between batches (RAM: it lives in /dev/shm).
SHELF_MAX_BYTES = 256 << 20
#: Bytes of loaded features a worker keeps (pickled size, about the size in memory).
WORKER_MAX_BYTES = 192 << 20
_PREFIX = "bookdup-shelf-"

#: A book's identity for the workers: its id and the hash of its content.
BookKey = tuple[str, str]
H = TypeVar("H")


def book_key(book: BookFeatures) -> BookKey:
    """The key a book is sent under: a re-indexed book (new content) is sent again."""
    return (book.book_id, book.content_hash)


@dataclass(frozen=True)
class BookRef:
    """Where a worker finds a book's features: a file of the job's shelf."""

    path: str
    size: int


def _shm_root() -> str:
    """Shared memory where there is some (Linux), else the temporary folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove_orphans(root: str) -> None:
    """Shelves of jobs that died without closing theirs (their pid gone) take RAM: removed."""
    for entry in Path(root).glob(_PREFIX + "*"):
        pid = entry.name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


class RecentBooks(ABC, Generic[H]):
    """Each book sent to the workers once, as a handle ``H``; the handles of the books least
    recently sent are dropped after a batch settles, beyond ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.written = 0  # books sent (a book dropped and sent again counts twice)
        self._held: OrderedDict[BookKey, tuple[H, int]] = OrderedDict()
        self._pinned: Counter[BookKey] = Counter()  # books of the batches in flight

    @abstractmethod
    def _send(self, book: BookFeatures) -> tuple[H, int] | None:
        """The book sent: its handle and its size in bytes; None when it cannot be."""

    @abstractmethod
    def _drop(self, handle: H) -> None:
        """The book's copy for the workers let go."""

    def ref(self, book: BookFeatures) -> H | None:
        """The handle of ``book``, sent the first time it is asked for; None when it could not
        be sent (the book then goes with its chunk)."""
        key = book_key(book)
        hit = self._held.get(key)
        if hit is not None:
            self._held.move_to_end(key)
            return hit[0]
        sent = self._send(book)
        if sent is None:
            return None
        handle, size = sent
        self._held[key] = (handle, size)
        self.bytes += size
        self.written += 1
        return handle

    def pin(self, keys: Iterable[BookKey]) -> None:
        """A batch in flight reads these books: `trim` keeps them until they are unpinned."""
        self._pinned.update(keys)

    def unpin(self, keys: Iterable[BookKey]) -> None:
        """The batch that pinned ``keys`` settled."""
        self._pinned.subtract(keys)
        self._pinned = +self._pinned  # drop the zeros

    def trim(self) -> None:
        """Drop the least recently sent books beyond ``max_bytes``, except those a batch in
        flight still reads (`pin`)."""
        for key in list(self._held):
            if self.bytes <= self.max_bytes or len(self._held) <= 1:
                return
            if self._pinned[key] > 0:
                continue
            handle, size = self._held.pop(key)
            self.bytes -= size
            self._drop(handle)


class FeatureShelf(RecentBooks[BookRef]):
    """The process pool's side: each book written once to shared memory, referenced after."""

    def __init__(self, max_bytes: int = SHELF_MAX_BYTES, root: str | None = None) -> None:
        super().__init__(max_bytes)
        root = root or _shm_root()
        _remove_orphans(root)
        self.dir = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=root)

    def _send(self, book: BookFeatures) -> tuple[BookRef, int] | None:
        """None when the shelf has no room (a container's /dev/shm is 64 MB): the book then
        goes with its chunk."""
        path = os.path.join(self.dir, sha1("\0".join(book_key(book)).encode()).hexdigest())
        data = pickle.dumps(book, pickle.HIGHEST_PROTOCOL)
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as out:
                out.write(data)
            os.replace(tmp, path)  # a worker never sees a half-written book
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return None
        return BookRef(path, len(data)), len(data)

    def _drop(self, handle: BookRef) -> None:
        Path(handle.path).unlink(missing_ok=True)

    def close(self) -> None:
        """Remove the shelf and every book on it."""
        self._held.clear()
        self.bytes = 0
        shutil.rmtree(self.dir, ignore_errors=True)


_LOADED: OrderedDict[str, tuple[BookFeatures, int]] = OrderedDict()
_loaded_bytes = 0


def load_book(ref: BookRef, max_bytes: int = WORKER_MAX_BYTES) -> BookFeatures:
    """The worker's side: the book of ``ref``, read once and kept (least recently used out),
    so the worker's caches keyed by the book see the same object chunk after chunk."""
    global _loaded_bytes
    hit = _LOADED.get(ref.path)
    if hit is not None:
        _LOADED.move_to_end(ref.path)
        return hit[0]
    with open(ref.path, "rb") as src:
        book: BookFeatures = pickle.load(src)
    _LOADED[ref.path] = (book, ref.size)
    _loaded_bytes += ref.size
    while _loaded_bytes > max_bytes and len(_LOADED) > 1:
        _, (_, size) = _LOADED.popitem(last=False)
        _loaded_bytes -= size
    return book
