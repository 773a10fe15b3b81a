"""The candidate-key registry (store.keys, issue 27 item 3) against every place that used to
name the key fields by hand: the mapping, the index worker's document, the dedup job's
_source list, the stop lists and the read side's field lists. No Elasticsearch needed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bookdup.features import (
    FeatureParams,
    extract_features,
    hex_terms,
    stem_sample,
    unique_sample_terms,
)
from bookdup.model import Book
from indexer.index_worker import build_document
from query import explain, related, search
from store import candidates, keys
from store.keys import CANDIDATE_KEY_FIELDS, CANDIDATE_KEYS, OPTIONAL_KEY_FIELDS
from store.schema import load_definition
from store.shown import DOC_VALUES

TEXT = (
    "The houses of the village stood along the river where the children played and the old "
    "miller counted his sacks of flour beside the mill pond every single evening. "
) * 6


def _book(book_id: str = "k1") -> Book:
    return Book(
        id=book_id,
        pages=[TEXT, TEXT + "Tom Sawyer whitewashed the fence while Huck watched."],
        language="en",
    )


def _is_key_shaped(spec: dict) -> bool:
    """A mapping property shaped like a candidate key: a keyword of bare postings."""
    return spec.get("type") == "keyword" and spec.get("index_options") == "docs"


def test_registry_fields_are_distinct_and_named_as_before() -> None:
    assert CANDIDATE_KEY_FIELDS == ("bands", "uniq", "stems", "winnows")
    assert len(set(CANDIDATE_KEY_FIELDS)) == len(CANDIDATE_KEYS)
    assert (
        candidates.BANDS_FIELD,
        candidates.UNIQ_FIELD,
        candidates.STEMS_FIELD,
        candidates.WINNOWS_FIELD,
    ) == CANDIDATE_KEY_FIELDS
    assert all(k.description for k in CANDIDATE_KEYS)


def test_the_mapping_declares_every_key_and_no_other_key_shaped_field() -> None:
    properties = load_definition("books")["mappings"]["properties"]
    for key in CANDIDATE_KEYS:
        spec = properties.get(key.field)
        assert spec is not None, f"{key.field} is not in mappings/books.json"
        assert spec["type"] == "keyword", key.field
        assert _is_key_shaped(spec), key.field
        # a terms aggregation (the stop lists) needs doc values; the winnowed keys have none
        assert spec.get("doc_values", True) is key.doc_values, key.field
    shaped = {name for name, spec in properties.items() if _is_key_shaped(spec)}
    assert shaped == set(CANDIDATE_KEY_FIELDS), "a key-shaped field the registry does not name"


@pytest.mark.parametrize("uniq_modulus", [1, 4])
def test_the_document_holds_every_key_as_computed_before(uniq_modulus: int) -> None:
    book = _book()
    doc = build_document(book, uniq_modulus, FeatureParams())
    f = extract_features(book, FeatureParams())
    # the terms the worker wrote by hand before the registry
    assert doc["bands"] == list(f.bands)
    assert doc["uniq"] == unique_sample_terms(f, uniq_modulus)
    assert doc["stems"] == stem_sample(f.unique.stems)
    assert doc["winnows"] == hex_terms(f.winnows)
    for field in CANDIDATE_KEY_FIELDS:
        assert doc[field], f"{field} is empty for an English book"
        assert all(isinstance(t, str) for t in doc[field])
    assert set(doc) <= set(load_definition("books")["mappings"]["properties"])


def test_pivot_keys_are_added_to_the_document_only_when_asked() -> None:
    """Issue 27: without the lexicons (``IndexOptions.pivot_pairs`` off) the document is
    today's, field for field; with them it holds the pivot keys too, and nothing else moves."""
    from bookdup.pivot import PivotLexicons, key_terms, pivot_keys
    from tests.bookdup.test_pivot import _Lexicons

    book = _book()
    f = extract_features(book, FeatureParams())
    assert f.unique.words is not None
    words = list(f.unique.words)
    lexicons = PivotLexicons.from_lexicons(
        _Lexicons(words, [f"d{w}" for w in words], np.random.default_rng(1))
    )
    plain = build_document(book, 1, FeatureParams())
    keyed = build_document(book, 1, FeatureParams(), lexicons)
    assert "pivots" not in plain
    assert list(keyed) == [
        *list(plain)[: list(plain).index("winnows") + 1],
        "pivots",
        *[k for k in list(plain)[list(plain).index("winnows") + 1 :]],
    ]
    assert keyed["pivots"] == key_terms(pivot_keys(f.unique.stems, "en", lexicons))
    assert len(keyed["pivots"]) > 10
    assert {k: v for k, v in keyed.items() if k != "pivots"} == plain


def test_the_dedup_job_reads_back_the_keys_features_do_not_hold() -> None:
    book = _book()
    doc = build_document(book, 1, FeatureParams())
    f = extract_features(book, FeatureParams())
    read = keys.source_read_keys()
    assert [k.field for k in read] == ["winnows"]
    stored = keys.stored_keys(doc)
    assert set(stored) == {"winnows"}
    np.testing.assert_array_equal(stored["winnows"], f.winnows)
    # a book stored without winnowed keys (a migrated v3 document): none, as before
    empty = keys.stored_keys({"features": {}})
    assert empty["winnows"].dtype == np.uint32 and empty["winnows"].size == 0
    cached = dataclasses.replace(f, winnows=np.zeros(0, np.uint32))  # what the cache holds
    np.testing.assert_array_equal(dataclasses.replace(cached, **stored).winnows, f.winnows)


def test_stop_lists_cover_the_aggregatable_keys() -> None:
    assert [k.field for k in keys.aggregated_keys()] == ["bands", "uniq", "stems"]
    stop_fields = {f.name for f in dataclasses.fields(candidates.StopLists)}
    assert set(CANDIDATE_KEY_FIELDS) <= stop_fields


def test_the_read_side_never_asks_for_a_key_field() -> None:
    hidden = set(related.BOOK_FIELDS_HIDDEN)
    every_key = set(CANDIDATE_KEY_FIELDS) | set(OPTIONAL_KEY_FIELDS)
    assert every_key <= hidden  # the book's view (a deny-list)
    # ... and every allow-list the read side reads books with
    for name, fields in [
        ("related.OTHER_BOOK_FIELDS", related.OTHER_BOOK_FIELDS),
        ("search.SOURCE_FIELDS", search.SOURCE_FIELDS),
        ("search.MEMBER_FIELDS", search.MEMBER_FIELDS),
        ("shown.DOC_VALUES", list(DOC_VALUES.values())),
        ("explain.META_FIELDS", explain.META_FIELDS),
    ]:
        assert not set(fields) & every_key, name
