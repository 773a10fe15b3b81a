"""Pairs of books, named one way whichever book came first: the dedup job, the candidate
searches, the evaluation and the read side key a pair alike, and word which of the two is the
part (`orient`) alike."""

from __future__ import annotations

from typing import Literal

__all__ = ["Pair", "Words", "orient", "pair_id", "pair_key", "part_index"]

Pair = tuple[str, str]


def pair_key(a: str, b: str) -> Pair:
    """The unordered pair as a tuple, the smaller id first."""
    return (a, b) if a <= b else (b, a)


def pair_id(a: str, b: str) -> str:
    """The relations index's document id of the pair: "a|b", the smaller id first."""
    first, second = pair_key(a, b)
    return f"{first}|{second}"


# A containment's direction names which book of the pair is the part, in three vocabularies:
# the core compares x with y, the relations index stores (a, b) with a < b, and a reader asks
# from one book's side. Each is (first book is the part, second book is the part).
Words = Literal["compared", "stored", "side"]
_WORDS: dict[str, tuple[str, str]] = {
    "compared": ("x_in_y", "y_in_x"),
    "stored": ("a_in_b", "b_in_a"),
    "side": ("this_in_other", "other_in_this"),
}
_PART = {word: i for pair in _WORDS.values() for i, word in enumerate(pair)}


def part_index(direction: str | None) -> int | None:
    """Which book of the pair is the part (0: the first, 1: the second), whatever the
    vocabulary; None when the direction names no part."""
    return _PART.get(direction or "")


def orient(direction: str | None, words: Words, *, flip: bool = False) -> str | None:
    """``direction`` (any vocabulary) in ``words``, for the pair the other way round when
    ``flip``; a direction that names no part passes through unchanged."""
    part = part_index(direction)
    return direction if part is None else _WORDS[words][part ^ flip]
