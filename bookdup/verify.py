"""Pair verification: |LCS| of unique-word sequences, scores, and the page alignment.

Order of work per pair, cheapest first (DUPNIQ §4.2, TRANS §3.4):

1. the score threshold gives a minimum |LCS| (``bookdup.scores``); |LCS| <= |X ∩ Y| when one
   side has distinct items, so a pair sharing fewer items is rejected without alignment;
2. |X ∩ Y| is first bounded from above with per-book bitsets (Python ints: one AND and one
   popcount per level, ~1 µs) and only then counted exactly on sorted hashes;
3. the LCS: longest increasing subsequence when both sides are distinct, bit-parallel LCS when
   the source was translated (items repeat).

Per-book preprocessing (sorting, bitsets, translation) is cached against the identity of the
book's hash array, so verifying one book against many candidates prepares it once. The cache
assumes those arrays are not modified in place.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property, lru_cache
from typing import Protocol

import mmh3
import numpy as np

from bookdup.bitlcs import Pattern, lcs_stream
from bookdup.boilerplate import verbatim_runs_sorted
from bookdup.dictionary import Dictionary
from bookdup.lcs import align_restricted, encode_ranks, lis_keep
from bookdup.localscan import LocalEvidence
from bookdup.orderscan import (
    ScanInput,
    WindowCounts,
    scan_windows,
    window_counts,
    worth_calibrating,
)
from bookdup.orderstat import (
    OrderEvidence,
    SequentialEvidence,
    calibrated,
    lis_null_mean,
    order_evidence,
    sequential_evidence,
    shuffled_evidence,
    z_at,
)
from bookdup.scores import cs, its, min_lcs_for_cs, min_lcs_for_its
from bookdup.screenkernel import restricted, screen_lcs, shared
from bookdup.sortkernel import bitset_rows, sorted_groups
from bookdup.stemming import stem_lexicon
from bookdup.translate import translate_with_source

__all__ = [
    "UniqueWordScores",
    "Verification",
    "detached",
    "order_screen",
    "shared_positions",
    "verify_pair",
]

_BITS = 1 << 16  # bitset size: ~3K unique words set ~5% of the bits


class UniqueSequence(Protocol):
    """A book's unique words as verification reads them (``bookdup.uniquewords.UniqueWords``).

    Read-only members, so any object exposing them qualifies (dataclass fields included).
    ``words`` may be None (books loaded without their strings): translation then matches the
    lexicon on hashes alone.
    """

    @property
    def words(self) -> Sequence[str] | None: ...

    @property
    def hashes(self) -> np.ndarray: ...  # uint32, distinct

    @property
    def pages(self) -> np.ndarray: ...  # int32


class HasUnique(Protocol):
    """Anything carrying unique words (``bookdup.features.BookFeatures``)."""

    @property
    def unique(self) -> UniqueSequence: ...


@dataclass(frozen=True)
class UniqueWordScores:
    """The papers' scores of a pair: x, y: |X|, |Y| (unique words of each book, before
    translation); shared: distinct items common to both sequences (|X_T ∩ Y| when
    translated); lcs: their longest common subsequence; cs, its: DUPNIQ-cs / -its (TRANS-
    when translated)."""

    x: int
    y: int
    shared: int
    lcs: int
    cs: float
    its: float


@dataclass(frozen=True)
class Verification(UniqueWordScores):
    """Evidence for one pair: its scores and the alignment, the page of each LCS item in x and
    in y.

    The alignment of a translated pair costs several times its |LCS| length, and most
    candidates are rejected on their score, so it is built on first access (``_align``).
    """

    _align: Callable[[], tuple[np.ndarray, np.ndarray]] = field(repr=False, compare=False)
    #: How ordered the shared items are against chance (``bookdup.orderstat``).
    order: OrderEvidence | None = None
    #: Per aligned item (alignment order): how many of its two neighbour words agree between
    #: the books, and how many could be compared (``neighbour_agreement``); None when a book
    #: has no neighbour context or the pair was translated.
    neighbours: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    #: Positions of the aligned items in x's and y's unique-word sequences (x's source words
    #: when translated), built on first access like the pages (``detached`` computes them).
    _positions: Callable[[], tuple[np.ndarray, np.ndarray]] | None = field(
        default=None, repr=False, compare=False
    )
    #: The densest ordered block of the matches (``bookdup.localscan``): read for same-language
    #: pairs whose short shared stretch the whole pair's order hides (``bookdup.compare``).
    local: LocalEvidence | None = None

    @property
    def order_z(self) -> float:
        """z of |LCS| against the random-order null (0 when not computed)."""
        return self.order.z if self.order is not None else 0.0

    @property
    def local_score(self) -> float:
        """The densest ordered block's score (0 when not read)."""
        return self.local.score if self.local is not None else 0.0

    @cached_property
    def alignment(self) -> tuple[np.ndarray, np.ndarray]:
        """(pages in x, pages in y) of the aligned items, in alignment order."""
        return self._align()

    @cached_property
    def positions(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(positions in x, positions in y) of the aligned items, in alignment order: the
        alignment a reader draws (``query.explain``) and the signals' coverage; None when the
        verification has none."""
        return self._positions() if self._positions is not None else None


@dataclass(frozen=True)
class _Aligned:
    """An alignment computed already, as a module-level callable: the lazy ones are closures,
    which do not pickle."""

    arrays: tuple[np.ndarray, np.ndarray]

    def __call__(self) -> tuple[np.ndarray, np.ndarray]:
        return self.arrays


def detached(verification: Verification) -> Verification:
    """``verification`` with its alignment and aligned positions computed now, so it can cross
    a process boundary (a worker verifies, the parent classifies); equal in every field to the
    original. The positions go as int32 (a book has far fewer than 2^31 unique words): the
    signals measure coverage on them (``signals._coverage``)."""
    positions = verification.positions
    kept = None
    if positions is not None:
        kept = _Aligned((np.asarray(positions[0], np.int32), np.asarray(positions[1], np.int32)))
    return replace(verification, _align=_Aligned(verification.alignment), _positions=kept)


@dataclass(frozen=True)
class _Prepared:
    hashes: np.ndarray  # the sequence (translated when a dictionary was given)
    pages: np.ndarray
    distinct: bool
    values: np.ndarray  # sorted distinct items
    # the indices are int32 (``sortkernel.sorted_groups``): 2/3 of an entry's bytes as int64
    order: np.ndarray  # stable argsort of hashes: positions of each value, grouped
    starts: np.ndarray  # where each value's positions begin in order (size values.size + 1)
    first: np.ndarray  # positions in hashes of values (the first occurrence when items repeat)
    groups: np.ndarray  # source word (position in the book's unique words) of each item
    levels: tuple[int, ...]  # bitset of buckets holding >= k + 1 items, k = 0, 1, ...


# Prepared sequences by (content, dictionary), least recently used first. Bounded in entries
# and in bytes: a prepared translated sequence takes ~0.4 MB, and a dedup job keeps thousands of
# books alive in its feature cache (unbounded, this held 15 GB at 10K books). 3,072 entries
# cover the query books of a batch, which is where the reuse is (each meets ~50 candidates),
# and every sequence of a 1K-book job (3,023; 2,048 entries prepared each ~2x). With int32
# indices 3,072 entries take about the bytes 2,048 took with int64 ones (the 1K job's 3,023
# entries: 196 -> 133 KB each). The default 2 GiB holds 3,072 entries of up to ~0.7 MB each,
# so the job's hits are the count's.
# A server (`bookdup serve --verify-cache-mb`) sets a smaller byte bound with
# ``set_cache_limit``.
DEFAULT_CACHE_ENTRIES = 3072
DEFAULT_CACHE_BYTES = 2 << 30


#: What a prepared sequence is keyed by: a digest of its content (``_content_key``) and the
#: id of its lexicon (held by the entry, so the id cannot be reused meanwhile).
_Key = tuple[bytes, int]


class _PreparedCache:
    """LRU of prepared sequences, bounded by ``max_entries`` and by ``max_bytes`` (the sum of
    each entry's ``_nbytes``)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self.items: OrderedDict[_Key, tuple[Dictionary | None, _Prepared, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.items)

    def put(self, key: _Key, dictionary: Dictionary | None, prepared: _Prepared) -> None:
        size = _nbytes(prepared)
        with self._lock:
            old = self.items.pop(key, None)
            if old is not None:
                self.bytes -= old[2]
            self.items[key] = (dictionary, prepared, size)
            self.bytes += size
            self._shrink()

    def _shrink(self) -> None:
        # the newest entry stays even when it alone passes max_bytes: it is in use
        while len(self.items) > 1 and (
            len(self.items) > self.max_entries or self.bytes > self.max_bytes
        ):
            self.bytes -= self.items.popitem(last=False)[1][2]

    def set_limit(self, max_bytes: int | None, max_entries: int | None) -> None:
        with self._lock:
            if max_bytes is not None:
                self.max_bytes = max_bytes
            if max_entries is not None:
                self.max_entries = max_entries
            self._shrink()


def _nbytes(prepared: _Prepared) -> int:
    """About the memory an entry holds: its arrays and its bitsets."""
    arrays = (
        prepared.hashes,
        prepared.pages,
        prepared.values,
        prepared.order,
        prepared.starts,
        prepared.first,
        prepared.groups,
    )
    bitsets = sum((level.bit_length() + 7) // 8 for level in prepared.levels)
    return sum(a.nbytes for a in arrays) + bitsets


_CACHE = _PreparedCache(DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES)


def set_cache_limit(max_bytes: int | None = None, max_entries: int | None = None) -> None:
    """Bound the cache of prepared sequences in bytes and/or entries (evicting now if over)."""
    _CACHE.set_limit(max_bytes, max_entries)


def cache_limits() -> tuple[int, int]:
    """(bytes, entries): the bounds of the cache of prepared sequences."""
    return _CACHE.max_bytes, _CACHE.max_entries


def cache_usage() -> tuple[int, int]:
    """(entries, approximate bytes) held by the cache of prepared sequences."""
    return len(_CACHE), _CACHE.bytes


def _bitset_levels(values: np.ndarray) -> tuple[int, ...]:
    """Level k: the bitset of the buckets (``_BITS`` of them) holding more than k values."""
    return tuple(int.from_bytes(row.tobytes(), "little") for row in bitset_rows(values, _BITS))


#: Digests of sequences by the id of their hash array, checked by weak references to it and
#: to its pages: the same arrays are digested once (a dedup job's feature cache hands out the
#: same book objects, and a stems view reuses the book's arrays).
_DIGESTS: dict[int, tuple[weakref.ref[np.ndarray], weakref.ref[np.ndarray], bytes]] = {}


def _forget(key: int) -> Callable[[weakref.ref[np.ndarray]], None]:
    digests = _DIGESTS  # bound now: the callback may run late in interpreter shutdown

    def forget(_ref: weakref.ref[np.ndarray]) -> None:
        digests.pop(key, None)

    return forget


def _content_key(u: UniqueSequence) -> bytes:
    """A digest of what a preparation reads (items, pages, whether words came along): equal for
    equal books whichever object holds them, so a worker that unpickles new copies of a book
    with every chunk of pairs still prepares (translates) it once."""
    hashes, pages = u.hashes, u.pages
    words = b"w" if getattr(u, "words", None) is not None else b"-"
    known = _DIGESTS.get(id(hashes))
    if known is not None and known[0]() is hashes and known[1]() is pages:
        return known[2] + words
    digest = mmh3.hash_bytes(np.ascontiguousarray(hashes, dtype=np.uint32).tobytes())
    digest += mmh3.hash_bytes(np.ascontiguousarray(pages, dtype=np.int32).tobytes())
    if isinstance(hashes, np.ndarray) and isinstance(pages, np.ndarray):
        key = id(hashes)
        _DIGESTS[key] = (weakref.ref(hashes, _forget(key)), weakref.ref(pages), digest)
    return digest + words


def _prepare(u: UniqueSequence, dictionary: Dictionary | None) -> _Prepared:
    key = (_content_key(u), id(dictionary))
    # the hit path inline and without the lock: two per verified pair in a dedup job (each
    # dict call is atomic in C)
    hit = _CACHE.items.get(key)
    if hit is not None and hit[0] is dictionary:
        try:  # noqa: SIM105 (contextlib.suppress costs ~150 ns here, a third of a hit)
            _CACHE.items.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass
        return hit[1]
    if dictionary is None:
        hashes = np.asarray(u.hashes, dtype=np.uint32)
        pages = np.asarray(u.pages, dtype=np.int32)
        groups = np.arange(hashes.size, dtype=np.int32)
    else:
        hashes, pages, source = translate_with_source(u.words, u.pages, dictionary, hashes=u.hashes)
        groups = source.astype(np.int32)
    order, values, starts, first = sorted_groups(hashes)
    distinct = values.size == hashes.size
    prepared = _Prepared(
        hashes, pages, distinct, values, order, starts, first, groups, _bitset_levels(values)
    )
    _CACHE.put(key, dictionary, prepared)
    return prepared


@lru_cache(maxsize=1 << 16)
def _min_lcs(score: str, threshold: float, nx: int, ny: int) -> int:
    return (min_lcs_for_its if score == "its" else min_lcs_for_cs)(threshold, nx, ny)


def _shared_upper_bound(a: _Prepared, b: _Prepared) -> int:
    """Items of a whose bucket is set in b: >= |a ∩ b| whatever the collisions."""
    yb = b.levels[0] if b.levels else 0
    return sum((lv & yb).bit_count() for lv in a.levels)


def _shared_indices(a: _Prepared, b: _Prepared) -> tuple[np.ndarray, np.ndarray]:
    """Indices into a.values and into b.values of the items common to both (ascending): one
    compiled merge (``screenkernel.shared``; a search of the smaller array in the larger
    costs more on long books, and np.intersect1d sorts the concatenation again)."""
    return shared(a.values, b.values)


def shared_positions(fa: HasUnique, fb: HasUnique) -> tuple[np.ndarray, np.ndarray]:
    """Positions in each book's unique words of the words both hold (first occurrences; any
    order), from the preparation the pair's verification cached and its compiled merge: an
    np.intersect1d sorted both books again, 3x the time (``bookdup.noisy``, stop 59)."""
    a, b = _prepare(fa.unique, None), _prepare(fb.unique, None)
    ia, ib = _shared_indices(a, b)
    return a.first[ia].astype(np.int64), b.first[ib].astype(np.int64)


def verify_pair(
    fa: HasUnique,
    fb: HasUnique,
    *,
    threshold: float | None,
    score: str = "its",
    dictionary: Dictionary | None = None,
    min_z: float | None = None,
    max_z: float | None = None,
) -> Verification | None:
    """Verify fa against fb; None when the pair can reach neither ``threshold`` (on ``score``)
    nor ``min_z`` (each None: no such floor; with both, either suffices).

    With a dictionary, fa's unique words are translated (dictionary.source -> target, which
    should be fb's language) and the general LCS is used; |X| stays fa's unique-word count
    (TRANS Table 1). Text the two books share verbatim in runs (front or back matter in a
    third language, ``bookdup.boilerplate.verbatim_runs_sorted``) is left out of a translated pair.
    ``min_z``: the order statistic (``bookdup.orderstat``) a pair must be able to reach; the
    shuffles that calibrate it are only run for pairs that might. A returned Verification may
    still score below the thresholds.

    ``max_z`` (with ``min_z``): the order statistic above which the caller's decision no
    longer changes (the classifier's ramps are saturated). The null is then calibrated
    sequentially (``bookdup.orderstat.sequential_evidence``): shuffles stop once z is surely
    below ``min_z`` or above ``max_z``, and windows are not scanned above it; the reported
    z of such a pair is an estimate (``order.shuffles`` < 8). None: the full calibration.
    """
    if score not in ("its", "cs"):
        raise ValueError(f"score must be 'its' or 'cs', not {score!r}")
    ua, ub, dictionary = _translated_view(fa.unique, fb.unique, dictionary)
    a = _prepare(ua, dictionary)
    b = _prepare(ub, None)
    nx, ny = len(fa.unique.hashes), len(fb.unique.hashes)
    needs = [] if threshold is None else [_min_lcs(score, threshold, nx, ny)]
    needs += [] if min_z is None else [_min_lcs_for_z(min_z)]
    need = min(needs, default=0)
    can_prune = a.distinct or b.distinct  # then |LCS| <= distinct shared items
    if need > 0:
        if need > min(a.hashes.size, b.hashes.size):
            return None
        if can_prune and _shared_upper_bound(a, b) < need:
            return None
    ia, ib = _shared_indices(a, b)
    # |a ∩ b| from the merge the alignment needs anyway: a separate count was a numpy sort a
    # pair, and the z floor needs so few shared items that it seldom prunes (issue 28)
    if can_prune and need > 0 and ia.size < need:
        return None
    if dictionary is None and a.distinct and b.distinct:
        contexts = (getattr(fa.unique, "context", None), getattr(fb.unique, "context", None))
        return _verify_distinct(a, b, ia, ib, nx, ny, contexts)
    mask = None
    if dictionary is not None:
        rx, ry = _prepare(fa.unique, None), _prepare(fb.unique, None)
        mask = verbatim_runs_sorted(rx.order, rx.hashes[rx.order], ry.order, ry.hashes[ry.order])
    return _verify_general(a, b, ia, ib, nx, ny, mask, min_z, max_z)


@dataclass(frozen=True)
class _Stems:
    """A unique-word sequence seen through its stems (words None: matched on hashes)."""

    hashes: np.ndarray
    pages: np.ndarray
    words: Sequence[str] | None = None


def _translated_view(
    ua: UniqueSequence, ub: UniqueSequence, dictionary: Dictionary | None
) -> tuple[UniqueSequence, UniqueSequence, Dictionary | None]:
    """The sequences and lexicon a pair is aligned with: stems through the stem lexicon when
    translated and both books have stems (``bookdup.stemming``), else the words as they are.

    Positions are the same either way (one stem per unique word), so masks and pages index
    both views alike.
    """
    sa, sb = getattr(ua, "stems", None), getattr(ub, "stems", None)
    if dictionary is None or sa is None or sb is None:
        return ua, ub, dictionary
    stemmed = stem_lexicon(dictionary)
    if stemmed is None:
        return ua, ub, dictionary
    return _Stems(sa, ua.pages), _Stems(sb, ub.pages), stemmed


@cache
def _min_lcs_for_z(min_z: float | None) -> int:
    """The fewest shared items whose |LCS| could reach z = ``min_z`` (all of them in order);
    cached, as a job has one or two floors and the search costs ~20 z evaluations."""
    if min_z is None:
        return 0
    n = 1
    while order_evidence(n, n).z < min_z:
        n += 1
    return n


def neighbour_agreement(cx: np.ndarray, cy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(agreeing, comparable) neighbours of aligned items, 0–2 each, from their contexts
    (``bookdup.uniquewords.neighbour_context``): a neighbour is comparable when it is a word
    its book repeats in both books."""
    agree = np.zeros(cx.size, dtype=np.uint8)
    comparable = np.zeros(cx.size, dtype=np.uint8)
    for shift in (0, 4):
        bx = (cx >> np.uint8(shift)) & np.uint8(0xF)
        by = (cy >> np.uint8(shift)) & np.uint8(0xF)
        both = (bx > 0) & (by > 0)
        comparable += both
        agree += both & (bx == by)
    return agree, comparable


def _verify_distinct(
    a: _Prepared,
    b: _Prepared,
    ia: np.ndarray,
    ib: np.ndarray,
    nx: int,
    ny: int,
    contexts: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
) -> Verification:
    """Both sequences distinct: LIS over the shared items, the permutation null in closed form."""
    shared = int(ia.size)
    ix, iy = a.first[ia], b.first[ib]
    order = np.argsort(ix)
    ix, iy = ix[order], iy[order]
    keep = lis_keep(iy)
    ax, ay = ix[keep], iy[keep]
    pages = (a.pages[ax], b.pages[ay])
    positions = (a.groups[ax], b.groups[ay])
    lcs = int(ax.size)
    cx, cy = contexts
    neighbours = None if cx is None or cy is None else neighbour_agreement(cx[ax], cy[ay])
    return Verification(
        nx,
        ny,
        shared,
        lcs,
        cs(lcs, nx, ny),
        its(lcs, nx, ny),
        lambda: pages,
        order_evidence(lcs, shared),
        neighbours,
        lambda: positions,
    )


def _verify_general(
    a: _Prepared,
    b: _Prepared,
    ia: np.ndarray,
    ib: np.ndarray,
    nx: int,
    ny: int,
    mask: tuple[np.ndarray, np.ndarray] | None,
    min_z: float | None,
    max_z: float | None = None,
) -> Verification:
    """Items repeat (translated x): bit-parallel LCS, the null calibrated by shuffling x's words."""
    r = _restricted_lcs(a, b, ia, ib, mask)
    px, py, cx, cy, lcs, shared = r.px, r.py, r.cx, r.cy, r.lcs, r.shared
    evidence = order_evidence(lcs, shared)  # an upper bound: repeats only add chance matches
    data = ScanInput(a.groups[px], cx, py, cy, nx, ny)
    if min_z is None or evidence.z >= min_z:
        gx, seed, of_order = a.groups[px], r.seed, r.of_order
        if min_z is not None and max_z is not None:
            evidence = _decided_order(lcs, shared, gx, of_order, seed, data, min_z, max_z)
        else:
            evidence = shuffled_evidence(lcs, shared, gx, of_order, seed=seed)
            evidence = scan_windows(data, evidence, min_z)
    else:
        evidence = scan_windows(data, evidence, min_z)

    @cache
    def aligned() -> tuple[np.ndarray, np.ndarray]:
        return align_restricted(px, py, encode_ranks(cx), encode_ranks(cy))

    def align() -> tuple[np.ndarray, np.ndarray]:
        ax, ay = aligned()
        return a.pages[ax], b.pages[ay]

    def positions() -> tuple[np.ndarray, np.ndarray]:
        ax, ay = aligned()
        return a.groups[ax], b.groups[ay]

    scores = (cs(lcs, nx, ny), its(lcs, nx, ny))
    return Verification(nx, ny, shared, lcs, *scores, align, evidence, None, positions)


@dataclass(frozen=True)
class _RestrictedLcs:
    """Both sequences restricted to their shared items (``_restrict``), and their |LCS|."""

    px: np.ndarray
    py: np.ndarray
    cx: np.ndarray
    cy: np.ndarray
    shared: int  # distinct items on both sides
    pattern: Pattern
    lcs: int

    @property
    def seed(self) -> int:
        """The shuffles' seed: the same pair always gets the same null."""
        return self.lcs * 7919 + self.shared  # bookdup.screenkernel draws the same

    def of_order(self, order: np.ndarray) -> int:
        """|LCS| with y of x's restricted items taken in ``order``."""
        return lcs_stream(self.pattern, self.cx[order])


def _restricted_lcs(
    a: _Prepared,
    b: _Prepared,
    ia: np.ndarray,
    ib: np.ndarray,
    mask: tuple[np.ndarray, np.ndarray] | None,
) -> _RestrictedLcs:
    """The shared items of a translated pair (words of ``mask``'s verbatim runs left out)
    and their bit-parallel |LCS|."""
    px, py, cx, cy = _restrict(a, b, ia, ib)
    if mask is not None:
        kx, ky = ~mask[0][a.groups[px]], ~mask[1][b.groups[py]]
        px, cx, py, cy = px[kx], cx[kx], py[ky], cy[ky]
    present = np.zeros(ia.size, dtype=np.uint8)  # codes < ia.size: no sort, unlike intersect1d
    present[cx] = 1
    present[cy] |= 2
    shared = int(np.count_nonzero(present == 3))
    pattern = Pattern(cy, ia.size)
    return _RestrictedLcs(px, py, cx, cy, shared, pattern, lcs_stream(pattern, cx))


#: Shuffles of the candidate screen's null (``order_screen``): two keep unrelated hits' z below
#: 3 in 99 % of cases while a translation's is rarely under 6 (docs/EVALUATION.md).
SCREEN_SHUFFLES = 2


def order_screen(
    fa: HasUnique,
    fb: HasUnique,
    dictionary: Dictionary,
    shuffles: int = SCREEN_SHUFFLES,
    at_least: float | None = None,
) -> float:
    """The whole pair's order z against a null of ``shuffles`` shuffles: the cheap half of a
    translated verification (no window scan, no verbatim-run mask; ~2 ms against ~7), which
    tells a candidate's translation apart from books that merely share its words.

    fa is translated into fb's language, as ``verify_pair`` does. A screen, not a decision:
    the pairs it passes are verified in full. With ``at_least`` (the screen's threshold) a z
    surely below it may come back as a bound under it, from fewer shuffles
    (``screenkernel.screen_lcs``).
    """
    ua, ub, lexicon = _translated_view(fa.unique, fb.unique, dictionary)
    a, b = _prepare(ua, lexicon), _prepare(ub, None)
    counted = screen_lcs(a, b, shuffles, at_least)
    if counted is None:
        return _order_screen_python(a, b, shuffles)
    lcs, shared, values = counted
    if not values:  # under at_least with the lowest null the mean can have
        return z_at(lcs, lis_null_mean(shared))
    return calibrated(lcs, shared, values).z


def _order_screen_python(a: _Prepared, b: _Prepared, shuffles: int) -> float:
    """``order_screen`` in numpy: the reference the compiled path equals, and the path for
    the sequences it does not take (fewer than two items, groups out of order)."""
    ia, ib = _shared_indices(a, b)
    r = _restricted_lcs(a, b, ia, ib, None)
    gx = a.groups[r.px]
    return shuffled_evidence(r.lcs, r.shared, gx, r.of_order, shuffles=shuffles, seed=r.seed).z


#: Shuffles before a pair below the floor is decided on a second look: the windows are probed
#: with the lowest plausible null mean of the whole, and a looser one (fewer shuffles) makes
#: more of them worth calibrating. A first look follows the first "below" verdict (often after
#: one shuffle); only when it finds a window worth calibrating are the shuffles drawn up to
#: this many and the windows probed again (their counts reused), then the full path decides.
BELOW_SHUFFLES = 3


class _Once:
    """``of_order`` computing each shuffle's |LCS| once: a second look at a pair (and its full
    calibration) draws the same shuffles again from the same seed."""

    def __init__(self, of_order: Callable[[np.ndarray], int]) -> None:
        self.of_order = of_order
        self.known: dict[bytes, int] = {}

    def __call__(self, order: np.ndarray) -> int:
        key = order.tobytes()
        value = self.known.get(key)
        if value is None:
            value = self.known[key] = self.of_order(order)
        return value


def _decided_order(
    lcs: int,
    shared: int,
    gx: np.ndarray,
    of_order: Callable[[np.ndarray], int],
    seed: int,
    data: ScanInput,
    min_z: float,
    max_z: float,
) -> OrderEvidence:
    """The order evidence a decision against [min_z, max_z] needs, calibrated no further.

    The same decision as ``scan_windows`` over the fully calibrated whole pair:

    * whole z surely at least ``max_z``: windows only raise it, and the decision is made;
    * surely below ``min_z``: the windows are probed with the lowest plausible null mean
      of the whole, which gives every window an estimate at least as high as the full
      calibration would (``scan_windows`` scales the windows' nulls by it). When no window
      is then worth calibrating, none would be after the full calibration either, and the
      pair stays below the floor. The probe is first made with the shuffles the verdict
      took, then (if a window was worth it) with ``BELOW_SHUFFLES``, on the same window
      counts; else the full path decides;
    * open (or a window worth calibrating): the full calibration and scan.

    A pair decided below after fewer than ``BELOW_SHUFFLES`` shuffles reports the z of
    those (an estimate, below the floor either way: such a pair is never a relation).
    """

    once = _Once(of_order)

    def sequential(min_below: int) -> SequentialEvidence:
        return sequential_evidence(
            lcs, shared, gx, once, below=min_z, above=max_z, seed=seed, min_below=min_below
        )

    def stays_below(seq: SequentialEvidence, counts: WindowCounts) -> bool:
        probe = replace(seq.evidence, null_mean=seq.mean_low, z=-math.inf)
        return not worth_calibrating(counts, probe, min_z)

    seq = sequential(1)
    if seq.verdict == "above":
        return seq.evidence
    counts = None
    if seq.verdict == "below":
        counts = window_counts(data)
        if stays_below(seq, counts):
            return seq.evidence
        if seq.evidence.shuffles < BELOW_SHUFFLES:
            seq = sequential(BELOW_SHUFFLES)
            if seq.verdict == "above":
                return seq.evidence
            if seq.verdict == "below" and stays_below(seq, counts):
                return seq.evidence
    whole = seq.evidence
    if seq.verdict != "open":
        whole = shuffled_evidence(lcs, shared, gx, once, seed=seed)
    return scan_windows(data, whole, min_z, counts)


def _restrict(
    a: _Prepared, b: _Prepared, ia: np.ndarray, ib: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Both sequences restricted to their shared items: positions and items renumbered 0..k-1.

    Each side's positions come from its shared values' positions (the cached ``order`` from
    ``starts``), read back in order without a sort (``screenkernel.restricted``); the small
    codes index the compiled kernel's match table (``bookdup.bitlcs``) directly.
    """
    px, cx = restricted(ia, a.order, a.starts, a.hashes.size)
    py, cy = restricted(ib, b.order, b.starts, b.hashes.size)
    return px, py, cx, cy
