"""The heaviest translated terms of a book, from a lexicon prepared once per job.

A translated candidate query asks for the ``target`` heaviest translations of a book's stems:
each weighs 1 / (translations of its source stem), or a fixed weight for a stem the lexicon
does not translate (it stands as it is); of equal weights the smaller hash comes first; only
hashes the queried field indexes (divisible by its modulus) and not in the job's stop list
count. Translating all of a long book's stems and sorting them by weight per query was the
search thread's main cost (docs/EVALUATION.md, issue 28). Here the lexicon's translations
are filtered by modulus and stop list once, each weight is replaced by its rank among the
few weights there are, and a book's terms are picked by sorting (rank << 32 | hash) keys:
one partial sort of integers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bookdup.arrays import isin_sorted
from bookdup.translate import HashedLexicon

_LOW = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class WeightedLexicon:
    """A hashed lexicon reduced to the translations a query may ask, with weight ranks.

    ``targets[starts[i]:starts[i + 1]]`` are the asked translations of source ``keys[i]``,
    all weighing ``weights[ranks[i]]``; an untranslated stem weighs ``weights[kept_rank]``.
    ``weights`` is descending, so a smaller rank is a heavier term."""

    keys: np.ndarray  # uint32, sorted: source stem hashes
    starts: np.ndarray  # int64, keys.size + 1
    targets: np.ndarray  # uint32 asked translations grouped by key
    ranks: np.ndarray  # int64 per key
    weights: np.ndarray  # float64, distinct, descending
    kept_rank: int
    stop: np.ndarray  # sorted uint32 hashes never asked
    modulus: int


def weighted_lexicon(
    lexicon: HashedLexicon, stop: np.ndarray, modulus: int, kept_weight: float
) -> WeightedLexicon:
    """``lexicon``'s translations held by a field indexed with ``modulus``, minus ``stop``."""
    counts = np.diff(lexicon.starts)
    per_key = 1.0 / counts  # the same float64 as 1.0 / (a source word's translations)
    weights = np.unique(np.append(per_key, kept_weight))[::-1]
    rank_of = weights.size - 1 - np.searchsorted(weights[::-1], per_key)
    asked = (lexicon.targets % np.uint32(modulus) == 0) & ~isin_sorted(lexicon.targets, stop)
    starts = np.concatenate([[0], np.cumsum(asked)])[lexicon.starts]
    kept_rank = int(weights.size - 1 - np.searchsorted(weights[::-1], kept_weight))
    return WeightedLexicon(
        lexicon.keys,
        starts.astype(np.int64),
        lexicon.targets[asked],
        rank_of.astype(np.int64),
        weights,
        kept_rank,
        stop,
        modulus,
    )


def _ranked_keys(table: WeightedLexicon, stems: np.ndarray) -> np.ndarray:
    """(rank << 32 | hash) of every asked translation of ``stems`` and of every asked stem
    the lexicon does not translate (a repeated stem repeats its keys: pass distinct stems)."""
    stems = np.asarray(stems, dtype=np.uint32)
    if table.keys.size:
        slot = np.minimum(np.searchsorted(table.keys, stems), table.keys.size - 1)
        hit = table.keys[slot] == stems
    else:
        slot, hit = np.zeros(stems.size, np.int64), np.zeros(stems.size, bool)
    kept = stems[~hit]
    kept = kept[(kept % np.uint32(table.modulus) == 0) & ~isin_sorted(kept, table.stop)]
    slot = slot[hit]
    first, n = table.starts[slot], table.starts[slot + 1] - table.starts[slot]
    within = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    hashes = table.targets[np.repeat(first, n) + within].astype(np.uint64)
    ranks = np.repeat(table.ranks[slot], n).astype(np.uint64)
    kept_key = np.uint64(table.kept_rank) << np.uint64(32)
    return np.concatenate([(ranks << np.uint64(32)) | hashes, kept.astype(np.uint64) | kept_key])


def _first_distinct(keys: np.ndarray, target: int) -> np.ndarray:
    """The ``target`` smallest keys, ascending, of distinct hashes (each hash by its smallest
    key): sorted from a partition of the smallest few, grown while hashes repeat in it."""
    k = min(keys.size, 2 * target)
    while True:
        head = np.sort(np.partition(keys, k - 1)[:k] if k < keys.size else keys)
        _, first = np.unique(head & _LOW, return_index=True)
        if first.size >= target or k == keys.size:
            return head[np.sort(first)[:target]]
        k = min(keys.size, 4 * k)


def heaviest_translations(
    table: WeightedLexicon, stems: np.ndarray, target: int
) -> tuple[list[str], list[float]]:
    """The ``target`` heaviest asked translations of ``stems`` (ties: the smaller hash first),
    as hex terms, with their weights (a hash's largest): the words with the fewest
    translations are the most specific evidence, where a sample of a book's many translations
    misses most of what it shares with its translation (docs/EVALUATION.md)."""
    keys = _ranked_keys(table, stems)
    if not keys.size or target <= 0:
        return [], []
    picked = _first_distinct(keys, target)
    hashes = (picked & _LOW).astype(np.uint32)
    return [f"{h:08x}" for h in hashes.tolist()], table.weights[picked >> np.uint64(32)].tolist()
