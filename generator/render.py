"""Typesetting: prose to lines of ~70 characters, lines to pages.

Re-pagination in the generator is a different line width and/or lines per page over the same
prose, the way two printings of one text differ.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from generator.wordmodel import PUNCT, SENTENCE_END, Prose


@dataclass(frozen=True)
class Layout:
    """Page geometry of one printing."""

    width: int = 70
    lines_per_page: int = 35


def render_lines(prose: Prose, width: int) -> list[str]:
    """Capitalise sentence starts, add punctuation, wrap greedily; blank lines part paragraphs."""
    if len(prose) == 0:
        return []
    tokens = prose.words.copy()
    starts = np.concatenate([[0], np.flatnonzero(prose.punct[:-1] >= SENTENCE_END) + 1])
    for i in starts.tolist():
        w = tokens[i]
        tokens[i] = w[:1].upper() + w[1:]
    tokens = (tokens + PUNCT[prose.punct]).tolist()
    # cum[k] = characters of tokens[:k] plus one space after each: tokens[i:e] fit in a line of
    # ``width`` iff cum[e] - cum[i] - 1 <= width, so each line is one bisection, not one per word
    cum = [
        0,
        *np.cumsum(np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens)) + 1).tolist(),
    ]
    para_ends = (np.flatnonzero(prose.para_end) + 1).tolist()
    text = " ".join(tokens)
    lines: list[str] = []
    i = 0
    for end in para_ends:
        while i < end:
            e = min(max(bisect_right(cum, cum[i] + width + 1) - 1, i + 1), end)
            lines.append(text[cum[i] : cum[e] - 1])
            i = e
        lines.append("")
    return lines[:-1]


def paginate(lines: list[str], lines_per_page: int, first_number: int = 1) -> list[str]:
    """Cut lines into pages, each ending with its page number (digits the normaliser must drop)."""
    pages = []
    for k, i in enumerate(range(0, len(lines), lines_per_page)):
        body = lines[i : i + lines_per_page]
        while body and not body[0]:
            body = body[1:]
        pages.append("\n".join([*body, "", str(first_number + k)]))
    return pages
