"""The dedup fast path (threshold given) against the full path: never loses a pair it accepts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.compare import compare_features
from bookdup.dictionary import Dictionary
from bookdup.features import extract_features
from bookdup.lcs import lis_keep
from bookdup.model import Book
from tests.bookdup.lcs_reference import lis_indices

words = st.lists(st.integers(0, 300), min_size=0, max_size=150)


def features(name: str, ids: list[int]):
    text = " ".join(f"w{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in ids)
    pages = [text[i : i + 400] for i in range(0, len(text), 400)] or [""]
    return extract_features(Book(name, pages, language="en"))


@settings(max_examples=150, deadline=None)
@given(seq=st.lists(st.integers(0, 10_000), unique=True, max_size=300))
def test_lis_keep_is_lis_indices(seq: list[int]) -> None:
    assert lis_keep(np.array(seq, dtype=np.int64)).tolist() == lis_indices(seq)


@settings(max_examples=60, deadline=None)
@given(a=words, b=words, t=st.floats(0.0, 1.0), translate=st.booleans())
def test_fast_reject_never_drops_an_accepted_pair(
    a: list[int], b: list[int], t: float, translate: bool
) -> None:
    fa, fb = features("a", a), features("b", b)
    lex = None
    if translate:
        lex = Dictionary.from_mapping(
            "en", "de", {f"w{chr(97 + i % 26)}{chr(97 + i // 26)}": ["wa", "wb"] for i in range(9)}
        )
    full = compare_features(fa, fb, dictionary=lex)
    fast = compare_features(fa, fb, dictionary=lex, threshold=t)
    # results carry its rounded to 4 places
    if fast.pruned:
        assert full.its < t + 1e-4 and fast.relation == "UNRELATED"
    else:
        assert full.its > t - 1e-4 and fast.to_dict() == full.to_dict()
