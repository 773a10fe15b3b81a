"""Ground truth: what each generated book contains, and the relation of every related pair.

A book's content is stated as segments ``(work, start, end)`` of its works' token positions
(translations keep the positions of the words they translate). Relations then follow from the
segments alone, which keeps transitive cases right: two volumes of one set are disjoint and so
unrelated; a volume of a noisy reprint is a contiguous subset of the original; a translation of a
volume is a partial translation of the full original.

The same rule labels generated corpora and the variants of real books (`generator.real_variants`).
Containment is judged as a cataloguer judges it, at the scale of a book: a one-piece book is a
contiguous subset of another when ``CONTAINED_SHARE`` of its words lie in one stretch of the
other's (an anthology holding all of a volume but a paragraph holds the volume).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from bookdup.classify import RELATIONS as _CLASSIFIER_RELATIONS

# Ground truth names every related pair, so every class but UNRELATED.
RELATIONS = tuple(r for r in _CLASSIFIER_RELATIONS if r != "UNRELATED")
#: Share of a one-piece book's words that one stretch of another book must hold to contain it.
#: Google's "one book contains the other" and the real books' "wholly inside" are read on whole
#: books; 5 % is under the added matter (a preface 2-10 %, notes 2-8 %) that the truth already
#: ignores when it calls two editions one text.
CONTAINED_SHARE = 0.95


@dataclass(frozen=True)
class Segment:
    """Words ``[start, end)`` of one work."""

    work: str
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class BookRecord:
    """One generated book as the ground truth sees it (one line of ``books.jsonl``)."""

    id: str
    work: str  # the work it is an edition of; anthologies get their own
    language: str
    kind: str  # original, edition, reprint, copy, volume, abridged, translation, anthology
    segments: tuple[Segment, ...]
    pagination: tuple[Any, ...]  # equal keys + equal segments = the same page breaks
    rendering: int  # equal = identical page texts (exact copies)
    noise: float
    of: str | None = None  # the book it was derived from
    title: str = ""
    author: str = ""
    year: int = 0
    n_pages: int = 0
    file: str = ""
    format: str = "txt"
    extras: list[str] = field(default_factory=list)  # preface, notes, footnotes
    #: which text of its language the book prints: "" for the original's, one id per
    #: translation (two translations of a work into one language are two texts: SAME_WORK)
    text: str = ""

    @property
    def n_words(self) -> int:
        """Work words it contains (added material not counted)."""
        return sum(len(s) for s in self.segments)

    def to_json(self) -> dict[str, Any]:
        """The ``books.jsonl`` line."""
        return {
            "id": self.id,
            "work": self.work,
            "works": sorted({s.work for s in self.segments}),
            "language": self.language,
            "kind": self.kind,
            "of": self.of,
            "title": self.title,
            "author": self.author,
            "year": self.year,
            "file": self.file,
            "format": self.format,
            "segments": [[s.work, s.start, s.end] for s in self.segments],
            "n_words": self.n_words,
            "n_pages": self.n_pages,
            "noise": round(self.noise, 6),
            "extras": self.extras,
            "text": self.text,
        }


def _shared(a: BookRecord, b: BookRecord) -> int:
    return sum(
        max(0, min(x.end, y.end) - max(x.start, y.start))
        for x in a.segments
        for y in b.segments
        if x.work == y.work
    )


def contained_share(a: BookRecord, b: BookRecord) -> float:
    """Share of a's words inside one segment of b; 0 when a is several pieces (an anthology or
    an abridgement is never one contiguous stretch of another book)."""
    if len(a.segments) != 1:
        return 0.0
    x = a.segments[0]
    held = max(
        (min(x.end, y.end) - max(x.start, y.start) for y in b.segments if y.work == x.work),
        default=0,
    )
    return max(0, held) / max(1, len(x))


def _covered(a: BookRecord, b: BookRecord) -> bool:
    return _shared(a, b) == a.n_words


def _abridges(a: BookRecord, b: BookRecord) -> bool:
    """Is a's text pieces of one work that b holds whole, spread through it (an abridgement,
    not a volume: several pieces, and the last beyond the first half of b's text)?"""
    works = {s.work for s in a.segments}
    if len(a.segments) < 2 or len(works) != 1 or not _covered(a, b):
        return False
    held = next((y for y in b.segments if y.work in works), None)
    if held is None:
        return False
    return a.segments[-1].end - held.start > (held.end - held.start) / 2


def relation(a: BookRecord, b: BookRecord) -> dict[str, Any] | None:
    """The ground-truth line for a pair, or None when they share no text."""
    shared = _shared(a, b)
    if shared == 0:
        return None
    direction: str | None = None
    if a.language != b.language:
        rel = "TRANSLATION"
        a_in_b, b_in_a = _covered(a, b), _covered(b, a)
        if a_in_b != b_in_a:
            direction = "a_in_b" if a_in_b else "b_in_a"
    elif a.text != b.text:
        rel = "SAME_WORK"
    elif a.segments == b.segments:
        same_pages = a.pagination == b.pagination
        if a.rendering == b.rendering or (same_pages and a.noise == 0 == b.noise):
            # a reprint is another scan of the same pages; without noise it is the same text
            # on the same pages, page for page (at most a title page's year differs)
            rel = "EXACT"
        elif same_pages:
            rel = "SAME_PAGINATION"
        else:
            rel = "DIFFERENT_PAGINATION"
    elif _abridges(a, b):
        rel, direction = "ABRIDGED", "a_in_b"
    elif _abridges(b, a):
        rel, direction = "ABRIDGED", "b_in_a"
    else:
        share_a, share_b = contained_share(a, b), contained_share(b, a)
        if max(share_a, share_b) >= CONTAINED_SHARE:
            rel, direction = "CONTIGUOUS_SUBSET", "a_in_b" if share_a >= share_b else "b_in_a"
        else:
            rel = "OVERLAPPING_TEXT"
    return {
        "a": a.id,
        "b": b.id,
        "relation": rel,
        "direction": direction,
        "overlap": round(shared / min(a.n_words, b.n_words), 4),
        "coverage_a": round(shared / a.n_words, 4),
        "coverage_b": round(shared / b.n_words, 4),
        "noise_a": round(a.noise, 6),
        "noise_b": round(b.noise, 6),
        "languages": [a.language, b.language],
    }


def ground_truth(records: list[BookRecord]) -> list[dict[str, Any]]:
    """Every pair of books sharing text, ordered by (a, b) with a < b."""
    by_work: dict[str, list[BookRecord]] = defaultdict(list)
    for r in records:
        for w in {s.work for s in r.segments}:
            by_work[w].append(r)
    seen: set[tuple[str, str]] = set()
    out = []
    for group in by_work.values():
        for x, y in combinations(group, 2):
            a, b = (x, y) if x.id < y.id else (y, x)
            if (a.id, b.id) in seen:
                continue
            seen.add((a.id, b.id))
            line = relation(a, b)
            if line is not None:
                out.append(line)
    out.sort(key=lambda d: (d["a"], d["b"]))
    return out
