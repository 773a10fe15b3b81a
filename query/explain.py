"""Why two books are (or are not) related: every signal, every class's confidence, the decision
in words, and the alignment behind the pictures (``query.plots``).

The pair is verified again from the stored features, through the same policy as the dedup job
(``bookdup.relate.plan_pair``: same language, or through which lexicon; the collection's
boilerplate dropped first by ``store.features.prepare_features``, as the job's feature cache
drops it), but with no score floor, so even an unrelated pair gets its
evidence. The relation stored by the last dedup run, if any, is returned beside it.

Alignment data are positions in each book's unique-word sequence (reading order) and the page
of each aligned word; for a translation, the source word and the target word it matched (the
dictionary gloss the review page shows on hover). They are the core's: the verification's own
alignment (``Verification.positions``) cut into the runs and frames the classifier weighed
(``bookdup.signals.shared_runs``), so a region's ``boilerplate`` flag and the words of the text
regions are those of the signals (explain used to align again and cut with a rule of its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bookdup.classify import CLASSIFIER_PARAMS, describe_local, describe_neighbours
from bookdup.compare import (
    describe_relation,
    shared_page_ranges,
    translated_first,
    verify_features,
)
from bookdup.dictionary import Dictionary
from bookdup.features import BookFeatures
from bookdup.orderstat import describe_order
from bookdup.pairs import orient, pair_id
from bookdup.relate import plan_pair
from bookdup.signals import Collection, frame_test, item_neighbours, shared_runs, word_offsets
from bookdup.verify import Verification
from bookdup.vocabulary import direction_words, part_direction, relation_sentence, signal_label
from query.context import READ_RETRY_S, BadRequest, NotFound, ReadSide
from query.display import display_title, relation_label
from query.related import page_mapping
from store.connection import missing_ok
from store.features import get_features, prepare_features
from store.holders import IndexedBooks
from store.retry import with_retries

BINS = 60
#: Word pairs returned for glosses and the dot plot's hover (the plot draws every point).
MAX_WORD_PAIRS = 3000
META_FIELDS = ["book_id", "title", "author", "language", "year", "n_pages", "excerpt"]


@dataclass(frozen=True)
class Alignment:
    """One LCS of the two unique-word sequences: positions and pages of the aligned words."""

    ax: np.ndarray  # positions in a's sequence
    ay: np.ndarray  # positions in b's sequence
    words_a: list[str]
    words_b: list[str]
    #: (agreeing, comparable) neighbour words of each aligned word, as the core read them
    neighbours: tuple[np.ndarray, np.ndarray] | None = None


def align(
    fa: BookFeatures, fb: BookFeatures, verification: Verification, dictionary: Dictionary | None
) -> Alignment:
    """The core's alignment (``verification``, from ``verify_features`` on (fa, fb) with
    ``dictionary``) as positions and words of a and b: the words the classifier aligned, the
    book in its source language being the translated one whichever of a and b it is."""
    positions = verification.positions
    if positions is None:
        raise ValueError("the verification keeps no aligned positions: verify the pair here")
    px, py = (np.asarray(p, dtype=np.intp) for p in positions)
    ax, ay = (px, py) if translated_first(fa, fb, dictionary) else (py, px)
    wa, wb = list(fa.unique.words or []), list(fb.unique.words or [])
    words_a = [wa[i] for i in ax.tolist()] if wa else []
    words_b = [wb[i] for i in ay.tolist()] if wb else []
    return Alignment(ax, ay, words_a, words_b, item_neighbours(verification, ax.size))


def fractional_pages(pages: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Page (1-based) of each position, plus its place inside the page as a fraction."""
    if positions.size == 0:
        return np.zeros(0)
    counts = np.bincount(pages, minlength=int(pages.max(initial=0)) + 1)
    first = np.concatenate([[0], np.cumsum(counts)])[pages[positions]]
    within = (positions - first) / np.maximum(counts[pages[positions]], 1)
    return pages[positions] + 1 + within


