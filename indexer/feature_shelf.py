"""Books' features sent to the verification workers once, by reference, not with every chunk.

A batch's pairs go to the workers in many chunks, and most chunks hold most of the batch's
books: pickled with each chunk, a book crossed the pipe and was unpickled a dozen times a
batch (the cost: docs/EVALUATION.md, issue 28). The parent instead writes each book once to
a file in shared memory (`FeatureShelf`), a chunk carries `BookRef`s, and each worker loads
a book once and keeps it (`load_book`). Both sides of the file format live here.

The shelf is bounded: after a batch settles, the books least recently sent are removed until
it holds ``max_bytes``; a batch's own books are never removed while it is in flight.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path

from bookdup.features import BookFeatures

__all__ = ["BookRef", "FeatureShelf", "load_book"]

#: Bytes of pickled features the shelf keeps between batches (RAM: it lives in /dev/shm).
SHELF_MAX_BYTES = 256 << 20
#: Bytes of loaded features a worker keeps (pickled size, about the size in memory).
WORKER_MAX_BYTES = 192 << 20
_PREFIX = "bookdup-shelf-"


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


class FeatureShelf:
    """The parent's side: each book written once (keyed by id and content), referenced after."""

    def __init__(self, max_bytes: int = SHELF_MAX_BYTES, root: str | None = None) -> None:
        root = root or _shm_root()
        _remove_orphans(root)
        self.dir = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=root)
        self.max_bytes = max_bytes
        self.bytes = 0
        self.written = 0  # books written (a book evicted and sent again counts twice)
        self._refs: OrderedDict[tuple[str, str], BookRef] = OrderedDict()

    def ref(self, book: BookFeatures) -> BookRef | None:
        """The reference of ``book``, written to the shelf the first time it is sent; None when
        the shelf has no room (a container's /dev/shm is 64 MB): the book goes with the chunk."""
        key = (book.book_id, book.content_hash)
        ref = self._refs.get(key)
        if ref is not None:
            self._refs.move_to_end(key)
            return ref
        path = os.path.join(self.dir, sha1("\0".join(key).encode()).hexdigest())
        data = pickle.dumps(book, pickle.HIGHEST_PROTOCOL)
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as out:
                out.write(data)
            os.replace(tmp, path)  # a worker never sees a half-written book
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return None
        ref = BookRef(path, len(data))
        self._refs[key] = ref
        self.bytes += ref.size
        self.written += 1
        return ref

    def trim(self) -> None:
        """Remove the least recently sent books beyond ``max_bytes``; call it only when no
        chunk is in flight (a worker may still have to load any book of the last batch)."""
        while self.bytes > self.max_bytes and len(self._refs) > 1:
            _, ref = self._refs.popitem(last=False)
            self.bytes -= ref.size
            Path(ref.path).unlink(missing_ok=True)

    def close(self) -> None:
        """Remove the shelf and every book on it."""
        shutil.rmtree(self.dir, ignore_errors=True)
        self._refs.clear()
        self.bytes = 0


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
