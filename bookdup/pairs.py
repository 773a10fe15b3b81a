"""Pairs of books, named one way whichever book came first: the dedup job, the candidate
searches, the evaluation and the read side key a pair alike."""

from __future__ import annotations

__all__ = ["Pair", "pair_id", "pair_key"]

Pair = tuple[str, str]


def pair_key(a: str, b: str) -> Pair:
    """The unordered pair as a tuple, the smaller id first."""
    return (a, b) if a <= b else (b, a)


def pair_id(a: str, b: str) -> str:
    """The relations index's document id of the pair: "a|b", the smaller id first."""
    first, second = pair_key(a, b)
    return f"{first}|{second}"
