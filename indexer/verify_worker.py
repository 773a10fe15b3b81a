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
from collections.abc import Callable, Sequence

from bookdup.features import BookFeatures
from bookdup.relate import PairPlan, verify_detached
from bookdup.verify import Verification
from indexer.feature_shelf import BookKey, BookRef, book_key, load_book
from indexer.index_worker import die_with_parent
from readers.dictionaries import Dictionaries

__all__ = ["PairTask", "hold", "init_worker", "to_tasks", "verify_chunk"]

_LEXICONS: Dictionaries | None = None


Book = BookFeatures | BookRef | BookKey
#: One planned pair as sent to a worker: (a, b, the plan without its lexicon, the lexicon's
#: key). A plain tuple: it pickles in a sixth of a dataclass's time, a million times a job.
PairTask = tuple[Book, Book, PairPlan, tuple[str, str] | None]


def to_tasks(
    planned: Sequence[tuple[BookFeatures, BookFeatures, PairPlan]],
    ref: Callable[[BookFeatures], BookRef | BookKey | None] | None = None,
) -> list[PairTask]:
    """The picklable, light form of each (a, b, plan); the books by ``ref`` when one is given
    and it has a handle for them, else as they are. A plan or book met again gives the same
    light plan or handle, which one pickle of the tasks writes once."""
    lights: dict[int, tuple[PairPlan, tuple[str, str] | None]] = {}
    handles: dict[int, Book] = {}
    tasks: list[PairTask] = []
    for a, b, plan in planned:
        light = lights.get(id(plan))
        if light is None:
            d = plan.dictionary
            key = None if d is None else (d.source, d.target)
            light = lights[id(plan)] = (dataclasses.replace(plan, dictionary=None), key)
        if ref is None:
            tasks.append((a, b, *light))
            continue
        for book in (a, b):
            if id(book) not in handles:
                handles[id(book)] = ref(book) or book
        tasks.append((handles[id(a)], handles[id(b)], *light))
    return tasks


def hold(book: BookFeatures) -> BookFeatures:
    """A Dask task whose result is the book: the worker that runs it keeps the book while the
    job holds its future, and the scheduler runs it again if that worker is lost."""
    return book


def _book(book: Book, held: dict[BookKey, BookFeatures]) -> BookFeatures:
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


def _plan(plan: PairPlan, lexicon: tuple[str, str] | None) -> PairPlan:
    if lexicon is None:
        return plan
    dictionary = _lexicons().get(*lexicon)
    if dictionary is None:
        raise LookupError(f"lexicon {lexicon} is not installed in the worker")
    return dataclasses.replace(plan, dictionary=dictionary)


def verify_chunk(tasks: list[PairTask], *books: BookFeatures) -> list[Verification | None]:
    """Each pair's verification (alignment included, so it pickles back), in input order;
    ``books``: those the tasks name by `BookKey` (on Dask, the worker's copies)."""
    held = {book_key(book): book for book in books}
    plans: dict[int, PairPlan] = {}  # a chunk's shared light plans arrive shared
    out: list[Verification | None] = []
    for a, b, light, lexicon in tasks:
        plan = plans.get(id(light))
        if plan is None:
            plan = plans[id(light)] = _plan(light, lexicon)
        verified = verify_detached(_book(a, held), _book(b, held), plan)
        out.append(None if verified is None else verified.verification)
    return out
