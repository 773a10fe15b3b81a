"""In-place one-to-many translation of unique-word sequences."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.dictionary import Dictionary
from bookdup.features import extract_features
from bookdup.translate import (
    _lookup,
    in_lexicon,
    translate_unique,
    translate_with_source,
)
from bookdup.uniquewords import word_hash
from readers import iter_books
from readers.dictionaries import load_dictionary

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_translate import numpy_translate  # noqa: E402  (the numpy definition before)

LEX = Dictionary.from_mapping(
    "en", "de", {"king": ["könig"], "night": ["nacht", "abend"], "sword": ["schwert"]}
)


def test_one_to_many_in_place_with_pages() -> None:
    words = ["night", "egmont", "king", "sword"]
    pages = np.array([0, 1, 1, 3], dtype=np.int32)
    hashes, out_pages = translate_unique(words, pages, LEX)
    want = [word_hash(w) for w in ["nacht", "abend", "egmont", "könig", "schwert"]]
    assert hashes.dtype == np.uint32 and out_pages.dtype == np.int32
    assert hashes.tolist() == want
    assert out_pages.tolist() == [0, 0, 1, 1, 3]


def test_drop_untranslated() -> None:
    hashes, pages = translate_unique(["egmont", "king"], np.array([2, 5]), LEX, False)
    assert hashes.tolist() == [word_hash("könig")]
    assert pages.tolist() == [5]
    hashes, pages = translate_unique([], np.zeros(0, np.int32), LEX)
    assert hashes.size == 0 and pages.size == 0


def test_in_lexicon_names_the_words_kept_as_they_are() -> None:
    words = ["night", "egmont", "king", "nigth"]
    hashes = np.array([word_hash(w) for w in words], dtype=np.uint32)
    assert in_lexicon(LEX, hashes).tolist() == [True, False, True, False]
    empty = Dictionary.from_mapping("en", "de", {})
    assert in_lexicon(empty, hashes).tolist() == [False] * 4


def _reference(words: list[str], dictionary: Dictionary) -> list[int]:
    """Word-by-word lookup, the definition the vectorised gathers must reproduce."""
    out: list[int] = []
    for w in words:
        out.extend(word_hash(t) for t in dictionary.translate(w) or (w,))
    return out


def test_matches_word_by_word_lookup_on_freedict(gutenberg: Path) -> None:
    dictionary = load_dictionary("de", "en")
    book = next(iter_books([gutenberg / "werther-de-b1-pg2407.txt"]))
    words = extract_features(book).unique.words
    hashes, pages = translate_unique(words, np.arange(len(words)), dictionary)
    assert hashes.tolist() == _reference(words, dictionary)
    assert pages.size == hashes.size and np.all(np.diff(pages) >= 0)
    assert hashes.size > len(words)  # one-to-many: the lexicon has several senses per word


_VOCAB = ["a", "b", "ab", "ba", "abc", "könig", "nacht", "zz"]
_INDEX = st.integers(0, len(_VOCAB) - 1)


@settings(max_examples=300, deadline=None)
@given(
    table=st.dictionaries(_INDEX, st.lists(_INDEX, min_size=1, max_size=4), max_size=6),
    # each item: its word and the word its hash is taken from (another one: a hash hit that
    # the word refutes, as a 32-bit collision would)
    items=st.lists(st.tuples(_INDEX, _INDEX, st.integers(-5, 1 << 20)), max_size=12),
    with_words=st.booleans(),
    keep=st.booleans(),
)
def test_translation_is_its_numpy_definition(
    table: dict[int, list[int]],
    items: list[tuple[int, int, int]],
    with_words: bool,
    keep: bool,
) -> None:
    lexicon = Dictionary.from_mapping(
        "en", "de", {_VOCAB[w]: [_VOCAB[t] for t in ts] for w, ts in table.items()}
    )
    words = [_VOCAB[w] for w, _, _ in items]
    hashes = np.array([word_hash(_VOCAB[h]) for _, h, _ in items], dtype=np.uint32)
    pages = np.array([p for _, _, p in items], dtype=np.int32)
    given_words = words if with_words else None
    want = numpy_translate(given_words, pages, lexicon, keep, hashes=hashes)
    got = translate_with_source(given_words, pages, lexicon, keep, hashes=hashes)
    for a, b in zip(want, got, strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()


_HASH = st.integers(0, (1 << 32) - 1)


@settings(max_examples=300, deadline=None)
@given(
    keys=st.sets(_HASH, min_size=1, max_size=300),
    picks=st.lists(st.tuples(st.integers(0, 299), st.integers(-1, 1)), max_size=60),
    others=st.lists(_HASH, max_size=20),
)
def test_lookup_is_searchsorted(
    keys: set[int], picks: list[tuple[int, int]], others: list[int]
) -> None:
    """Each hash's slot and hit are numpy's, for hashes at, beside and between the keys."""
    sorted_keys = np.array(sorted(keys), dtype=np.uint32)  # a lexicon's keys
    near = [int(sorted_keys[i % sorted_keys.size]) + d for i, d in picks]
    wanted = [h for h in near if 0 <= h < 1 << 32] + others
    hashes = np.array(wanted, dtype=np.uint32)
    slot = np.minimum(np.searchsorted(sorted_keys, hashes), sorted_keys.size - 1)
    got_slot, got_hit = _lookup(sorted_keys, hashes)
    assert got_slot.tolist() == slot.tolist()
    assert got_hit.tolist() == (sorted_keys[slot] == hashes).tolist()
