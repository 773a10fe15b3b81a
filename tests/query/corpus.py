"""The real books the read-side tests index, and their ground truth (tests/query/conftest.py)."""

from __future__ import annotations

ALICE = ("alice-en-pg11", "alice-en-rackham-pg28885", "alice-en-storyland-pg19033")
#: the complete English Alices (one edition cluster) and the abridged 1916 "Storyland" one,
#: an ABRIDGED edition of both: the same work, never the same edition
FULL_ALICE, STORYLAND = ALICE[:2], ALICE[2]
ALICE_DE = "alice-de-zimmermann-pg19778"
LOOKING_GLASS = "lookingglass-en-pg12"
TOM, TOM_PART1 = "tomsawyer-en-pg74", "tomsawyer-en-part1-pg7193"
CAROL = ("carol-en-pg46", "carol-en-rackham-pg24022")
WALDEN = "walden-en-pg205"
BOOKS = (*ALICE, ALICE_DE, LOOKING_GLASS, TOM, TOM_PART1, *CAROL, WALDEN)
EDITION_CLASSES = {"EXACT", "SAME_PAGINATION", "DIFFERENT_PAGINATION", "CONTIGUOUS_SUBSET"}


def key(a: str, b: str) -> str:
    return f"{a}|{b}" if a < b else f"{b}|{a}"
