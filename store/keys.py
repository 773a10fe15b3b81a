"""The candidate keys: one registry of the keyword fields candidate queries run on.

Each key is a keyword field of the books index whose terms are computed from a book's features
at index time. The places that used to name the fields by hand derive them from here: the
index worker fills every key field (``document_keys``), the dedup job reads from ``_source``
the keys a query needs and features do not hold (``source_read_keys``), the stop lists read
the document frequencies of the aggregatable keys (``aggregated_keys``), and the read side
never shows any of them (``CANDIDATE_KEY_FIELDS``). A test checks that ``mappings/books.json``
declares each key as a keyword field, with doc values exactly where the registry says so.

How each key is queried (samples, floors, caps, weights) stays in ``store.candidates``: the
queries differ per key, and their parameters are ``CandidateParams``.

Adding a key type: a ``CandidateKey`` here, its field in the mapping (a new mapping version
with its migration in ``store.schema``), and its query in ``store.candidates``.

An optional key (``OPTIONAL_KEY_FIELDS``: the pivot pair keys of issue 27, behind
``IndexOptions`` / ``CandidateParams.pivot_pairs``) is not in ``mappings/books.json``: the index
job that fills it adds its field to the index (``store.schema.add_pivot_field``), since an
added field needs neither a new version nor a copy of every document; its terms need the
lexicons as well as the features (``pivot_document_keys``).

No Elasticsearch import here: the index worker processes load this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bookdup.features import (
    BookFeatures,
    hex_terms,
    stem_sample,
    terms_to_hashes,
    unique_sample_terms,
)
from bookdup.pivot import INDEX_SENSES, PivotLexicons, key_terms, pivot_keys
from bookdup.searchedstems import rescues_stems, searched_stems

#: Terms of one key for the document of a book: (features, uniq_modulus) -> keyword terms.
TermsFromFeatures = Callable[[BookFeatures, int], list[str]]


@dataclass(frozen=True)
class CandidateKey:
    """One candidate-key field of the books index."""

    field: str
    description: str
    #: the terms the index worker stores for a book (8-hex-digit keyword terms)
    terms_from_features: TermsFromFeatures
    #: mapped with doc values: its stop list (terms held by more than max_df books) comes from
    #: a terms aggregation. Without (``winnows``): its document frequencies are counted from
    #: the stored terms in ``_source`` by the job itself.
    doc_values: bool
    #: the ``BookFeatures`` attribute a candidate query reads this key from, filled from
    #: ``_source`` by the dedup job when the cached features do not hold it (None: the query
    #: recomputes the key from the features themselves)
    features_attr: str | None = None


def _bands(f: BookFeatures, _modulus: int) -> list[str]:
    return list(f.bands)


def _uniq(f: BookFeatures, modulus: int) -> list[str]:
    return unique_sample_terms(f, modulus)


def _stems(f: BookFeatures, _modulus: int) -> list[str]:
    return stem_sample(f.unique.stems)


def _winnows(f: BookFeatures, _modulus: int) -> list[str]:
    return hex_terms(f.winnows)


BANDS = CandidateKey(
    "bands",
    "min-hash LSH band values (bookdup.lsh): one shared band makes a candidate",
    _bands,
    doc_values=True,
)
UNIQ = CandidateKey(
    "uniq",
    "a consistent sample of the unique-word hashes (h % uniq_modulus == 0): the shared-text "
    "query of a book without winnowed keys, and of other languages' names and cognates",
    _uniq,
    doc_values=True,
)
STEMS = CandidateKey(
    "stems",
    "a consistent sample of the unique words' stem hashes (bookdup.features.STEM_MODULUS): "
    "the keys of translated queries",
    _stems,
    doc_values=True,
)
WINNOWS = CandidateKey(
    "winnows",
    "winnowed word-prefix 5-gram keys (bookdup.winnow): the keys of same-language queries",
    _winnows,
    doc_values=False,
    features_attr="winnows",
)


def _no_terms(_f: BookFeatures, _modulus: int) -> list[str]:
    return []  # filled by ``pivot_document_keys``: it needs the lexicons, not only features


#: Optional key (issue 27): not in the books mapping; an index job with ``pivot_pairs`` adds
#: the field to its index (``store.schema.add_pivot_field``) and fills it.
PIVOTS = CandidateKey(
    "pivots",
    "ordered pairs of the unique words' stems mapped into English (bookdup.pivot): the keys "
    "of the pivot translated queries (CandidateParams.pivot_pairs)",
    _no_terms,
    # no stop list (a query scores each key by its idf), so no doc values: they were 122 of
    # the field's 216 KB a real book (docs/EVALUATION.md)
    doc_values=False,
)

#: Every candidate key, in the order the books document lists them.
CANDIDATE_KEYS: tuple[CandidateKey, ...] = (BANDS, UNIQ, STEMS, WINNOWS)
CANDIDATE_KEY_FIELDS: tuple[str, ...] = tuple(k.field for k in CANDIDATE_KEYS)
#: Keys only some indices hold: hidden from the read side like the others.
OPTIONAL_KEY_FIELDS: tuple[str, ...] = (PIVOTS.field,)


def document_keys(
    features: BookFeatures,
    uniq_modulus: int,
    lexicons: Callable[[], PivotLexicons] | None = None,
) -> dict[str, list[str]]:
    """Every candidate-key field of a book's document, from its features; with ``lexicons``
    (the index worker's, loaded on a noisy book's first need), a noisy book's stems rescued
    one edit away, as its translated queries ask them (``bookdup.searchedstems``)."""
    keys = {k.field: k.terms_from_features(features, uniq_modulus) for k in CANDIDATE_KEYS}
    if lexicons is not None and rescues_stems(features):
        keys[STEMS.field] = stem_sample(searched_stems(features, lexicons))
    return keys


def pivot_document_keys(features: BookFeatures, lexicons: PivotLexicons) -> dict[str, list[str]]:
    """The ``pivots`` field of a book's document (index jobs with ``pivot_pairs``): garbled
    words looked up up to one edit, since only the index worker has the words."""
    unique = features.unique
    keys = pivot_keys(unique.stems, features.language, lexicons, INDEX_SENSES, unique.words)
    return {PIVOTS.field: key_terms(keys)}


def aggregated_keys() -> tuple[CandidateKey, ...]:
    """The keys whose stop lists come from terms aggregations (mapped with doc values)."""
    return tuple(k for k in CANDIDATE_KEYS if k.doc_values)


def source_read_keys() -> tuple[CandidateKey, ...]:
    """The keys the dedup job reads from ``_source`` into each query book's features."""
    return tuple(k for k in CANDIDATE_KEYS if k.features_attr is not None)


def stored_keys(source: dict[str, Any]) -> dict[str, Any]:
    """The ``source_read_keys`` of a stored books document as uint32 hashes, by features
    attribute, ready for ``dataclasses.replace`` (none stored: an empty array)."""
    return {
        str(key.features_attr): terms_to_hashes(source.get(key.field) or [])
        for key in source_read_keys()
    }
