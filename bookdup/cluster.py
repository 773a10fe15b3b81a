"""Union-find clustering of accepted book pairs into edition and work clusters.

Cluster ids are written back to the index and used for `collapse`, so they must be
deterministic (same input, any order → same ids) and stable under incremental updates
(adding a book renames only the cluster it joins). Both follow from deriving the id from the
cluster's smallest member id alone.

Id form: ``"c-" + sha1(min_member_id)[:24]``. A hash rather than the member id itself keeps
cluster ids in their own namespace (a cluster id is never mistaken for a book id in a
`term` query) and fixed-length whatever the book ids look like; 96 bits make a collision
between two clusters negligible even at 10^8 clusters (p ≈ n²/2^97 ≈ 10^-13).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from bookdup.pairs import part_index

#: Same-language relations that make two books editions of one another.
EDITION_RELATIONS = frozenset(
    {"EXACT", "SAME_PAGINATION", "DIFFERENT_PAGINATION", "CONTIGUOUS_SUBSET"}
)
#: Relations that put two books in one work: editions, abridgements, other translations in the
#: same language (SAME_WORK: never one edition, whatever else they share) and translations.
#: An abridgement is not an edition of the full text: a catalogue must not offer one for the
#: other. OVERLAPPING_TEXT is
#: deliberately absent from both sets: an anthology overlaps every work it reprints, and
#: union-find is transitive, so one anthology edge per story would chain unrelated works
#: into a single cluster.
WORK_RELATIONS = EDITION_RELATIONS | {"ABRIDGED", "SAME_WORK", "TRANSLATION"}


class UnionFind:
    """Disjoint sets over string ids, with path compression and union by rank."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._parent: dict[str, str] = {}
        self._rank: dict[str, int] = {}
        for i in ids:
            self.add(i)

    def add(self, x: str) -> None:
        """Make ``x`` a singleton set if it is not known yet."""
        if x not in self._parent:
            self._parent[x] = x
            self._rank[x] = 0

    def find(self, x: str) -> str:
        """Representative of ``x``'s set (``x`` is added if unknown)."""
        self.add(x)
        root = x
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[x] != root:  # path compression
            self._parent[x], x = root, self._parent[x]
        return root

    def union(self, a: str, b: str) -> str:
        """Merge the sets of ``a`` and ``b``; returns the new representative."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        if self._rank[ra] < self._rank[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        if self._rank[ra] == self._rank[rb]:
            self._rank[ra] += 1
        return ra

    def groups(self) -> dict[str, list[str]]:
        """Representative → sorted members."""
        out: dict[str, list[str]] = {}
        for x in self._parent:
            out.setdefault(self.find(x), []).append(x)
        for members in out.values():
            members.sort()
        return out

    def __contains__(self, x: object) -> bool:
        return x in self._parent

    def __len__(self) -> int:
        return len(self._parent)


def cluster_id(members: Iterable[str]) -> str:
    """Stable id of a cluster: a hash of its smallest member id (see module docstring)."""
    smallest = min(members)
    return "c-" + hashlib.sha1(smallest.encode("utf-8")).hexdigest()[:24]


def assign_clusters(book_ids: Iterable[str], edges: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Map every book (from ``book_ids`` and from the edges' ends) to its cluster id.

    Singletons get their own id, so every book in the index carries a cluster id and
    `collapse` on it never drops a book.
    """
    uf = UnionFind(book_ids)
    for a, b in edges:
        uf.union(a, b)
    result: dict[str, str] = {}
    for members in uf.groups().values():
        cid = cluster_id(members)
        for m in members:
            result[m] = cid
    return result


def _relation_name(rel: Any) -> str:
    """Relation name from a ``Relation``, a compare dict, or a plain string."""
    if isinstance(rel, str):
        return rel
    if isinstance(rel, Mapping):
        return str(rel["relation"])
    return str(rel.relation)


def _edges(
    relations: Iterable[tuple[str, str, Any]], accepted: frozenset[str]
) -> list[tuple[str, str]]:
    return [(a, b) for a, b, rel in relations if _relation_name(rel) in accepted]


def edition_edges(relations: Iterable[tuple[str, str, Any]]) -> list[tuple[str, str]]:
    """Pairs ``(a, b, relation)`` that join edition clusters.

    The classifier only emits edition classes for same-language pairs, so filtering by
    relation name is enough. ``relation`` may be a ``Relation``, a compare dict or a name.
    """
    return _edges(relations, EDITION_RELATIONS)


def work_edges(relations: Iterable[tuple[str, str, Any]]) -> list[tuple[str, str]]:
    """Pairs ``(a, b, relation)`` that join work clusters (editions and translations)."""
    return _edges(relations, WORK_RELATIONS)


# --- The representative of a cluster ------------------------------------------------------
#
# Catalog search shows one book per cluster; that book should be the one a reader wants: the
# container rather than one of its parts, the full text rather than an abridgement, the
# cleanest scan among editions of the same text. The dedup job decides it here, once per
# clustering, and stores a rank per book (0 = the representative of its edition cluster); the
# read side only sorts on it.

#: Relations in which one book holds the other's text; the stored direction names the holder.
CONTAINMENT_RELATIONS = frozenset({"CONTIGUOUS_SUBSET", "ABRIDGED"})


def contained_books(relations: Iterable[tuple[str, str, str, str | None]]) -> set[str]:
    """Books that are a part or an abridgement of another book.

    ``relations``: ``(a, b, relation, direction)`` with the direction as stored (``a_in_b`` /
    ``b_in_a``) or as compared (``x_in_y`` / ``y_in_x``). A containment without a direction
    says nothing about which book is the part, so it marks neither.
    """
    held: set[str] = set()
    for a, b, relation, direction in relations:
        part = part_index(direction)
        if relation in CONTAINMENT_RELATIONS and part is not None:
            held.add((a, b)[part])
    return held


def scan_noise(n_words: int | None, n_unique: int | None) -> float:
    """Words seen once per word of text: OCR errors turn common words into one-off strings,
    so among editions of the same text (about the same length) the noisier scan has more.
    Unknown counts rank last (1.0)."""
    if not n_words or n_unique is None:
        return 1.0
    return n_unique / n_words


def representative_key(
    book_id: str, contained: set[str], stats: Mapping[str, tuple[int | None, int | None]]
) -> tuple[bool, float, int, str]:
    """Sort key of a cluster member, best first: not a part or an abridgement of another
    book, then the least noisy scan, then the longest text, then the smallest id (stable)."""
    n_words, n_unique = stats.get(book_id, (None, None))
    noise = round(scan_noise(n_words, n_unique), 4)  # same scan twice: ties go to length
    return (book_id in contained, noise, -(n_words or 0), book_id)


def representative_ranks(
    clusters: Mapping[str, str],
    contained: set[str],
    stats: Mapping[str, tuple[int | None, int | None]],
) -> dict[str, int]:
    """Every book's place in its cluster, 0 for the cluster's representative.

    ``clusters``: book → cluster id (``assign_clusters``); ``stats``: book →
    ``(n_words, n_unique)``. Deterministic whatever the input order.
    """
    members: dict[str, list[str]] = {}
    for book_id, cid in clusters.items():
        members.setdefault(cid, []).append(book_id)
    ranks: dict[str, int] = {}
    for group in members.values():
        group.sort(key=lambda b: representative_key(b, contained, stats))
        for rank, book_id in enumerate(group):
            ranks[book_id] = rank
    return ranks