def regions(
    fa: BookFeatures, fb: BookFeatures, al: Alignment, collection: Collection | None = None
) -> list[dict[str, Any]]:
    """Each dense run: page ranges (1-based, inclusive) of both books, positions, word count,
    and whether it is shared boilerplate (a frame) rather than shared text: the runs and frames
    of the core (``bookdup.signals.shared_runs``), the ones the classifier weighed, the
    ``collection`` beside the pair asked about the frames as the dedup job asks it."""
    pa = fa.unique.pages[al.ax].astype(np.int64)
    pb = fb.unique.pages[al.ay].astype(np.int64)
    offsets = (word_offsets(fa, al.ax), word_offsets(fb, al.ay))
    held = frame_test(fa, fb, (al.ax, al.ay), collection)
    text, frames = shared_runs(
        pa,
        pb,
        fa,
        fb,
        offsets=offsets,
        held_apart=held,
        positions=(al.ax, al.ay),
        neighbours=al.neighbours,
    )
    tagged = sorted([(r, False) for r in text] + [(r, True) for r, _side in frames], key=_start)
    out = []
    for r, boilerplate in tagged:
        s, e = r.start, r.stop
        out.append(
            {
                "a_pages": [int(pa[r].min()) + 1, int(pa[r].max()) + 1],
                "b_pages": [int(pb[r].min()) + 1, int(pb[r].max()) + 1],
                "a_positions": [int(al.ax[s]), int(al.ax[e - 1])],
                "b_positions": [int(al.ay[r].min()), int(al.ay[r].max())],
                "words": e - s,
                "slice": [s, e],
                "boilerplate": boilerplate,
            }
        )
    return out


def _start(tagged: tuple[slice, bool]) -> int:
    return int(tagged[0].start)


def bars(n: int, spans: list[list[int]], bins: int = BINS) -> list[float]:
    """DUPNIQ-style strip: the share of each bin (of a book's unique words, in reading order)
    inside the given aligned spans (inclusive positions)."""
    if n == 0:
        return [0.0] * bins
    covered = np.zeros(n, dtype=bool)
    for lo, hi in spans:
        covered[lo : hi + 1] = True
    edges = np.linspace(0, n, bins + 1).astype(int)
    return [
        round(float(covered[lo:hi].mean()), 3) if hi > lo else 0.0
        for lo, hi in zip(edges[:-1], edges[1:], strict=True)
    ]


