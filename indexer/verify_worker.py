"""The worker side of verification (the process pool's and Dask's): chunks of planned pairs in,
verifications out.

A plan's lexicon is a 100K-entry object whose stem lexicon takes seconds to build, so it does
not travel with every chunk: the parent sends its (source, target) key and each worker loads
the lexicon once from the same on-disk cache the parent read (`readers.dictionaries`), and keeps
it in a module global for every later chunk.
Features travel by reference, never with every chunk: from the process pool as `BookRef`s
(`indexer.feature_shelf`: written once, each worker loads a book once), and to Dask workers,
which may be on other machines, as `BookKey`s, the chunk's books given as the task's arguments
(futures of books sent to the cluster once, which each worker fetches once and keeps).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from bookdup.features import BookFeatures
from bookdup.relate import PairPlan, verify_detached
from bookdup.verify import Verification
from indexer.feature_shelf import BookKey, BookRef, book_key, load_book
from indexer.index_worker import die_with_parent
from readers.dictionaries import Dictionaries

__all__ = ["PairTask", "hold", "init_worker", "to_task", "verify_chunk"]

_LEXICONS: Dictionaries | None = None


@dataclass(frozen=True)
class PairTask:
    """One planned pair as sent to a worker: the plan without its lexicon, and the lexicon's key."""

    a: BookFeatures | BookRef | BookKey
    b: BookFeatures | BookRef | BookKey
    plan: PairPlan
    lexicon: tuple[str, str] | None


def to_task(
    a: BookFeatures,
    b: BookFeatures,
    plan: PairPlan,
    ref: Callable[[BookFeatures], BookRef | BookKey | None] | None = None,
) -> PairTask:
    """The picklable, light form of (a, b, plan); the books by ``ref`` when one is given and
    it has a handle for them, else as they are."""
    d = plan.dictionary
    key = None if d is None else (d.source, d.target)
    light = dataclasses.replace(plan, dictionary=None)
    if ref is None:
        return PairTask(a, b, light, key)
    return PairTask(ref(a) or a, ref(b) or b, light, key)


def hold(book: BookFeatures) -> BookFeatures:
    """A Dask task whose result is the book: the worker that runs it keeps the book while the
    job holds its future, and the scheduler runs it again if that worker is lost."""
    return book


def _book(
    book: BookFeatures | BookRef | BookKey, held: dict[BookKey, BookFeatures]
) -> BookFeatures:
    if isinstance(book, BookRef):
        return load_book(book)
    return held[book] if isinstance(book, tuple) else book


def init_worker(parent: int, lexicons: Dictionaries | None = None) -> None:
    """Pool initializer: die with the job; use the job's ``lexicons`` (a forked worker shares
    what the job loaded), else load lexicons lazily, once per worker."""
    global _LEXICONS
    die_with_parent(parent)
    _LEXICONS = lexicons if lexicons is not None else Dictionaries(True)


def _lexicons() -> Dictionaries:
    """This worker's lexicons, loaded on first use and kept: a Dask worker has no pool
    initializer, so its first chunk that needs a lexicon creates them."""
    global _LEXICONS
    if _LEXICONS is None:
        _LEXICONS = Dictionaries(True)
    return _LEXICONS


def _plan(task: PairTask) -> PairPlan:
    if task.lexicon is None:
        return task.plan
    dictionary = _lexicons().get(*task.lexicon)
    if dictionary is None:
        raise LookupError(f"lexicon {task.lexicon} is not installed in the worker")
    return dataclasses.replace(task.plan, dictionary=dictionary)


def verify_chunk(tasks: list[PairTask], *books: BookFeatures) -> list[Verification | None]:
    """Each pair's verification (alignment included, so it pickles back), in input order;
    ``books``: those the tasks name by `BookKey` (on Dask, the worker's copies)."""
    held = {book_key(book): book for book in books}
    out: list[Verification | None] = []
    for task in tasks:
        verified = verify_detached(_book(task.a, held), _book(task.b, held), _plan(task))
        out.append(None if verified is None else verified.verification)
    return out
