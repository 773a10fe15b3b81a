"""Relation signals between two books (Spasojevic & Poncin 2011, §IV-B), from features.

Two sources of page-level evidence:

* the unique-word alignment of the verification (pairs of 0-based pages of aligned words):
  exact words, so robust to OCR noise that destroys shingles, and the only evidence across
  languages (after translation no shingle matches);
* the b-bit page min-hashes: each page matched to its most similar page of the other book;
  used when there is no alignment and for Google's page-based book similarity.

Aligned pairs are cut into *runs*: a run breaks where consecutive pairs skip more than
``max_gap_words`` unique words (counted on the whole pages in between, so blank pages and
plates cost nothing) in either book. Spurious matches between unrelated text are sparse — an
LCS of random matches has ~2·sqrt(k) items spread over the whole book — so they break apart
and short runs are dropped, and what remains is
the shared text: its extent gives coverage (containment direction) and its contiguity, and
its pairs feed the linear fit of page numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from bookdup.endread import end_rereads
from bookdup.features import BookFeatures
from bookdup.minhash import jaccard, page_jaccard_matrix

#: The side of each book (x, y) a frame is boilerplate of: "front" or "back".
Sides = tuple[str, str]

__all__ = [
    "SIGNAL_PARAMS",
    "Collection",
    "RelationSignals",
    "SignalParams",
    "compute_signals",
    "dense_page_ranges",
    "frame_test",
    "item_neighbours",
    "page_signature_matches",
    "shared_runs",
    "word_offsets",
]

#: Bits per value of the stored book and page min-hashes (uint32 books, b-bit uint16 pages).
_BOOK_BITS = 32
_PAGE_BITS = 16


@dataclass(frozen=True)
class SignalParams:
    """Knobs of signal extraction (the classifier's thresholds are in ``ClassifierParams``)."""

    #: Page signatures: best match kept if its Jaccard estimate is at least this. 3 of 32
    #: equal min-hashes; unrelated pages share almost no 5-shingles (J < 0.01) while one page
    #: straddling two pages of another edition still shares ~30% with each.
    page_match_threshold: float = 0.09
    #: Consecutive aligned pairs with more unique words than this on the pages between
    #: them (in either book) start a new run. Copies of one text skip at most a page or two
    #: of changed text (~15–60 unique words a page); unrelated books align a word every
    #: |X|/(2·sqrt(shared)) ≈ 40+ unique words.
    max_gap_words: int = 40
    #: Where the aligned words' positions are known, a run's first or last items beyond a step
    #: passing over more than ``max_skip_words`` unique words and ``skip_factor`` times the
    #: run's median skip in both books are left out, when fewer than ``min_run_words`` and at
    #: most ``skip_agreement`` of their comparable neighbour words agree: whole pages are the
    #: unit above, and past the shared text of two small noisy books chance matches a few
    #: hundred words apart keep to neighbouring pages (an anthology holding 75 % of a book read
    #: 0.86 covered, its subset). Real 10 %-noise rescans step 4-5.4 times their median skip
    #: inside shared text (factor 4 lost two real subsets); what chance leaves agrees ~1 in 16.
    max_skip_words: int = 60
    skip_factor: float = 6.0
    skip_agreement: float = 0.25
    #: A run needs this many aligned words to count as shared text (spurious matches of
    #: unrelated text rarely fall this densely).
    min_run_words: int = 8
    #: The same for runs made of page-signature matches (one pair per page).
    min_run_pages: int = 2
    #: Front/back matter shared by unrelated books — the Project Gutenberg header and
    #: licence, publisher adverts — is not shared text. A run is such a *frame* when, in each
    #: book, it touches an edge (starts in the first ``frame_edge`` / ends in the last
    #: ``frame_back_edge`` of the pages) and stays within the front ``frame_front`` / back
    #: ``frame_back`` of them — the same edge in both, or not: an older PG etext opens with
    #: the licence a newer one closes with; pages past the first / last holding unique words
    #: do not count (blank, or boilerplate the dedup job dropped).
    #: The PG licence (~360 lines) is 10% of a 300-page book but 30% of a tiny one, so the
    #: back allowance is generous; nothing but boilerplate ends both books that way without
    #: anything else in common. Headers are short, and a front allowance of 1/2 would take
    #: an anthology opening with a book's first half for boilerplate.
    frame_edge: float = 0.1
    #: ... at the back the edge is the book's last words: a licence is the last text of a
    #: file. Compared alone, every back frame of the 80 real books ends within the last
    #: 3.1 % of both books' words (877 of 896 on the last page holding words), while an
    #: anthology's excerpt that stops 8 % before its work's end is no boilerplate (generated
    #: seed 61 at 2 % noise, z 89-92: it was a frame at the 10 % edge, issue 29).
    frame_back_edge: float = 0.05
    frame_front: float = 0.25
    frame_back: float = 0.5
    #: ... and a frame in front of one book and at the back of the other stays within the
    #: back quarter there, as a front frame within the front quarter: an anthology opening
    #: with the last 40 % of a work is that shape too, with as few aligned words at 10 %
    #: noise (generated seed 61: 5 overlaps lost at the back half's allowance).
    frame_crossed_back: float = 0.75
    #: ... but a run this long is text, wherever it lies: compared alone (no collection to
    #: drop it), the English PG licence aligns at most 350 unique words between two books
    #: (all 896 frame-only pairs of the 80 real books), while an anthology that ends with the
    #: last part of a work shares thousands with it.
    frame_max_words: int = 400
    #: ... and, inside a collection (the dedup job's index), a frame is boilerplate only when
    #: some other book holds its text apart from both books' own: at least
    #: ``frame_holder_share`` of its aligned words, and less than ``frame_family_share`` of an
    #: even sample of ``frame_rest_words`` of either book's other unique words (an edition of
    #: either holds those too). A licence joins unrelated books: every licence of a frame-only
    #: pair among the 80 real books has such a holder (980 pairs), holding at most 5.3 % of the
    #: rest where the frame aligns 20 words or more (up to 22 % below, where it relates none).
    #: The end of a work that an anthology shares has its editions for holders, or none; a
    #: 5 %-noise edition holds 19-26 % of the sample, the rest being OCR misreadings no other
    #: book holds (generated, 0-5 % noise: 11 overlaps lost, z up to 95; docs/EVALUATION.md).
    #: A 10 %-noise edition holds 9-13 %, and at 0.15 an anthology's excerpt of a work whose
    #: noisy editions hold it was a licence; 0.08 keeps every real licence's unrelated holder
    #: (≤ 5.3 % where the frame aligns 20 words or more) and finds them (issue 29, stop 54).
    frame_holder_share: float = 0.5
    frame_family_share: float = 0.08
    frame_rest_words: int = 300
    #: A book's end beyond its shared runs (``RelationSignals.open_end_x``) of a share in
    #: ``end_asked`` is asked of the collection, and is boilerplate, not text of the book's
    #: own, when ``end_holders`` books or more hold it apart from the pair as a frame's holder
    #: does. A licence the partner lacks has 5 or more (the 80 real books inside 3,080: two
    #: Inferno volumes 7.4-7.7 % past the shared text, read as overlaps; the 1997 header with
    #: its "Small Print!" 5, a newer licence dozens); the other work closing an anthology that
    #: holds most of a volume 0-1 (generated seeds 61-68, 0-10 % noise; stop 57).
    end_asked: tuple[float, float] = (0.03, 0.25)
    end_holders: int = 3
    #: ... and from this many mean steps (an end shorter is what noise leaves a true part,
    #: 9.8 steps at the 99th percentile up to 10 % noise, never text of its own to the
    #: classifier): each question costs the job a count on the books index.
    end_min_steps: float = 10.0
    #: The open end is read for a book covered this much or more, one the other book may
    #: contain (``ClassifierParams.contained_coverage`` starts at 0.75): the question to the
    #: collection is asked of a few pairs, not of every overlap.
    end_min_coverage: float = 0.7
    #: A shared text under ``own_block_max_words`` aligned words in runs whose densest block
    #: scores ``own_block_asked`` or more (``RelationSignals.local_score``) is asked of the
    #: collection as an end is (``shared_held_apart``): a 200-word excerpt shared by two books
    #: alone is text however small a share of them it is; the 1997 Project Gutenberg
    #: "Small Print!" that real unrelated books share in one block (scores 16-33) is held by
    #: many more (stop 60). Each question costs the job a count on the books index. Not asked
    #: of a text at an edge of both books (``frame_edge``, ``frame_back_edge`` of their unique
    #: words), a frame's place, where a small collection may hold too few of its holders: a
    #: producer's header two real books alone hold among 80 (blocks 14-16 in their first 1 %);
    #: 8 of the 9 generated excerpts the rule finds lie inside one book or both.
    own_block_asked: float = 10.0
    own_block_max_words: int = 100
    #: ... asked of a collection of ``own_block_min_books`` or more: that nobody holds a block
    #: apart is evidence only where a licence has unrelated holders to hold it. In 10 books
    #: (``tests/indexer/test_frames_in_collection``) the Project Gutenberg licence had none
    #: apart from a pair sharing it (the Inferno is part of the Commedia, the Alice books share
    #: their vocabulary) and related them; a text 1 in 20 of a library's books carry has 5
    #: holders among 100. Among 300-3,080 books no real pair relates (docs/EVALUATION.md,
    #: stops 60-61).
    own_block: bool = True
    own_block_min_books: int = 100
    #: An open end this many steps long or more is read again beside the shared text
    #: (``bookdup.endread``): from here the classifier's open-end ramp may start lower
    #: (``ClassifierParams.own_open_end_steps``); a shorter end changes no class.
    reread_min_steps: float = 8.0
    #: A page straddles two pages of the other book when each gets at least this share of
    #: its aligned words (below it, a stray word at a page edge).
    straddle_share: float = 0.15
    #: A run ends where its text ends, not at the chance matches the LCS picks up beside it: a
    #: step within a run's first or last ``edge_steps`` over at least ``edge_step_words`` words
    #: of one book and ``edge_step_ratio`` times the other's (in words of text, x's scaled by
    #: the runs' words of y per word of x, so an abridgement's even cuts are not one-sided)
    #: leaves the items beyond it out. In a 5-page noisy book a run breaks only on whole pages
    #: of unique words (``max_gap_words``), and 3 chance matches 340-990 words off the shared
    #: text in the abridgement (on the volume's scale), 19-108 in the volume, read 0.29 of it
    #: as 0.83 (generated seed 62). A ratio of 4 also cut true items at real abridgements'
    #: cuts (the real derived set: one ABRIDGED lost); 6 none (8: none, and fewer found).
    edge_steps: int = 2
    edge_step_words: float = 150.0
    edge_step_ratio: float = 6.0
    #: ... and, where the rest of the run holds ``contrary_ratio`` times the words of one book
    #: per word of the other (an abridgement against its full text), a one-sided step in the
    #: abridgement among its first or last ``edge_contrary_steps``: an abridgement's cuts
    #: skip in the full text only, so a skip in the abridgement is chance matches beside the
    #: run (an abridgement read as the volume it overlaps, its run headed by a title-page word
    #: and three chance matches 490 words before its shared text: stop 57). 0 turns it off.
    edge_contrary_steps: int = 5
    contrary_ratio: float = 1.4
    #: ... and a step among them over ``edge_step_words`` or more in both books and
    #: ``edge_gap_factor`` times the run's median step in each: no noise leaves such a gap in
    #: shared text; the texts that follow it in both do, with chance matches (a volume 79 %
    #: inside an anthology, two matches 218-374 words on at steps of 4-40: read 0.954 covered
    #: and a subset; generated seed 63 at 2 %, stop 53). 0 turns it off.
    edge_gap_factor: float = 10.0
    #: ... and such a gap is also a tail of several chance matches, stepping on average this
    #: many times further than the 90th percentile of the shared text's steps in both books
    #: (generated, 0-10 % noise: chance tails 3.2-41 times; an abridgement's pieces against
    #: an anthology step as far as the cuts inside the run, 0.8 times in the anthology).
    edge_tail_factor: float = 2.0
    #: A run whose median step is this many times the longest run's in both books is chance
    #: matches strung together beside the shared text, not more of it (generated seed 64 at
    #: 10 %: 8 matches of an anthology's other work, steps 5.3 and 8.3 times the shared
    #: text's, read a volume 0.66 inside it as its re-pagination). 0 turns it off.
    sparse_run_factor: float = 4.0
    #: Two consecutive runs at most ``bridge_words`` words apart in both books (on the same
    #: scale), one gap at most ``bridge_ratio`` times the other, cover the text between them in
    #: both: text both hold whose shared words noise garbled (a 10 %-noise volume's hole of
    #: ~380 words in both, generated seed 61), where a one-sided gap is text one book lacks.
    bridge_words: float = 500.0
    bridge_ratio: float = 2.0


SIGNAL_PARAMS = SignalParams()


class Collection(Protocol):
    """The books beside a pair (the dedup job's index, a corpus in memory): whether the text
    of a frame is held apart from the pair, as boilerplate is
    (``SignalParams.frame_holder_share``)."""

    def holds_apart(
        self,
        stretch: np.ndarray,
        at_least: int,
        rests: Sequence[tuple[np.ndarray, int]],
        exclude: Sequence[str],
        min_books: int = 1,
    ) -> bool:
        """Whether ``min_books`` books not in ``exclude`` each hold at least ``at_least`` of the
        unique-word hashes ``stretch`` and, for each (hashes, n) of ``rests``, fewer than n."""
        ...

    def size(self) -> int:
        """How many books the collection holds."""
        ...


@dataclass
class RelationSignals:
    """Evidence for the relation between book x and book y (all floats JSON-safe)."""

    same_content: bool  # content hashes equal
    book_similarity: float  # min-hash Jaccard estimate of the book signatures
    page_similarity: float  # Google: mean similarity of matched pages (signatures)
    page_match_fraction: float  # pages of the smaller book with a matching page
    page_agreement: float  # mean share of a page's aligned words on its best page
    n_pages_x: int
    n_pages_y: int
    n_page_matches: int  # aligned words (pages, from signatures) in shared runs
    slope: float  # a in page_y = a·page_x + b, fitted on the shared runs
    offset: float  # b, in pages of y
    fit_residual: float  # RMS residual of that fit, in pages of y
    delta_pages: int  # n_pages_x − n_pages_y
    delta_page_count: float  # Google eq. 3: last page of y − (a·last page of x + b)
    consecutive_corr: float  # Google: pages of the denser book straddling 2 consecutive pages
    sequential_fraction: float  # consecutive matched x pages whose y pages advance by ≈ slope
    coverage_x: float  # share of x's unique words inside shared runs (aligned positions)
    coverage_y: float
    span_x: float  # (last − first covered page + 1) / n_pages_x
    span_y: float
    contiguity_x: float  # share of x's covered unique words inside its longest run
    contiguity_y: float
    x: int  # unique-word counts
    y: int
    shared: int
    lcs: int
    cs: float
    its: float
    #: How ordered the shared items are: z of |LCS| against the random-order null
    #: (``bookdup.orderstat``), size-free; 0 when the verification did not compute it.
    order_z: float = 0.0
    #: |LCS| of the items ``order_z`` was read on: ``lcs`` for the whole exact alignment,
    #: less for a window of the bigger book, more for a noisy pair re-read with one-edit
    #: matches (``bookdup.compare._reread_order``); 0 when not computed.
    order_lcs: int = 0
    #: −log10 of the chance of the densest ordered block of the matches
    #: (``bookdup.localscan``): read for a same-language pair whose order leaves the gate
    #: shut or part open (``bookdup.compare._rescue``); 0 when not read.
    local_score: float = 0.0
    #: Share of the neighbour words of aligned unique words (inside shared runs) that are the
    #: same in both books, among neighbours both books repeat: ~1 for editions, even noisy
    #: ones; 0.4–0.7 for two translations of one work into one language. None: not known
    #: (a translated pair, or a book indexed before neighbour contexts were stored).
    neighbour_agreement: float | None = None
    #: Share of those neighbour slots that could be compared (both neighbours repeated words):
    #: low in heavy OCR noise, where misread neighbours are seen once.
    neighbour_share: float | None = None
    #: Words of y per word of x along the shared runs: the fit of their aligned words' offsets
    #: in words (else the page fit's slope × y's words per page / x's). ~1 for editions and
    #: subsets however they are paginated; ~0.4–0.6 when y is an abridgement of x (the same
    #: text, cut throughout).
    text_ratio: float = 1.0
    #: Share of x's (y's) unique words on the pages its shared runs cover, a page the runs
    #: reach counting whole: the coverage "along the book's length" the abridgement reads
    #: (``classify._abridgement``), where a noisy alignment's first and last aligned words
    #: sit inside the first and last pages. ``coverage_x`` counts a partly covered page
    #: partly (where shared text stops mid-page: subset against overlap). None: not known
    #: (signals stored before both were kept: ``coverage_x`` was on pages then).
    page_coverage_x: float | None = None
    page_coverage_y: float | None = None
    #: Share of x's (y's) unique words at its longer end beyond the shared runs (frames
    #: aside), and that end in mean steps between the runs' aligned words in x (y): an
    #: anthology holding 86 % of a volume leaves a tenth of it at one end, 10-55 steps long;
    #: a true part leaves its title page, a few steps. None: not read (a book covered under
    #: ``SignalParams.end_min_coverage``, page matches, no collection to tell an end from
    #: boilerplate, ``end_test``) or signals stored before.
    open_end_x: float | None = None
    open_end_y: float | None = None
    open_end_steps_x: float | None = None
    open_end_steps_y: float | None = None
    #: That end's words read again beside the shared text in the other book
    #: (``bookdup.endread``), as matches in order per step: a part's end garbled by noise
    #: 0.86 or more, text of the book's own about 0.1. None: not read (an end under
    #: ``SignalParams.reread_min_steps``, or no end read).
    open_end_reread_x: float | None = None
    open_end_reread_y: float | None = None
    #: Page breaks of either book along the shared runs' aligned words, and those with no
    #: break of the other book within one aligned word: a rescan of the same pages breaks
    #: where its original does (``page_breaks_apart`` 0, or 1-2 on a long noisy pair), a
    #: re-set edition drifting by a line here and there does not (``_page_breaks``). 0:
    #: page matches without an alignment, or signals stored before.
    page_breaks: int = 0
    page_breaks_apart: int = 0
    #: Whether ``SignalParams.end_holders`` books hold the shared runs' words apart from the
    #: pair, as boilerplate: asked of a small shared text with a decisive densest block
    #: (``SignalParams.own_block_asked``). None: not asked (no collection, a larger text).
    shared_held_apart: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict with rounded floats, for JSON output and the index.

        Read from ``vars`` (every field is a scalar): ``dataclasses.asdict`` deep-copies and
        cost a quarter of the signals' time.
        """
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in vars(self).items()}


def page_signature_matches(
    sig_x: np.ndarray,
    sig_y: np.ndarray,
    *,
    threshold: float = SIGNAL_PARAMS.page_match_threshold,
    bits: int = _PAGE_BITS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each page of x matched to its most similar page of y: (page_x, page_y, similarity).

    The (n_x, n_y) similarity matrix is computed in blocks by ``minhash.page_jaccard_matrix``
    (vectorised, b-bit corrected, empty pages 0); pages whose best match is below
    ``threshold`` are left unmatched.
    """
    sig_x, sig_y = np.asarray(sig_x), np.asarray(sig_y)
    if sig_x.shape[0] == 0 or sig_y.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    sim = page_jaccard_matrix(sig_x, sig_y, bits)
    best = sim.argmax(axis=1)
    best_sim = sim[np.arange(sim.shape[0]), best].astype(np.float64)
    keep = best_sim >= threshold
    return np.flatnonzero(keep).astype(np.int64), best[keep].astype(np.int64), best_sim[keep]


def _alignment_pages(verification: Any) -> tuple[np.ndarray, np.ndarray]:
    """Pages (x, y) of the aligned unique words of a ``Verification``, in alignment order."""
    al = getattr(verification, "alignment", None) if verification is not None else None
    if al is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if isinstance(al, tuple | list) and len(al) == 2:
        px, py = al
    else:
        arr = np.asarray(al).reshape(-1, 2)
        px, py = arr[:, 0], arr[:, 1]
    return np.asarray(px, np.int64), np.asarray(py, np.int64)


def item_neighbours(verification: Any, n_aligned: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(agreeing, comparable) neighbours of each aligned item of a ``Verification``, or None."""
    neighbours = getattr(verification, "neighbours", None)
    if neighbours is None or neighbours[0].size != n_aligned:
        return None
    return neighbours


def _alignment_positions(
    verification: Any, n_aligned: int
) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """Positions (x, y) of the aligned unique words in each book's unique-word sequence, in
    alignment order; (None, None) when the verification did not keep them."""
    pos = getattr(verification, "positions", None)
    if pos is None:
        return None, None
    qx, qy = (np.asarray(q, np.int64) for q in pos)
    if qx.size != n_aligned or qy.size != n_aligned:
        return None, None
    return qx, qy


def _skipped_words(pages: np.ndarray, word_pages: np.ndarray, n_pages: int) -> np.ndarray:
    """Unique words on the whole pages strictly between consecutive aligned pages."""
    cum = np.concatenate([[0], np.cumsum(np.bincount(word_pages, minlength=n_pages))])
    lo, hi = np.minimum(pages[:-1], pages[1:]), np.maximum(pages[:-1], pages[1:])
    return np.maximum(cum[hi] - cum[np.minimum(lo + 1, hi)], 0)


def _runs(
    px: np.ndarray, py: np.ndarray, fa: BookFeatures, fb: BookFeatures, max_gap: int, min_len: int
) -> list[slice]:
    """Slices of the monotone pair list forming dense runs of at least ``min_len`` pairs."""
    if px.size == 0:
        return []
    brk = (_skipped_words(px, fa.unique.pages, fa.n_pages) > max_gap) | (
        _skipped_words(py, fb.unique.pages, fb.n_pages) > max_gap
    )
    starts = np.concatenate([[0], np.flatnonzero(brk) + 1])
    ends = np.concatenate([starts[1:], [px.size]])
    return [slice(int(s), int(e)) for s, e in zip(starts, ends, strict=True) if e - s >= min_len]


def _skip_ends(
    r: slice,
    positions: tuple[np.ndarray, np.ndarray],
    p: SignalParams,
    neighbours: tuple[np.ndarray, np.ndarray] | None = None,
) -> slice:
    """``r`` without a head or tail of fewer than ``p.min_run_words`` items beyond a long skip
    in both books (``SignalParams.max_skip_words``) whose neighbour words mostly disagree;
    ``positions``: the aligned items' in each book's unique words, ``neighbours``: their
    (agreeing, comparable) neighbours."""
    if p.max_skip_words <= 0 or r.stop - r.start < 2:
        return r
    skips = [np.diff(q[r]) - 1 for q in positions]
    far = np.ones(skips[0].size, dtype=bool)
    for skip in skips:
        far &= (skip > p.max_skip_words) & (skip > p.skip_factor * max(float(np.median(skip)), 1.0))
    steps = np.flatnonzero(far)
    if steps.size == 0:
        return r

    def chance(items: slice) -> bool:
        if neighbours is None:
            return True
        agree, comparable = (int(n[items].sum()) for n in neighbours)
        return agree <= p.skip_agreement * comparable

    head = int(steps[0]) + 1
    head = head if head < p.min_run_words and chance(slice(r.start, r.start + head)) else 0
    tail = skips[0].size - int(steps[-1])
    tail = tail if tail < p.min_run_words and chance(slice(r.stop - tail, r.stop)) else 0
    if head + tail >= r.stop - r.start:  # one skip, both sides short: the shorter goes
        head, tail = (0, tail) if head >= tail else (head, 0)
    return slice(r.start + head, r.stop - tail)


def shared_runs(
    px: np.ndarray,
    py: np.ndarray,
    fa: BookFeatures,
    fb: BookFeatures,
    params: SignalParams = SIGNAL_PARAMS,
    *,
    min_len: int | None = None,
    offsets: tuple[np.ndarray, np.ndarray] | None = None,
    held_apart: Callable[[slice], bool] | None = None,
    positions: tuple[np.ndarray, np.ndarray] | None = None,
    neighbours: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[list[slice], list[tuple[slice, Sides]]]:
    """The dense runs of aligned page pairs (``px``, ``py``: 0-based pages of x = ``fa`` and
    y = ``fb``, in alignment order), split into shared text and *frames*, boilerplate at the
    edges of both books (with their sides, ``"front"`` or ``"back"`` in each).

    The one rule for what counts as shared text: the signals, the dense page ranges of a
    verdict and the runs ``query.explain`` draws all cut their alignment here. ``min_len``:
    pairs a run needs (default ``params.min_run_words``). With the aligned items' ``offsets``
    in words in both books (``word_offsets``), each run's edges are trimmed of chance
    matches (``_trim_edges``). ``held_apart`` (``frame_test``): whether the collection
    confirms a run at the edges as boilerplate; without it, every such run is. ``positions``:
    the aligned items' in each book's unique words, which cut a run's ends at long skips too.
    """
    min_len = params.min_run_words if min_len is None else min_len
    ex = _word_extent(fa.unique.pages, int(fa.n_pages))
    ey = _word_extent(fb.unique.pages, int(fb.n_pages))
    runs: list[slice] = []
    frames: list[tuple[slice, Sides]] = []
    found = _runs(px, py, fa, fb, params.max_gap_words, min_len)
    if positions is not None:
        found = [_skip_ends(r, positions, params, neighbours) for r in found]
    slope = 1.0 if offsets is None else _run_slope(found, offsets, params.edge_steps)
    if offsets is not None:
        found = [_trim_edges(r, offsets[0] * slope, offsets[1], params) for r in found]
        found = [_abridgement_ends(r, offsets[0], offsets[1], params) for r in found]
        found = _dense_enough(found, (offsets[0] * slope, offsets[1]), params.sparse_run_factor)
    found = [r for r in found if r.stop - r.start >= min_len]  # what the trims left a run
    for r in found:
        side = _frame_side(px[r], py[r], ex, ey, params)
        if (
            side is None
            or r.stop - r.start >= params.frame_max_words
            or (held_apart is not None and not held_apart(r))
        ):
            runs.append(r)
        else:
            frames.append((r, side))
    return runs, frames


def frame_test(
    fa: BookFeatures,
    fb: BookFeatures,
    positions: tuple[np.ndarray | None, np.ndarray | None],
    collection: Collection | None,
    params: SignalParams = SIGNAL_PARAMS,
) -> Callable[[slice], bool] | None:
    """``shared_runs``' question to the ``collection`` about a run at the edges of both books
    (aligned items ``positions`` in each): is its text held apart from the pair, as a licence
    is (``SignalParams.frame_holder_share``)? None without a collection or positions."""
    qx, qy = positions
    if collection is None or qx is None or qy is None:
        return None

    def held_apart(r: slice) -> bool:
        return _held_apart(fa, fb, (qx[r], qy[r]), collection, params)

    return held_apart


def _held_apart(
    fa: BookFeatures,
    fb: BookFeatures,
    items: tuple[np.ndarray, np.ndarray],
    collection: Collection,
    params: SignalParams,
    min_books: int = 1,
) -> bool:
    """Whether ``min_books`` books hold the text of the aligned ``items`` (positions in x, in
    y) apart from both books' own, as a licence's holders do (``frame_holder_share``,
    ``frame_family_share``)."""
    stretch = np.unique(fa.unique.hashes[items[0]])
    rests = [_rest_sample(f.unique.hashes, q, params) for f, q in zip((fa, fb), items, strict=True)]
    at_least = math.ceil(params.frame_holder_share * stretch.size)
    counted = [(h, math.ceil(params.frame_family_share * h.size)) for h in rests if h.size]
    exclude = (fa.book_id, fb.book_id)
    return collection.holds_apart(stretch, at_least, counted, exclude, min_books)


def block_test(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Any,
    items: tuple[np.ndarray | None, np.ndarray | None],
    collection: Collection | None,
    params: SignalParams = SIGNAL_PARAMS,
) -> dict[str, Any]:
    """``shared_held_apart`` of a small shared text (aligned ``items`` in runs, in x and y)
    whose densest block is decisive; nothing where not asked (``SignalParams.own_block_asked``)."""
    ix, iy = items
    score = float(getattr(verification, "local_score", 0.0))
    if not params.own_block or collection is None or ix is None or iy is None:
        return {}
    if score < params.own_block_asked:
        return {}
    if not 0 < ix.size < params.own_block_max_words or _at_edges(fa, fb, (ix, iy), params):
        return {}
    if collection.size() < params.own_block_min_books:  # counted last: a query on the index
        return {}
    apart = _held_apart(fa, fb, (ix, iy), collection, params, params.end_holders)
    return {"shared_held_apart": apart}


def end_test(
    fa: BookFeatures, fb: BookFeatures, collection: Collection | None, params: SignalParams
) -> Callable[[bool, int, int], bool] | None:
    """``_coverage_fields``' question to the ``collection`` about a book's end: do
    ``params.end_holders`` books hold the unique words at positions [lo, hi) of x (``in_x``)
    or y apart from the pair (``SignalParams.end_asked``)? None without a collection."""
    if collection is None:
        return None

    def held_apart(in_x: bool, lo: int, hi: int) -> bool:
        this, other = (fa, fb) if in_x else (fb, fa)
        stretch = _even_sample(this.unique.hashes[lo:hi], params.frame_rest_words)
        rests = [
            _rest_sample(this.unique.hashes, np.array([lo, hi - 1]), params),
            _even_sample(other.unique.hashes, params.frame_rest_words),
        ]
        at_least = math.ceil(params.frame_holder_share * stretch.size)
        counted = [(h, math.ceil(params.frame_family_share * h.size)) for h in rests if h.size]
        exclude = (fa.book_id, fb.book_id)
        return collection.holds_apart(stretch, at_least, counted, exclude, params.end_holders)

    return held_apart


def _at_edges(
    fa: BookFeatures, fb: BookFeatures, items: tuple[np.ndarray, np.ndarray], params: SignalParams
) -> bool:
    """Whether the aligned ``items`` touch an edge of both books, where a frame sits: each
    book's front ``frame_edge`` or back ``frame_back_edge`` of its unique words."""
    return all(
        q.min() < params.frame_edge * f.unique.hashes.size
        or q.max() >= (1.0 - params.frame_back_edge) * (f.unique.hashes.size - 1)
        for f, q in zip((fa, fb), items, strict=True)
    )


def _rest_sample(hashes: np.ndarray, frame: np.ndarray, params: SignalParams) -> np.ndarray:
    """Up to ``frame_rest_words`` distinct unique words of a book outside a frame's span
    (aligned positions ``frame``), evenly spaced through the book."""
    keep = np.ones(hashes.size, dtype=bool)
    keep[int(frame.min()) : int(frame.max()) + 1] = False
    return _even_sample(hashes[keep], params.frame_rest_words)


def _even_sample(hashes: np.ndarray, size: int) -> np.ndarray:
    """Up to ``size`` distinct ``hashes``, evenly spaced through them."""
    if hashes.size <= size:
        return np.unique(hashes)
    return np.unique(hashes[np.linspace(0, hashes.size - 1, size).astype(np.int64)])


def _run_slope(runs: list[slice], offsets: tuple[np.ndarray, np.ndarray], edge: int) -> float:
    """Words of y per word of x along the runs without their ``edge`` first and last items:
    the scale a step is one-sided against (an abridgement's cuts skip ~2.4 of its edition's
    words per word of its own, evenly: not chance matches)."""
    ox, oy = offsets
    long_enough = [r for r in runs if r.stop - r.start > 2 * edge + 1]
    dx = sum(float(ox[r.stop - 1 - edge] - ox[r.start + edge]) for r in long_enough)
    dy = sum(float(oy[r.stop - 1 - edge] - oy[r.start + edge]) for r in long_enough)
    return dy / dx if dx > 0 and dy > 0 else 1.0


def _one_sided(dx: np.ndarray, dy: np.ndarray, words: float, ratio: float) -> np.ndarray:
    """Which steps (words passed over in x, in y, on one scale) pass over at least ``words``
    in one book and ``ratio`` times the other's: text one book holds alone, or a chance
    match."""
    big, small = np.maximum(dx, dy), np.maximum(np.minimum(dx, dy), 1.0)
    return (big >= words) & (big >= ratio * small)


def _sparse(dx: np.ndarray, dy: np.ndarray, k: int, words: float, factor: float) -> np.ndarray:
    """Which steps pass over at least ``words`` in both books and ``factor`` times the run's
    median step between its ``k`` first and last ones in each: a gap no noise leaves inside
    shared text, beyond which a match is chance."""
    inner = slice(k, dx.size - k)
    mx, my = (max(float(np.median(d[inner])), 1.0) for d in (dx, dy))
    return (np.minimum(dx, dy) >= words) & (dx >= factor * mx) & (dy >= factor * my)


def _trim_edges(r: slice, ox: np.ndarray, oy: np.ndarray, p: SignalParams) -> slice:
    """``r`` without the items beyond a one-sided step among its first and last
    ``p.edge_steps`` steps (see ``SignalParams.edge_steps``); ``ox``, ``oy``: the aligned
    items' offsets in words, on one scale (``_run_slope``)."""
    k = p.edge_steps
    if r.stop - r.start <= 2 * k + 1:
        return r
    dx, dy = np.diff(ox[r]), np.diff(oy[r])
    chance = _one_sided(dx, dy, p.edge_step_words, p.edge_step_ratio)
    if p.edge_gap_factor > 0:
        chance |= _sparse(dx, dy, k, p.edge_step_words, p.edge_gap_factor)
    steps = np.flatnonzero(chance)
    front, back = steps[steps < k], steps[steps >= dx.size - k]
    head, tail = (0, 0) if p.edge_gap_factor <= 0 else _sparse_ends(dx, dy, p)
    start = r.start + max(int(front[-1]) + 1 if front.size else 0, head)
    stop = r.stop - max(dx.size - int(back[0]) if back.size else 0, tail)
    return slice(start, stop)


def _abridgement_ends(r: slice, ox: np.ndarray, oy: np.ndarray, p: SignalParams) -> slice:
    """``r`` without the items beyond a skip in the abridgement among its first and last
    ``p.edge_contrary_steps`` steps (see ``SignalParams.edge_contrary_steps``); ``ox``,
    ``oy``: the aligned items' offsets in words, each on its own book's scale."""
    k = p.edge_contrary_steps
    if k <= 0 or r.stop - r.start <= 2 * k + 1:
        return r
    dx, dy = np.diff(ox[r]), np.diff(oy[r])
    body_x, body_y = float(dx[k:-k].sum()), float(dy[k:-k].sum())
    if body_y >= p.contrary_ratio * body_x > 0:  # x is the abridgement
        short, full = dx, dy
    elif body_x >= p.contrary_ratio * body_y > 0:
        short, full = dy, dx
    else:
        return r
    far = (short >= p.edge_step_words) & (short >= p.edge_step_ratio * np.maximum(full, 1.0))
    steps = np.flatnonzero(far)
    front, back = steps[steps < k], steps[steps >= dx.size - k]
    start = r.start + (int(front[-1]) + 1 if front.size else 0)
    stop = r.stop - (dx.size - int(back[0]) if back.size else 0)
    return slice(start, stop)


def _sparse_ends(dx: np.ndarray, dy: np.ndarray, p: SignalParams) -> tuple[int, int]:
    """How many items to leave out at each end of a run with steps ``dx``, ``dy``: the longest
    head and tail (at most half the steps) entered by a step over ``p.edge_step_words`` in one
    book and passing over that many in both at a mean step ``p.edge_gap_factor`` times the
    run's median in each, and ``p.edge_tail_factor`` times the 90th percentile of the steps
    between them — chance matches the LCS strings on beside the shared text, each a few
    hundred words from the next, where the shared text never steps so far."""
    limit = dx.size // 2
    if limit == 0:
        return 0, 0
    mx, my = (max(float(np.median(d)), 1.0) for d in (dx, dy))
    ends = []
    for ex, ey in ((dx[:limit], dy[:limit]), (dx[::-1][:limit], dy[::-1][:limit])):
        sx, sy = np.cumsum(ex), np.cumsum(ey)
        m = np.arange(1, limit + 1)
        ok = (np.minimum(sx, sy) >= p.edge_step_words) & (sx >= p.edge_gap_factor * mx * m)
        ok &= (sy >= p.edge_gap_factor * my * m) & (np.maximum(ex, ey) >= p.edge_step_words)
        ends.append(int(np.flatnonzero(ok)[-1]) + 1 if ok.any() else 0)
    head, tail = ends
    if head + tail >= dx.size:
        return 0, 0
    body = slice(head, dx.size - tail)
    far = [p.edge_tail_factor * float(np.quantile(d[body], 0.9)) for d in (dx, dy)]
    keep = [
        n > 0 and min(d[s].mean() / f for d, f in zip((dx, dy), far, strict=True)) >= 1.0
        for n, s in ((head, slice(0, head)), (tail, slice(dx.size - tail, dx.size)))
    ]
    return head if keep[0] else 0, tail if keep[1] else 0


def _dense_enough(
    runs: list[slice], offsets: tuple[np.ndarray, np.ndarray], factor: float
) -> list[slice]:
    """``runs`` without those whose median step is ``factor`` times the longest run's in both
    books (``offsets``: on one scale): chance matches strung together beside shared text."""
    if factor <= 0 or len(runs) < 2:
        return runs
    steps = [[float(np.median(np.diff(o[r]))) for o in offsets] for r in runs]
    ref = steps[max(range(len(runs)), key=lambda i: runs[i].stop - runs[i].start)]
    return [
        r
        for r, (sx, sy) in zip(runs, steps, strict=True)
        if sx < factor * max(ref[0], 1.0) or sy < factor * max(ref[1], 1.0)
    ]


def _bridged(
    runs: list[slice], offsets: tuple[np.ndarray, np.ndarray] | None, p: SignalParams
) -> frozenset[int]:
    """Indices i of the runs (in alignment order) whose gap to run i + 1 is text both books
    hold (see ``SignalParams.bridge_words``); ``offsets``: the aligned items' in words."""
    if offsets is None or len(runs) < 2:
        return frozenset()
    slope = _run_slope(runs, offsets, 0)
    last = np.array([r.stop - 1 for r in runs[:-1]])
    first = np.array([r.start for r in runs[1:]])
    gx = (offsets[0][first] - offsets[0][last]) * slope
    gy = offsets[1][first] - offsets[1][last]
    big, small = np.maximum(gx, gy), np.maximum(np.minimum(gx, gy), 1.0)
    near = (big <= p.bridge_words) & (big <= p.bridge_ratio * small)
    return frozenset(int(i) for i in np.flatnonzero(near))


def _word_extent(word_pages: np.ndarray, n_pages: int) -> tuple[int, int]:
    """[first, last + 1) of the pages holding unique words: where the book's text starts and
    ends (all its pages when it has none). Pages beyond hold nothing a run could reach:
    blank pages, plates, or boilerplate already dropped (``bookdup.boilerplate``)."""
    if word_pages.size == 0:
        return 0, max(n_pages, 1)
    return int(word_pages.min()), int(word_pages.max()) + 1


def _frame_side(
    px: np.ndarray, py: np.ndarray, ex: tuple[int, int], ey: tuple[int, int], p: SignalParams
) -> Sides | None:
    """Which side of each book (x, y) a run is boilerplate of: ``"front"`` where it is the
    book's front matter, ``"back"`` where its back matter (see SignalParams), None when it is
    shared text. The sides may differ: an older Project Gutenberg etext opens with the
    licence a newer one closes with (three German books among 3,080 were related by it
    alone, docs/EVALUATION.md).

    Positions are shares of each book's word extent ``ex`` / ``ey`` (``_word_extent``), not of
    its page count: once a collection's boilerplate stretches are dropped, the remnant of a
    licence two books share ends where their words end, pages before the last.
    """
    rx, ry = _extent_share(px, ex), _extent_share(py, ey)
    x, y = _edge(rx, p), _edge(ry, p)
    if x is None or y is None:
        return None
    back_start = rx[0] if x == "back" else ry[0]
    if x != y and back_start < p.frame_crossed_back:  # a work's end opening another
        return None
    return x, y


def _edge(r: tuple[float, float], p: SignalParams) -> str | None:
    """``"front"`` / ``"back"`` when a run at shares ``r`` of a book is its front / back
    matter, else None."""
    if r[0] < p.frame_edge and r[1] <= p.frame_front:
        return "front"
    if r[1] > 1 - p.frame_back_edge and r[0] >= p.frame_back:
        return "back"
    return None


def _extent_share(pages: np.ndarray, extent: tuple[int, int]) -> tuple[float, float]:
    lo, hi = extent
    width = max(hi - lo, 1)
    return (int(pages.min()) - lo) / width, (int(pages.max()) + 1 - lo) / width


def _coverage(
    pages: np.ndarray,
    runs: list[slice],
    frames: list[tuple[slice, str]],
    word_pages: np.ndarray,
    n_pages: int,
    positions: np.ndarray | None = None,
    max_gap: int = 0,
    bridged: frozenset[int] = frozenset(),
) -> tuple[float, float, float]:
    """(coverage, span, contiguity) of one book's runs: shares of its unique words.

    With ``positions`` (each aligned item's position in the book's unique-word sequence, in
    the order of ``pages``) a run covers the unique words from its first to its last aligned
    one: a page the run ends on counts for the words it reaches, not as a whole page (an
    anthology holding 85 % of a volume is not its subset because both cut mid-page), and
    two runs of the book at most ``max_gap`` unique words apart cover what lies between
    them, as inside a run (noise or a cut in the other book broke them there: an
    abridgement's pieces, a 10 %-noise rescan), and so do runs i, i + 1 for i in ``bridged``
    (``_bridged``: text both books hold). Without positions (page matches), a run
    covers its pages whole, each weighted by its unique words. The span is in pages either
    way.

    Frame runs (boilerplate) are neutral: neither covered nor counted in the total; a back
    frame's from its start to the end of the book, a front frame's from the start of the
    book to its end (what lies beyond shared boilerplate is more of it: the rest of a licence
    whose partner in the other book was dropped, a digitiser's notice).
    """
    if not runs or n_pages <= 0:
        return 0.0, 0.0, 0.0
    lo = min(int(pages[r].min()) for r in runs)
    hi = max(int(pages[r].max()) for r in runs)
    span = (hi - lo + 1) / n_pages
    if positions is not None and word_pages.size > 0:
        units, weight = positions, np.ones(word_pages.size)
    else:
        units, max_gap, bridged = pages, 0, frozenset()
        weight = np.bincount(word_pages, minlength=n_pages).astype(np.float64)[:n_pages]
        if weight.sum() == 0:  # no unique words at all: weigh pages equally
            weight = np.ones(n_pages)
    coverage, contiguity = _covered_share(units, runs, frames, weight, max_gap, bridged)
    return coverage, float(span), contiguity


def _covered_share(
    units: np.ndarray,
    runs: list[slice],
    frames: list[tuple[slice, str]],
    weight: np.ndarray,
    max_gap: int = 0,
    bridged: frozenset[int] = frozenset(),
) -> tuple[float, float]:
    """(covered share of ``weight``, share of the covered weight in the longest run): each
    run (in alignment order, so in order of ``units``) covers its units (pages or word
    positions) from its first to its last, and the units up to the next run when that is at
    most ``max_gap`` away or the run's index is in ``bridged``; frames' units are left out
    of both."""
    weight = _without_frames(weight, units, frames)
    n = weight.size
    covered = np.zeros(n, dtype=bool)
    run_weights = []
    spans = [(int(units[r].min()), int(units[r].max())) for r in runs]
    for i, ((a, b), (after, _)) in enumerate(
        zip(spans, [*spans[1:], (n + max_gap + 1, 0)], strict=True)
    ):
        covered[a : b + 1] = True
        run_weights.append(weight[a : b + 1].sum())
        if after - b - 1 <= max_gap or i in bridged:
            covered[b + 1 : after] = True
    total = weight[covered].sum()
    coverage = total / weight.sum() if weight.sum() > 0 else 0.0
    contiguity = max(run_weights) / total if total > 0 else 0.0
    return float(coverage), float(contiguity)


def _without_frames(
    weight: np.ndarray, units: np.ndarray, frames: list[tuple[slice, str]]
) -> np.ndarray:
    """``weight`` with the frames' units at 0: a front frame's from the start of the book to
    its end, a back frame's from its start to the end of the book."""
    weight = weight.copy()
    for r, side in frames:
        lo_frame = 0 if side == "front" else int(units[r].min())
        hi_frame = weight.size if side == "back" else int(units[r].max()) + 1
        weight[lo_frame:hi_frame] = 0.0
    return weight


def _open_end(
    positions: np.ndarray, runs: list[slice], frames: list[tuple[slice, str]], n_unique: int
) -> tuple[float, float, tuple[int, int]]:
    """(share, steps, [lo, hi)) of the book's longer end beyond its shared runs, frames
    aside: its unique words before the first aligned one or after the last, as a share of the
    book and in mean steps between the runs' aligned words (a gap chance leaves among them
    only rarely: text the other book lacks), and its positions."""
    weight = _without_frames(np.ones(n_unique), positions, frames)
    items = np.concatenate([positions[r] for r in runs])
    first, last = int(items.min()), int(items.max())
    head, tail = weight[:first].sum(), weight[last + 1 :].sum()
    end, where = (head, (0, first)) if head >= tail else (tail, (last + 1, n_unique))
    step = max((last - first) / max(items.size - 1, 1), 1.0)
    return float(end / max(weight.sum(), 1.0)), float(end / step), where


def _coverage_fields(
    side: str,
    pages: np.ndarray,
    runs: list[slice],
    frames: list[tuple[slice, Sides]],
    features: BookFeatures,
    positions: np.ndarray | None,
    bridged: frozenset[int],
    ends: Callable[[bool, int, int], bool] | None = None,
    params: SignalParams = SIGNAL_PARAMS,
    rereads: Callable[[bool, int, int], int] | None = None,
) -> dict[str, Any]:
    """One book's coverage, span and contiguity (on word positions when given), its coverage
    on whole pages (the abridgement's) and, for a book nearly covered, with a collection to
    ask (``ends``: ``end_test``), its open end (``_open_end``; none where boilerplate), as
    ``RelationSignals`` fields of ``side`` (``"x"`` or ``"y"``)."""
    word_pages, n_pages = features.unique.pages, int(features.n_pages)
    mine = [(r, sides[0] if side == "x" else sides[1]) for r, sides in frames]
    gap = params.max_gap_words
    cov, span, cont = _coverage(pages, runs, mine, word_pages, n_pages, positions, gap, bridged)
    on_pages = cov if positions is None else _coverage(pages, runs, mine, word_pages, n_pages)[0]
    names = ("coverage", "span", "contiguity", "page_coverage")
    values = (cov, span, cont, on_pages)
    fields = {f"{name}_{side}": v for name, v in zip(names, values, strict=True)}
    if ends is not None and positions is not None and runs and cov >= params.end_min_coverage:
        share, steps, (lo, hi) = _open_end(positions, runs, mine, int(word_pages.size))
        asked = params.end_asked[0] <= share <= params.end_asked[1]
        if asked and steps >= params.end_min_steps and ends(side == "x", lo, hi):
            share, steps = 0.0, 0.0
        fields.update({f"open_end_{side}": share, f"open_end_steps_{side}": steps})
        if rereads is not None and steps >= params.reread_min_steps:
            fields[f"open_end_reread_{side}"] = rereads(side == "x", lo, hi) / steps
    return fields


def _fit(px: np.ndarray, py: np.ndarray) -> tuple[float, float, float]:
    """Least-squares page_y = a·page_x + b on run pairs (outliers already cut) and RMS."""
    if px.size < 2 or np.ptp(px) == 0:
        return 1.0, float(py.mean() - px.mean()) if px.size else 0.0, 0.0
    a, b = np.polyfit(px.astype(np.float64), py.astype(np.float64), 1)
    rms = float(np.sqrt(np.mean((py - (a * px + b)) ** 2)))
    return float(a), float(b), rms


def _page_table(px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (page_x, page_y) pairs with the number of aligned items on each, sorted.

    Pairs are packed into one int64 key (pages are small non-negative ints): np.unique on
    rows (axis=0) sorts a structured view and costs ~10x more.
    """
    width = int(py.max()) + 1
    keys, counts = np.unique(px * width + py, return_counts=True)
    return keys // width, keys % width, counts


def _group_stats(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, straddle_share: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per page of one book, from distinct pairs (a, b) with counts ``c``, sorted by (a, b).

    Returns (its matched pages, the best page of the other book for each, the share of its
    aligned items on that best page, and Google's straddle sum: Σ sim(p_i, p_j) + sim(p_i,
    p_j+1) over pages whose items fall on two consecutive pages with a real share each).
    """
    pages, first = np.unique(a, return_index=True)
    totals = np.add.reduceat(c, first)
    share = c / np.repeat(totals, np.diff(np.append(first, c.size)))
    by_count = np.lexsort((-c, a))  # within each page, most items first
    best = by_count[first]
    pair = (a[1:] == a[:-1]) & (b[1:] - b[:-1] == 1)
    pair &= (share[1:] >= straddle_share) & (share[:-1] >= straddle_share)
    straddle = float((share[1:] + share[:-1])[pair].sum())
    return pages, b[best], share[best], straddle


class _Aligned(NamedTuple):
    runs: list[slice]
    frames: list[tuple[slice, Sides]]
    positions: tuple[np.ndarray | None, np.ndarray | None]
    offsets: tuple[np.ndarray, np.ndarray] | None
    neighbours: tuple[np.ndarray, np.ndarray] | None


def _aligned_runs(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Any,
    pages: tuple[np.ndarray, np.ndarray],
    params: SignalParams,
    collection: Collection | None = None,
    min_len: int | None = None,
) -> _Aligned:
    """``shared_runs`` of the aligned items on ``pages`` (x, y) of ``verification`` (None: page
    matches, runs of pages), read with the positions, word offsets and neighbours it keeps:
    the one reading of a pair's runs for its signals and its dense page ranges."""
    px, py = pages
    qx, qy = _alignment_positions(verification, px.size)
    both = None if qx is None or qy is None else (qx, qy)
    offsets = None if both is None else (word_offsets(fa, both[0]), word_offsets(fb, both[1]))
    neighbours = item_neighbours(verification, px.size)
    runs, frames = shared_runs(
        px,
        py,
        fa,
        fb,
        params,
        min_len=min_len,
        offsets=offsets,
        held_apart=frame_test(fa, fb, (qx, qy), collection, params),
        positions=both,
        neighbours=neighbours,
    )
    return _Aligned(runs, frames, (qx, qy), offsets, neighbours)


def compute_signals(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Any,
    *,
    page_matches: tuple[np.ndarray, np.ndarray] | None = None,
    params: SignalParams = SIGNAL_PARAMS,
    collection: Collection | None = None,
) -> RelationSignals:
    """Signals for the pair (x = ``fa``, y = ``fb``).

    ``verification`` is a ``bookdup.verify.Verification`` (or None when the pair was pruned);
    its alignment gives the page pairs. ``page_matches`` (page_x, page_y) overrides them, e.g.
    for a caller that matched pages some other way. ``collection``: the books beside the pair,
    asked whether a run at the edges of both is boilerplate (``frame_test``).
    """
    nx_pages, ny_pages = int(fa.n_pages), int(fb.n_pages)
    sx, sy, ss = page_signature_matches(
        fa.page_minhashes, fb.page_minhashes, threshold=params.page_match_threshold
    )
    px, py, min_run, on_alignment = _page_pairs(verification, page_matches, (sx, sy), params)
    aligned = _aligned_runs(
        fa, fb, verification if on_alignment else None, (px, py), params, collection, min_run
    )
    runs, frames, offsets = aligned.runs, aligned.frames, aligned.offsets
    qx, qy = aligned.positions
    rx, ry = _in_runs(px, runs), _in_runs(py, runs)
    bridged = _bridged(runs, offsets, params)
    slope, offset, residual = _fit(rx, ry)
    table = _page_table_signals(rx, ry, slope, fa, fb, params)
    agreeing, comparable = _neighbours_in_runs(aligned.neighbours, runs)
    ends = end_test(fa, fb, collection, params)
    inside = _positions_in_runs(aligned.positions, runs)
    rereads = _end_rereads(fa, fb, inside)
    return RelationSignals(
        same_content=bool(fa.content_hash) and fa.content_hash == fb.content_hash,
        book_similarity=float(jaccard(fa.minhash, fb.minhash, _BOOK_BITS)),
        page_similarity=float(ss.mean()) if ss.size else 0.0,
        page_match_fraction=table.match_fraction,
        page_agreement=table.agreement,
        n_pages_x=nx_pages,
        n_pages_y=ny_pages,
        n_page_matches=int(rx.size),
        slope=slope,
        offset=offset,
        fit_residual=residual,
        delta_pages=nx_pages - ny_pages,
        delta_page_count=_delta_page_count(slope, offset, nx_pages, ny_pages),
        consecutive_corr=float(min(1.0, table.straddle)),
        sequential_fraction=table.sequential,
        **_coverage_fields("x", px, runs, frames, fa, qx, bridged, ends, params, rereads),
        **_coverage_fields("y", py, runs, frames, fb, qy, bridged, ends, params, rereads),
        **_verification_fields(verification, fa, fb),
        neighbour_agreement=agreeing,
        neighbour_share=comparable,
        text_ratio=_text_ratio(slope, fa, fb, _run_offsets(offsets, runs)) if rx.size else 1.0,
        **(_page_breaks(rx, ry) if on_alignment else {}),
        **block_test(fa, fb, verification, inside, collection, params),
    )


def _delta_page_count(slope: float, offset: float, nx_pages: int, ny_pages: int) -> float:
    """Google's eq. 3: y's last page against the page fit's image of x's last page."""
    return float(max(ny_pages - 1, 0) - (slope * max(nx_pages - 1, 0) + offset))


def _positions_in_runs(
    positions: tuple[np.ndarray | None, np.ndarray | None], runs: list[slice]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The aligned items' positions inside ``runs``, in x and in y (None where unknown)."""
    qx, qy = positions
    return (None if qx is None else _in_runs(qx, runs), None if qy is None else _in_runs(qy, runs))


def _end_rereads(
    fa: BookFeatures, fb: BookFeatures, inside: tuple[np.ndarray | None, np.ndarray | None]
) -> Callable[[bool, int, int], int] | None:
    """``end_rereads`` of the runs' aligned positions ``inside``; None where not known."""
    ix, iy = inside
    if ix is None or iy is None:
        return None
    return end_rereads(fa, fb, (ix, iy))


def _page_breaks(rx: np.ndarray, ry: np.ndarray) -> dict[str, Any]:
    """``page_breaks`` of both books along the aligned items (``rx``, ``ry``: their pages, in
    order) and ``page_breaks_apart``, those with no break of the other book within one item:
    a break is where an item's page differs from the one before."""
    bx = np.flatnonzero(rx[1:] != rx[:-1])
    by = np.flatnonzero(ry[1:] != ry[:-1])
    apart = _apart(bx, by) + _apart(by, bx)
    return {"page_breaks": int(bx.size + by.size), "page_breaks_apart": apart}


def _apart(breaks: np.ndarray, other: np.ndarray) -> int:
    """``breaks`` (sorted item indices) with no index of ``other`` (sorted) within one."""
    if not other.size:
        return int(breaks.size)
    at = np.searchsorted(other, breaks)
    after = other[np.minimum(at, other.size - 1)]
    before = other[np.maximum(at - 1, 0)]
    nearest = np.minimum(np.abs(after - breaks), np.abs(breaks - before))
    return int(np.count_nonzero(nearest > 1))


def _in_runs(pages: np.ndarray, runs: list[slice]) -> np.ndarray:
    """The items of ``pages`` inside ``runs``, in order."""
    return np.concatenate([pages[r] for r in runs]) if runs else np.zeros(0, np.int64)


def _page_pairs(
    verification: Any,
    page_matches: tuple[np.ndarray, np.ndarray] | None,
    signatures: tuple[np.ndarray, np.ndarray],
    params: SignalParams,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """(pages of x, pages of y, the pairs a run needs, from the word alignment?): the given
    ``page_matches``, else the verification's alignment, else (none usable) the pages whose
    signatures match."""
    if page_matches is not None:
        px, py = (np.asarray(p, np.int64) for p in page_matches)
        return px, py, params.min_run_pages, False
    px, py = _alignment_pages(verification)
    if px.size < params.min_run_words:
        return signatures[0], signatures[1], params.min_run_pages, False
    return px, py, params.min_run_words, True


@dataclass(frozen=True)
class _TableSignals:
    """What the shared runs' page table says (``_page_table_signals``)."""

    agreement: float = 0.0
    sequential: float = 0.0
    straddle: float = 0.0
    match_fraction: float = 0.0


def _page_table_signals(
    rx: np.ndarray,
    ry: np.ndarray,
    slope: float,
    fa: BookFeatures,
    fb: BookFeatures,
    params: SignalParams,
) -> _TableSignals:
    """Page agreement, sequential steps, straddling and matched pages of the shared runs'
    page pairs (``rx``, ``ry``); all 0 without any."""
    if not rx.size:
        return _TableSignals()
    nx_pages, ny_pages = int(fa.n_pages), int(fb.n_pages)
    ux, uy, c = _page_table(rx, ry)
    xs, best_y, share, straddle_x = _group_stats(ux, uy, c, params.straddle_share)
    steps = np.diff(best_y)[np.diff(xs) == 1]
    # a page of x spanning `slope` pages of y has ~slope - 1 whole ones, any of them its best
    seq = float(np.mean(np.abs(steps - slope) <= max(1.0, slope - 1.0))) if steps.size else 0.0
    # Google counts straddling on the denser book (more unique words per page)
    if len(fa.unique) * ny_pages >= len(fb.unique) * nx_pages:
        corr = straddle_x / max(nx_pages, 1)
    else:
        order = np.lexsort((ux, uy))
        _, _, _, straddle_y = _group_stats(uy[order], ux[order], c[order], params.straddle_share)
        corr = straddle_y / max(ny_pages, 1)
    n_small = min(nx_pages, ny_pages)
    matched = xs.size if nx_pages <= ny_pages else np.unique(uy).size
    return _TableSignals(
        float(share.mean()), seq, float(corr), float(matched / n_small if n_small else 0.0)
    )


def _verification_fields(v: Any, fa: BookFeatures, fb: BookFeatures) -> dict[str, Any]:
    """The unique-word scores of the signals, from ``v`` (zeros for a pruned pair)."""
    if v is None:
        zero = {"shared": 0, "lcs": 0, "cs": 0.0, "its": 0.0, "order_z": 0.0, "order_lcs": 0}
        zero["local_score"] = 0.0
        return {"x": len(fa.unique), "y": len(fb.unique), **zero}
    return {
        "x": int(v.x),
        "y": int(v.y),
        "shared": int(v.shared),
        "lcs": int(v.lcs),
        "cs": float(v.cs),
        "its": float(v.its),
        "order_z": float(getattr(v, "order_z", 0.0)),
        "order_lcs": int(order.lcs) if (order := getattr(v, "order", None)) is not None else 0,
        "local_score": float(getattr(v, "local_score", 0.0)),
    }


#: The page ranges a verdict states cover this central share of the aligned words of the shared
#: text (a stray word at either end does not stretch them) ...
DENSE_SHARE = 0.95
#: ... once aligned words off the page mapping of the rest are set aside: further than this many
#: pages of y (or than 3 robust deviations, if more) from the line fitted on the others. A short
#: block after the end of a partial translation (Werther's book 1 against the complete English:
#: 13 words mapping pages 51-52 onto 45-53) otherwise stretches the range of y by ten pages.
DENSE_TOLERANCE_PAGES = 2.0
#: Set aside no more than this share: a pair whose runs follow no single line (passages shared
#: in another order) keeps all of them.
DENSE_MAX_OFF = 0.2


def dense_page_ranges(
    fa: BookFeatures,
    fb: BookFeatures,
    verification: Any,
    params: SignalParams = SIGNAL_PARAMS,
    collection: Collection | None = None,
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Pages (1-based, inclusive) of x and of y where their shared text lies: the dense aligned
    part, not every run's extent. None when there is no shared text (no run but frames).

    The runs are those of `compute_signals` (frames left out); their aligned words off the
    page mapping are set aside (``DENSE_TOLERANCE_PAGES``) and the ranges cover the central
    ``DENSE_SHARE`` of the rest.
    """
    px, py = _alignment_pages(verification)
    if px.size < params.min_run_words:
        return None
    runs = _aligned_runs(fa, fb, verification, (px, py), params, collection).runs
    if not runs:
        return None
    rx = np.concatenate([px[r] for r in runs]).astype(np.float64)
    ry = np.concatenate([py[r] for r in runs]).astype(np.float64)
    keep = np.ones(rx.size, dtype=bool)
    for _ in range(3):  # refit without the words off the line: they pulled the first fit
        slope, offset, _rms = _fit(rx[keep], ry[keep])
        off = np.abs(ry - (slope * rx + offset))
        spread = 1.4826 * float(np.median(off[keep]))
        on_line = off <= max(DENSE_TOLERANCE_PAGES, 3 * spread)
        if on_line.mean() < 1 - DENSE_MAX_OFF or np.array_equal(on_line, keep):
            break
        keep = on_line
    tail = 100 * (1 - DENSE_SHARE) / 2
    lo_x, hi_x = np.percentile(rx[keep], [tail, 100 - tail], method="nearest")
    lo_y, hi_y = np.percentile(ry[keep], [tail, 100 - tail], method="nearest")
    return (int(lo_x) + 1, int(hi_x) + 1), (int(lo_y) + 1, int(hi_y) + 1)


def _run_offsets(
    offsets: tuple[np.ndarray, np.ndarray] | None, runs: list[slice]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The offsets (x, y) of the shared runs' aligned items (None when not known)."""
    if offsets is None or not runs:
        return None
    return tuple(np.concatenate([o[r] for r in runs]) for o in offsets)  # type: ignore[return-value]


def _text_ratio(
    slope: float,
    fa: BookFeatures,
    fb: BookFeatures,
    offsets: tuple[np.ndarray, np.ndarray] | None = None,
) -> float:
    """Words of y per word of x where they align (see ``RelationSignals.text_ratio``): the
    fit of the aligned words' ``offsets`` in words (``word_offsets``) when known, else the
    page fit's ``slope`` scaled by each book's words per page."""
    if min(fa.n_words, fb.n_words, fa.n_pages, fb.n_pages) <= 0:
        return 1.0
    if offsets is not None and offsets[0].size >= 2 and np.ptp(offsets[0]) > 0:
        fitted = float(np.polyfit(offsets[0], offsets[1], 1)[0])
        return fitted if fitted > 0 else 1.0
    if slope <= 0:
        return 1.0
    return float(slope * (fb.n_words / fb.text_pages) / (fa.n_words / fa.text_pages))


def word_offsets(features: BookFeatures, positions: np.ndarray) -> np.ndarray:
    """Estimated word offset of the unique words at ``positions``: their page's start plus
    their share of its unique words, in full pages of the book's words per page. A page fit
    of a 5-page book cannot tell an abridgement's pieces (half the words) from the whole."""
    word_pages = np.asarray(features.unique.pages, np.int64)
    n_pages = int(features.n_pages)
    counts = np.bincount(word_pages, minlength=n_pages)[:n_pages]
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    per_page = features.n_words / features.text_pages
    pages = word_pages[positions]
    within = (positions - first[pages] + 0.5) / np.maximum(counts[pages], 1)
    return (pages + within) * per_page


def _neighbours_in_runs(
    neighbours: tuple[np.ndarray, np.ndarray] | None, runs: list[slice]
) -> tuple[float | None, float | None]:
    """(neighbour_agreement, neighbour_share) over the aligned items of the shared runs (all
    aligned items when there is no run; ``neighbours``: each item's, ``item_neighbours``):
    chance alignments outside the shared text would lower the agreement of an overlap or a
    subset."""
    if neighbours is None:
        return None, None
    agree, comparable = neighbours
    if runs:
        keep = np.concatenate([np.arange(r.start, r.stop) for r in runs])
        agree, comparable = agree[keep], comparable[keep]
    slots = 2 * comparable.size
    n = int(comparable.sum())
    if n == 0:
        return None, 0.0 if slots else None
    return float(agree.sum()) / n, n / slots
