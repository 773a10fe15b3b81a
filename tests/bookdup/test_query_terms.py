"""The heaviest translated terms (issue 28): the same terms, weights and order as the
construction the dedup job used before, which is kept here as the reference."""

from __future__ import annotations

import numpy as np
import pytest

from bookdup.arrays import distinct, isin_sorted
from bookdup.dictionary import Dictionary
from bookdup.query_terms import heaviest_translations, weighted_lexicon
from bookdup.translate import hashed_lexicon, in_lexicon, translate_with_source
from bookdup.uniquewords import hash_words


def _old_weights(hashes, source, kept, kept_weight, wanted):
    """``store.candidates.translation_weights`` before issue 28 (with its ``wanted`` mask)."""
    if hashes.size == 0:
        return np.zeros(0, dtype=np.uint32), np.zeros(0)
    per_word = np.bincount(source)
    weight = np.where(kept[source], kept_weight, 1.0 / per_word[source])
    hashes, weight = hashes[wanted], weight[wanted]
    order = np.argsort(hashes)
    ordered = hashes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else order
    if not starts.size:
        return ordered, weight[order]
    return ordered[starts], np.maximum.reduceat(weight[order], starts)


def _old_heaviest(dictionary, stems, stop, target, modulus, kept_weight):
    """What ``CandidateSearcher`` asked before issue 28: translate, weigh, lexsort."""
    pages = np.zeros(stems.size, np.int32)
    hashes, _, source = translate_with_source(None, pages, dictionary, hashes=stems)
    kept = ~in_lexicon(dictionary, stems)
    h, w = _old_weights(hashes, source, kept, kept_weight, hashes % np.uint32(modulus) == 0)
    keep = (h % np.uint32(modulus) == 0) & ~isin_sorted(h, stop)
    h, w = h[keep], w[keep]
    order = np.lexsort((h, -w))[:target]
    return [f"{x:08x}" for x in h[order].tolist()], w[order].tolist()


def _lexicon(rng: np.random.Generator, n_words: int, pool: int) -> Dictionary:
    """Random words with 1-25 translations each, drawn from a small pool so that many words
    share translations (a hash then weighs its largest weight), and 20 translations weigh
    exactly the untranslated weight 0.05 (ties broken by hash)."""
    mapping = {
        f"w{i}": [
            f"t{t}" for t in dict.fromkeys(rng.integers(0, pool, rng.integers(1, 26)).tolist())
        ]
        for i in range(n_words)
    }
    return Dictionary.from_mapping("xx", "yy", mapping)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("target", [1, 7, 400, 100_000])
def test_heaviest_translations_equal_the_old_construction(seed: int, target: int) -> None:
    rng = np.random.default_rng(seed)
    dictionary = _lexicon(rng, 3000, 2000 if seed % 2 else 20_000)
    known = [f"w{i}" for i in rng.integers(0, 4000, 2500)]  # w3000+ are not in the lexicon
    stems = hash_words(known + [f"name{i}" for i in range(300)])  # repeats, names kept
    lex = hashed_lexicon(dictionary)
    stop = distinct(rng.choice(lex.targets, 200))
    for modulus in (1, 2):
        expected = _old_heaviest(dictionary, stems, stop, target, modulus, 0.05)
        table = weighted_lexicon(lex, stop, modulus, 0.05)
        got = heaviest_translations(table, distinct(stems), target)
        assert got == expected
        assert len(got[0]) == min(target, len(set(got[0])))  # distinct, as many as asked
        if target == 100_000:  # every term: names and 20-translation words tie at 0.05
            assert got[1].count(0.05) > 100 and got[1] == sorted(got[1], reverse=True)


def test_edge_cases_equal_the_old_construction() -> None:
    rng = np.random.default_rng(9)
    empty_stop = np.zeros(0, np.uint32)
    for dictionary in (_lexicon(rng, 50, 30), Dictionary.from_mapping("xx", "yy", {})):
        table = weighted_lexicon(hashed_lexicon(dictionary), empty_stop, 2, 0.05)
        for stems in (np.zeros(0, np.uint32), hash_words(["w1", "w2", "zz", "w1"])):
            expected = _old_heaviest(dictionary, stems, empty_stop, 400, 2, 0.05)
            assert heaviest_translations(table, distinct(stems), 400) == expected


def test_the_most_specific_translations_come_first() -> None:
    """One-translation words before many-translation ones, an untranslated word last; ties
    by hash; odd hashes (not indexed at modulus 2) and stop keys never asked."""
    dictionary = Dictionary.from_mapping("xx", "yy", {"a": ["x"], "b": ["y", "z", "x"]})
    stems = hash_words(["a", "b", "name"])
    names = ["x", "y", "z", "name"]
    hashes = {w: int(h) for w, h in zip(names, hash_words(names), strict=True)}
    table = weighted_lexicon(hashed_lexicon(dictionary), np.zeros(0, np.uint32), 1, 0.05)
    terms, weights = heaviest_translations(table, distinct(stems), 10)
    ranked = sorted(["y", "z"], key=lambda w: hashes[w])
    assert terms == [f"{hashes[w]:08x}" for w in ["x", *ranked, "name"]]
    assert weights == [1.0, 1 / 3, 1 / 3, 0.05]
    stop = np.array([hashes["x"]], np.uint32)
    table = weighted_lexicon(hashed_lexicon(dictionary), stop, 1, 0.05)
    terms, _ = heaviest_translations(table, distinct(stems), 10)
    assert f"{hashes['x']:08x}" not in terms and len(terms) == 3