def alignment_data(
    fa: BookFeatures, fb: BookFeatures, al: Alignment, collection: Collection | None = None
) -> dict[str, Any]:
    """What the pictures and the page need, JSON-able. ``kind`` of each aligned word:
    0 chance, 1 shared text (a dense run), 2 shared boilerplate (a frame run)."""
    regs = regions(fa, fb, al, collection)
    kind = np.zeros(al.ax.size, dtype=np.int8)
    for r in regs:
        kind[r["slice"][0] : r["slice"][1]] = 2 if r["boilerplate"] else 1
    text = [r for r in regs if not r["boilerplate"]]
    frames = [r for r in regs if r["boilerplate"]]
    step = max(1, al.ax.size // MAX_WORD_PAIRS)
    na, nb = int(fa.unique.hashes.size), int(fb.unique.hashes.size)
    return {
        "a_page": np.round(fractional_pages(fa.unique.pages, al.ax), 3).tolist(),
        "b_page": np.round(fractional_pages(fb.unique.pages, al.ay), 3).tolist(),
        "kind": kind.tolist(),
        "words": [[wa, wb] for wa, wb in zip(al.words_a[::step], al.words_b[::step], strict=True)],
        "words_step": step,
        "regions": regs,
        "a_bars": bars(na, [r["a_positions"] for r in text]),
        "b_bars": bars(nb, [r["b_positions"] for r in text]),
        "a_boilerplate_bars": bars(na, [r["a_positions"] for r in frames]),
        "b_boilerplate_bars": bars(nb, [r["b_positions"] for r in frames]),
        "a_n_unique": na,
        "b_n_unique": nb,
    }


def _load(rs: ReadSide, book_id: str) -> tuple[dict[str, Any], BookFeatures]:
    doc = with_retries(READ_RETRY_S)(missing_ok(rs.client).get)(
        index=rs.names.books, id=book_id, source=META_FIELDS
    )
    features = get_features(rs.client, rs.names.books, book_id) if doc.body.get("found") else None
    if features is None:
        raise NotFound(f"no book with id {book_id!r} in {rs.names.books}")
    meta = dict(doc["_source"])
    meta["display_title"] = display_title(meta)
    meta.pop("excerpt", None)
    return meta, prepare_features(features, rs.state().stop)


def _stored(rs: ReadSide, a: str, b: str) -> dict[str, Any] | None:
    doc = with_retries(READ_RETRY_S)(missing_ok(rs.client).get)(
        index=rs.names.relations, id=pair_id(a, b), source_excludes=["evidence", "signals"]
    )
    if not doc.body.get("found"):
        return None
    src = doc["_source"]
    return {
        "relation": src["relation"],
        "confidence": src["confidence"],
        "direction": orient(src.get("direction"), "side", flip=src["a"] != a),
        "its": src["its"],
        "cs": src["cs"],
        "run_id": src.get("run_id"),
    }


def explain(rs: ReadSide, a: str, b: str) -> dict[str, Any]:
    """Everything about the pair (a, b), seen from a. NotFound for an unknown id."""
    if a == b:
        raise BadRequest("a and b are the same book: give two different ids")
    meta_a, fa = _load(rs, a)
    meta_b, fb = _load(rs, b)
    plan = plan_pair(fa, fb, rs.lexicons)
    with rs.compute_lock:
        dictionary = plan.dictionary if plan is not None else None
        verification = verify_features(fa, fb, dictionary=dictionary, threshold=None)
        assert verification is not None  # no floor: every pair is verified
        books = IndexedBooks(rs.client, rs.names.books)  # as the dedup job asks about frames
        result = describe_relation(fa, fb, verification, dictionary, collection=books).to_dict()
        shared_pages = shared_page_ranges(fa, fb, verification, dictionary, books)
        al = align(fa, fb, verification, dictionary)
        data = alignment_data(fa, fb, al, books)
    direction = part_direction(result["relation"], result.get("direction"), result["signals"])
    result["direction"] = orient(direction, "side")
    result["direction_text"] = direction_words(result["direction"], result["relation"])
    out = {
        "a": meta_a,
        "b": meta_b,
        "comparable": plan is not None,
        **result,
        "label": relation_label(result["relation"]),
        "page_mapping": page_mapping(result["signals"], this_is_x=True),
        "alignment": data,
        "shared_pages": shared_pages,
        "signal_labels": {k: signal_label(k) for k in result["signals"] or {}},
        "stored": _stored(rs, a, b),
    }
    out["decision"] = decision_path(out)
    out["verdict"] = verdict(out)
    return out


def _pct(v: float) -> str:
    return f"{100 * v:.0f} %"


def decision_path(e: dict[str, Any]) -> list[str]:
    """The classifier's decision in sentences, in the order it is taken."""
    s, conf = e["signals"], e["confidences"]
    steps = []
    if not e["comparable"]:
        langs = " and ".join(e["languages"])
        return [f"The books are in {langs} and no installed dictionary links them: not compared."]
    if e["dictionary"]:
        source = e["dictionary"].split("-")[0]
        steps.append(
            f"Languages differ ({' and '.join(e['languages'])}): the unique words of the book "
            f"in {source} were translated with the {e['dictionary']} dictionary (TRANS "
            "scores); only TRANSLATION can win."
        )
    else:
        steps.append("Same language: unique words compared as they are (DUPNIQ scores).")
    steps.append(
        f"{e['x']} and {e['y']} unique words, {e['shared']} shared, {e['lcs']} aligned in order: "
        f"its {e['its']:.3f}, cs {e['cs']:.3f}."
    )
    if e["dictionary"]:
        steps.append(describe_order(e.get("order"), ("A", "B")))
    if s:
        steps.append(
            f"Shared text covers {_pct(s['coverage_x'])} of A and {_pct(s['coverage_y'])} of B "
            f"({s['n_page_matches']} aligned words in dense runs); book similarity "
            f"{s['book_similarity']:.2f}, page similarity {s['page_similarity']:.2f}."
        )
        steps += filter(None, [describe_local(s), describe_neighbours(s)])
    ranked = sorted(conf.items(), key=lambda kv: -kv[1])
    others = ", ".join(f"{k} {v:.2f}" for k, v in ranked[1:4])
    steps.append(f"Highest confidence: {ranked[0][0]} {ranked[0][1]:.2f} (next: {others}).")
    stored = e.get("stored")
    if stored and stored["relation"] != e["relation"]:
        steps.append(
            f"The last dedup run stored {stored['relation']} for this pair (computed the "
            "other way round or with another collection's boilerplate list)."
        )
    return steps


def _range(pages: list[int]) -> str:
    return f"page {pages[0]}" if pages[0] == pages[1] else f"pages {pages[0]}–{pages[1]}"


def verdict(e: dict[str, Any]) -> str:
    """One line a librarian can act on: the class and direction in the words every reader
    uses (``bookdup.vocabulary.relation_sentence``), then where the shared text lies (its
    dense part, ``shared_pages``, as ``bookdup.compare.shared_page_ranges`` finds it)."""
    rel = e["relation"]
    regs = [r for r in e["alignment"]["regions"] if not r["boilerplate"]]
    s = e["signals"] or {}
    a_share, b_share = s.get("coverage_x", 0.0), s.get("coverage_y", 0.0)
    if rel == "UNRELATED" or not regs:
        return (
            f"{relation_sentence('UNRELATED', None)}: {e['lcs']} of their unique words align "
            "in order, no more than chance or shared boilerplate."
        )
    head = relation_sentence(rel, e["direction"])
    # the dense aligned part (the core's): a stray block at either end does not stretch it
    dense = e.get("shared_pages")
    if dense:
        a_span, b_span = dense["a"], dense["b"]
    else:
        a_span = [min(r["a_pages"][0] for r in regs), max(r["a_pages"][1] for r in regs)]
        b_span = [min(r["b_pages"][0] for r in regs), max(r["b_pages"][1] for r in regs)]
    if rel == "CONTIGUOUS_SUBSET" and e["direction"] == "this_in_other":
        return f"{head}: it is {_range(b_span)} of B; the shared text covers {_pct(a_share)} of A."
    if rel == "CONTIGUOUS_SUBSET" and e["direction"] == "other_in_this":
        return f"{head}: it is {_range(a_span)} of A; the shared text covers {_pct(b_share)} of B."
    if rel == "TRANSLATION":
        return (
            f"{head}: {_range(a_span)} of A match {_range(b_span)} of B "
            f"({' and '.join(e['languages'])}, TRANS-its {e['its']:.2f}); the shared text "
            f"covers {_pct(a_share)} of A and {_pct(b_share)} of B."
        )
    if rel == "ABRIDGED" and e["direction"] == "this_in_other":
        return (
            f"{head}: its text follows B from {_range(b_span)}, cut throughout (A holds "
            f"{_pct(1 / s.get('text_ratio', 1.0))} of B's words where they align)."
        )
    if rel == "ABRIDGED" and e["direction"] == "other_in_this":
        return (
            f"{head}: its text follows A from {_range(a_span)}, cut throughout (B holds "
            f"{_pct(s.get('text_ratio', 1.0))} of A's words where they align)."
        )
    if rel == "SAME_WORK":
        agree = s.get("neighbour_agreement") or 0.0
        # the agreement above which SAME_WORK has no confidence (its ramp decreases)
        editions = max(CLASSIFIER_PARAMS.same_work_agreement)
        return (
            f"{head}: {_range(a_span)} of A follow {_range(b_span)} of B name by name, but "
            f"only {_pct(agree)} of the words around them are the same (other editions of one "
            f"text: over {_pct(editions)})."
        )
    if rel == "OVERLAPPING_TEXT":
        return (
            f"{head}: {_range(a_span)} of A ≈ {_range(b_span)} of B "
            f"({len(regs)} passage{'s' if len(regs) > 1 else ''})."
        )
    return f"{head}: the shared text covers {_pct(a_share)} of A and {_pct(b_share)} of B."
