"""One-edit lookup of headwords (issue 27): a garbled word finds its one entry, never a guess."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.editlookup import MIN_HEAD_LENGTH, MIN_WORD_LENGTH, OneEditLookup
from bookdup.uniquewords import hash_words


def _hash(word: str) -> int:
    return int(hash_words([word])[0])


def test_a_garbled_known_word_finds_its_entry() -> None:
    lookup = OneEditLookup.build(["verstand", "verstanden", "gedanke", "haus"])
    # substitution, deletion, insertion, and the word itself
    found = lookup.find(["verstamd", "verstnd", "verstaand", "verstand", "gedanke"])
    assert found.tolist() == [_hash("verstand")] * 4 + [_hash("gedanke")]
    # two edits, or a word too short to look up ("haux" is one edit from "haus")
    assert lookup.find(["verxtamd", "haux", "hausx"]).tolist() == [0, 0, _hash("haus")]


def test_a_deletion_key_two_headwords_hold_finds_nothing() -> None:
    # "mauser" and "tauser" both hold "auser": a word reaching it may be either
    lookup = OneEditLookup.build(["mauser", "tauser"])
    assert int(np.sum(lookup.heads == 0)) == 1
    assert lookup.find(["xauser", "mausr"]).tolist() == [0, _hash("mauser")]


def test_a_word_meeting_two_headwords_finds_nothing() -> None:
    # "abcdex" meets "abcde" (its deletion of x) and "abcdxy" (both less a letter: "abcdx")
    # through keys only one headword holds each: still two candidates, so no match
    lookup = OneEditLookup.build(["abcde", "abcdxy"])
    assert not np.any(lookup.heads == 0)
    assert lookup.find(["abcdex", "abcdxy", "abcdf"]).tolist() == [
        0,
        _hash("abcdxy"),
        _hash("abcde"),  # one substitution from "abcde" only
    ]


def test_compact_sorted_hashes() -> None:
    lookup = OneEditLookup.build(["verstand", "gedanke", "gedanke", "abc"])
    # 8 + 1 and 7 + 1 deletion keys, the duplicate and the 3-letter headword not indexed
    assert lookup.keys.size == 9 + 8 and np.all(np.diff(lookup.keys.astype(np.float64)) >= 0)
    assert lookup.keys.dtype == np.uint64 and lookup.nbytes == 12 * lookup.keys.size


def _reference_find(headwords: list[str], words: list[str]) -> list[int]:
    """The definition on strings: the one headword whose deletion neighbourhood meets a
    word's, none when a met key is held by two headwords or two headwords are met."""
    holders: dict[str, set[str]] = {}
    for h in {h for h in headwords if len(h) >= MIN_HEAD_LENGTH}:
        for key in {h, *(h[:i] + h[i + 1 :] for i in range(len(h)))}:
            holders.setdefault(key, set()).add(h)
    out = []
    for w in words:
        if len(w) < MIN_WORD_LENGTH:
            out.append(0)
            continue
        met = [holders.get(k, set()) for k in {w, *(w[:i] + w[i + 1 :] for i in range(len(w)))}]
        heads = set().union(*met)
        shared = any(len(m) > 1 for m in met)
        out.append(_hash(heads.pop()) if len(heads) == 1 and not shared else 0)
    return out


_LETTERS = st.text(alphabet="aabeéßx", min_size=3, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LETTERS, max_size=30), st.lists(_LETTERS, max_size=30))
def test_the_compiled_lookup_is_the_definition_on_strings(
    headwords: list[str], words: list[str]
) -> None:
    # few letters, runs of one letter and non-ASCII ones: keys shared, deletions repeated
    lookup = OneEditLookup.build(headwords)
    assert lookup.find(words).tolist() == _reference_find(headwords, words)
