"""`explain`'s verdict states where the shared text lies from its dense aligned part (no node).

Werther's book 1 (de, 56 pages) against the complete English (112 pages): book 1 maps to
about pages 2-43 of the English, but a short block of 13 words after its end (pages 51-52
onto 45-53) used to stretch the verdict to "pages 8-55 of A match pages 2-98 of B".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bookdup.compare import describe_relation, shared_page_ranges, verify_features
from bookdup.features import extract_features
from bookdup.model import Book
from bookdup.vocabulary import part_direction
from query.explain import align, alignment_data, verdict
from readers import iter_books
from readers.dictionaries import available_pairs, resolve_dictionary

pytestmark = pytest.mark.skipif(
    ("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed"
)


def _book(path: Path) -> Book:
    item = next(iter(iter_books([path])))
    assert isinstance(item, Book)
    return item


@pytest.mark.parametrize("part_first", [True, False])
def test_werther_book1_verdict_names_the_dense_pages(gutenberg: Path, part_first: bool) -> None:
    part = extract_features(_book(gutenberg / "werther-de-b1-pg2407.txt"))
    whole = extract_features(_book(gutenberg / "werther-en-boylan-pg2527.txt"))
    fa, fb = (part, whole) if part_first else (whole, part)
    lexicon = resolve_dictionary(fa.language, fb.language, None)
    verification = verify_features(fa, fb, dictionary=lexicon, threshold=None)
    ranges = shared_page_ranges(fa, fb, verification, lexicon)
    assert ranges is not None
    part_pages, whole_pages = (
        (ranges["a"], ranges["b"]) if part_first else (ranges["b"], ranges["a"])
    )
    # book 1 is all shared (its text starts on page 8, after the PG header) ...
    assert 7 <= part_pages[0] <= 10 and 49 <= part_pages[1] <= 56
    # ... and maps to pages ~2-43 of the English, not to its second half
    assert whole_pages[0] <= 4 and 40 <= whole_pages[1] <= 45

    result = describe_relation(fa, fb, verification, lexicon).to_dict()
    direction = part_direction(result["relation"], result["direction"], result["signals"])
    e = {
        **result,
        "direction": direction,
        "alignment": alignment_data(fa, fb, align(fa, fb, verification, lexicon)),
        "shared_pages": ranges,
    }
    said = verdict(e)
    a, b = ranges["a"], ranges["b"]
    assert f"pages {a[0]}–{a[1]} of A match pages {b[0]}–{b[1]} of B" in said, said
    part_letter = "A" if part_first else "B"
    assert said.startswith(f"{part_letter} is a partial translation"), said
