"""One vocabulary for relation classes and their directions, used by every reader of a relation.

``bookdup compare``, ``related``/``match``/``explain`` (``query/``) and the review page and API
(``server/``) all word a class and its direction with `relation_sentence`, so an abridgement
reads as one everywhere and a partial relation always names the book that is the part.

Directions are accepted in every spelling the code base uses: ``x_in_y`` / ``y_in_x`` (a
comparison), ``a_in_b`` / ``b_in_a`` (a stored relation) and ``this_in_other`` /
``other_in_this`` (seen from one book); the first book named is the part in ``*_in_*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bookdup.pairs import part_index

CLASS_LABELS = {
    "EXACT": "exact duplicate",
    "SAME_PAGINATION": "same edition, same pagination",
    "DIFFERENT_PAGINATION": "same text, different pagination",
    "CONTIGUOUS_SUBSET": "part of / contains",
    "ABRIDGED": "abridged edition",
    "OVERLAPPING_TEXT": "overlapping text",
    "SAME_WORK": "same work, another translation",
    "TRANSLATION": "translation",
    "UNRELATED": "unrelated",
}

#: Classes where one book is a part of the other: "{part} … {whole}".
PART_SENTENCES = {
    "CONTIGUOUS_SUBSET": "{part} is contained in {whole}",
    "ABRIDGED": "{part} is an abridgement of {whole}",
    "TRANSLATION": "{part} is a partial translation: it matches only a part of {whole}",
}

#: Classes without a part: "{a} … {b}".
PAIR_SENTENCES = {
    "EXACT": "{a} and {b} are exact duplicates",
    "SAME_PAGINATION": "{a} and {b} are the same edition, page for page",
    "DIFFERENT_PAGINATION": "{a} and {b} are the same text with different pagination",
    "CONTIGUOUS_SUBSET": "{a} and {b} share a contiguous block of text",
    "ABRIDGED": "one of {a} and {b} is an abridgement of the other",
    "OVERLAPPING_TEXT": "{a} and {b} share some text",
    "SAME_WORK": "{a} and {b} are two translations or retellings of one work",
    "TRANSLATION": "{a} and {b} are translations of each other",
    "UNRELATED": "{a} and {b} are not related",
}

#: The page signals (``bookdup.signals.RelationSignals``) in plain words, A and B as everywhere
#: else (the JSON keeps the papers' x, y): ``bookdup compare`` prints these lines, a pair of
#: keys on one line as "A / B".
SIGNAL_LINES: tuple[tuple[str, str | tuple[str, ...]], ...] = (
    ("book similarity (min-hash Jaccard)", "book_similarity"),
    ("page-based book similarity", "page_similarity"),
    ("pages matched (smaller book)", "page_match_fraction"),
    ("page agreement", "page_agreement"),
    ("page fit: page of B ≈ slope × page of A + offset", ("slope", "offset")),
    ("page fit residual (pages)", "fit_residual"),
    ("pages in A minus pages in B", "delta_pages"),
    ("B's last page against the page fit (pages)", "delta_page_count"),
    ("consecutive pages matching together", "consecutive_corr"),
    ("share of A / B covered by shared text", ("coverage_x", "coverage_y")),
    ("span of the shared text in A / B", ("span_x", "span_y")),
    ("contiguity of the shared text in A / B", ("contiguity_x", "contiguity_y")),
    ("neighbour words agreeing / comparable", ("neighbour_agreement", "neighbour_share")),
)

#: Each signal on its own (the review page's table, the API's ``signal_labels``).
SIGNAL_LABELS = {
    "same_content": "identical content",
    "book_similarity": "book similarity (min-hash Jaccard)",
    "page_similarity": "page-based book similarity",
    "page_match_fraction": "pages matched (smaller book)",
    "page_agreement": "page agreement",
    "n_pages_x": "pages in A",
    "n_pages_y": "pages in B",
    "n_page_matches": "aligned words in shared text",
    "slope": "page fit: slope (page of B per page of A)",
    "offset": "page fit: offset (pages of B)",
    "fit_residual": "page fit residual (pages)",
    "delta_pages": "pages in A minus pages in B",
    "delta_page_count": "B's last page against the page fit (pages)",
    "consecutive_corr": "consecutive pages matching together",
    "sequential_fraction": "matched pages following in order",
    "coverage_x": "share of A covered by shared text",
    "coverage_y": "share of B covered by shared text",
    "span_x": "span of the shared text in A",
    "span_y": "span of the shared text in B",
    "contiguity_x": "contiguity of the shared text in A",
    "contiguity_y": "contiguity of the shared text in B",
    "x": "unique words in A",
    "y": "unique words in B",
    "shared": "unique words shared",
    "lcs": "shared unique words in the same order",
    "cs": "in-order words against both books' sizes (cs)",
    "its": "in-order words, log scale (its)",
    "order_z": "order against chance (z)",
    "order_lcs": "shared unique words in order, as the order was read",
    "local_score": "densest block of words in order against chance (-log10)",
    "neighbour_agreement": "neighbour words agreeing",
    "neighbour_share": "neighbour words comparable",
    "text_ratio": "words of B per word of A where they align",
    "page_coverage_x": "share of A covered by shared text, pages counted whole",
    "page_coverage_y": "share of B covered by shared text, pages counted whole",
    "open_end_x": "share of A at its end beyond the shared text",
    "open_end_y": "share of B at its end beyond the shared text",
    "open_end_steps_x": "that end of A in steps between aligned words",
    "open_end_steps_y": "that end of B in steps between aligned words",
    "open_end_reread_x": "that end of A read again beside the shared text in B, matches a step",
    "open_end_reread_y": "that end of B read again beside the shared text in A, matches a step",
    "page_breaks": "page breaks of A and B along the shared text",
    "page_breaks_apart": "of them, with no break of the other book within one aligned word",
    "shared_held_apart": "the shared text held by other books apart from both, as boilerplate",
}


def signal_label(key: str) -> str:
    """The plain name of one signal (an unknown key: its words)."""
    return SIGNAL_LABELS.get(key, key.replace("_", " "))


#: A translation is partial when the shorter book has at most this share of the longer one's
#: pages (Werther's book 1 and book 2 against the whole: 0.50 and 0.63; complete translations
#: of one text 0.69-1.0, a French text running longer than the English) ...
PARTIAL_TRANSLATION_PAGES = 0.65
#: ... and the shorter book is the better covered one, the longer one's coverage below this
#: share of it (translated coverages are noisy: 0.64-0.94 for complete translations).
PARTIAL_TRANSLATION_COVER = 0.8


def relation_label(relation: str) -> str:
    """The short name of a class ("abridged edition")."""
    return CLASS_LABELS.get(relation, relation.lower().replace("_", " "))


def relation_sentence(
    relation: str,
    direction: str | None,
    a: str = "A",
    b: str = "B",
    *,
    a_whole: str | None = None,
    b_whole: str | None = None,
) -> str:
    """The relation of book ``a`` to book ``b`` as one sentence (no final period).

    ``direction`` says which book is the part for the partial classes (None: no part). When a
    book is named differently as the whole (``"this one"`` for ``"this book"``),
    ``a_whole`` / ``b_whole`` give that name.
    """
    template = PART_SENTENCES.get(relation)
    part = part_index(direction)
    if template and part == 0:
        return template.format(part=a, whole=b_whole or b)
    if template and part == 1:
        return template.format(part=b, whole=a_whole or a)
    generic = PAIR_SENTENCES.get(relation, "{a} and {b}: " + relation_label(relation))
    return generic.format(a=a, b=b)


def direction_words(direction: str | None, relation: str | None) -> str:
    """A direction seen from one book ("this book is an abridgement of the other"); "" when
    the relation has no part."""
    if relation not in PART_SENTENCES or part_index(direction) is None:
        return ""
    return relation_sentence(
        relation, direction, "this book", "the other book", a_whole="this one", b_whole="the other"
    )


def seen_from_sentence(relation: str, direction: str | None) -> str:
    """The relation seen from one book as a sentence ("This book is an abridgement of the
    other book."; "This book and the other book are exact duplicates."): the verdict of each
    panel of ``related --plot``, the words of `direction_words` for the partial classes."""
    text = relation_sentence(
        relation, direction, "this book", "the other book", a_whole="this one", b_whole="the other"
    )
    return text[:1].upper() + text[1:] + "."


def verdict_sentence(relation: str, direction: str | None, a: str = "A", b: str = "B") -> str:
    """`relation_sentence` as a sentence: capitalised, with a final period."""
    text = relation_sentence(relation, direction, a, b)
    return text[:1].upper() + text[1:] + "."


def part_direction(
    relation: str, direction: str | None, signals: Mapping[str, Any] | None
) -> str | None:
    """The classifier's direction, or for a TRANSLATION which book is the part (``x_in_y`` /
    ``y_in_x``) from the coverages in ``signals`` (None: a complete translation)."""
    if direction or relation != "TRANSLATION" or not signals:
        return direction
    values = [signals.get(k) for k in ("coverage_x", "coverage_y", "n_pages_x", "n_pages_y")]
    if not all(isinstance(v, int | float) and v > 0 for v in values):
        return direction
    cx, cy, px, py = (float(v) for v in values)  # type: ignore[arg-type]
    x_shorter = px <= py
    short_cov, long_cov = (cx, cy) if x_shorter else (cy, cx)
    if min(px, py) > PARTIAL_TRANSLATION_PAGES * max(px, py):
        return direction
    if long_cov >= PARTIAL_TRANSLATION_COVER * short_cov:
        return direction
    return "x_in_y" if x_shorter else "y_in_x"
