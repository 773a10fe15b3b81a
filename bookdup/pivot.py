"""Ordered translated pair keys through an English pivot (issue 27): a translated-candidate key.

A book's unique-word stems, in reading order, are mapped into English stems (English books as
they are; another language's through its stem lexicon into English), dropping the words no
lexicon knows (OCR-garbled words, names); a key is an ordered pair of English stems at most
``INDEX_GAP`` (a document's keys) or ``QUERY_GAP`` (a query's) positions apart, hashed to 64
bits. A translation keeps most rare words in about
the same order, so it shares keys with its original that an unrelated book of the same size
does not: single translated stems are shared by chance, ordered pairs of them rarely
(docs/EVALUATION.md, "Pivot pair keys").

The index holds each word's first sense and its pairs at most 2 apart; a query expands each word
to ``QUERY_SENSES`` senses (every pair of senses), since the other side's first sense may be any
of them, and pairs words up to 3 apart, since a translation moves words: a pair is found when
it is close on one side and near on the other, by either side's query.

A document's words no lexicon knows are first looked up up to one edit
(``bookdup.editlookup``): an OCR-garbled word found again keeps its place in the pair chain.
Only the index worker has the words (a dedup job's query books hold their hashes), so only the
stored keys hold them; a pair is found by the query of either side.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from bookdup.arrays import isin_sorted
from bookdup.dictionary import Dictionary
from bookdup.editlookup import OneEditLookup
from bookdup.minhash import fmix64
from bookdup.relate import Lexicons
from bookdup.stemming import stem_lexicon, stem_words
from bookdup.translate import hashed_lexicon, in_lexicon, translate_with_source
from bookdup.winnow import KeyFrequencies

#: The language every book's words are mapped into: the one every lexicon reaches.
PIVOT_LANGUAGE = "en"
#: Pairs of words at most this many positions apart (in the book's unique-word sequence) in
#: a document's keys and in a query's: the index holds most of the keys, so its side is short.
INDEX_GAP = 2
QUERY_GAP = 3
INDEX_SENSES = 1
#: Bits of a key its keyword term keeps: 8 base64 characters.
KEY_BITS = 48
QUERY_SENSES = 3


#: (language, headwords) -> their one-edit lookup.
LookupBuilder = Callable[[str, Collection[str]], OneEditLookup]


def _build_lookup(_language: str, headwords: Collection[str]) -> OneEditLookup:
    return OneEditLookup.build(headwords)


@dataclass(frozen=True)
class PivotLexicons:
    """The stem lexicons into English by source language, and the English stems some lexicon
    knows (an English word outside it is a name or an OCR-garbled word)."""

    to_pivot: dict[str, Dictionary]
    known_pivot: np.ndarray  # sorted uint32 stem hashes
    #: the English stems some lexicon knows, as strings: the headwords of English lookups
    pivot_heads: frozenset[str] = frozenset()
    #: one-edit lookups by language, built on a book's first need (once per process)
    _lookups: dict[str, OneEditLookup] = field(default_factory=dict, compare=False, repr=False)
    #: what builds a language's lookup from its headwords: a reader's disk cache
    #: (``readers.dictionaries.Dictionaries.one_edit_lookup``: German's took ~2.2 s of every
    #: process that met a noisy book) or ``OneEditLookup.build``
    build_lookup: LookupBuilder = field(default=_build_lookup, compare=False, repr=False)

    @classmethod
    def from_lexicons(cls, lexicons: Lexicons) -> PivotLexicons:
        """The stem lexicons of every language English reaches, both ways; their lookups
        built by ``lexicons.one_edit_lookup`` when it has one (a disk cache)."""
        to_pivot: dict[str, Dictionary] = {}
        known = [np.zeros(0, np.uint32)]
        heads: set[str] = set()
        for language in lexicons.targets(PIVOT_LANGUAGE):
            for source, target in ((PIVOT_LANGUAGE, language), (language, PIVOT_LANGUAGE)):
                found = lexicons.get(source, target)
                stemmed = stem_lexicon(found) if found is not None else None
                if stemmed is None:
                    continue
                lex = hashed_lexicon(stemmed)
                known.append(lex.keys if source == PIVOT_LANGUAGE else lex.targets)
                if target == PIVOT_LANGUAGE:
                    to_pivot[language] = stemmed
                    heads.update(" ".join(stemmed.translations).split(" "))
                else:
                    heads.update(stemmed.words)
        build = getattr(lexicons, "one_edit_lookup", None) or _build_lookup
        return cls(to_pivot, np.unique(np.concatenate(known)), frozenset(heads), build_lookup=build)

    def known(self, stems: np.ndarray, language: str) -> np.ndarray:
        """Whether a lexicon into English knows each stem hash (bool per stem)."""
        if language == PIVOT_LANGUAGE:
            return isin_sorted(stems, self.known_pivot)
        lexicon = self.to_pivot.get(language)
        return np.zeros(stems.size, bool) if lexicon is None else in_lexicon(lexicon, stems)

    def lookup(self, language: str) -> OneEditLookup | None:
        """The one-edit lookup of the stems ``known`` accepts in ``language`` (None: no lexicon)."""
        if language not in self._lookups:
            lexicon = self.to_pivot.get(language)
            if language == PIVOT_LANGUAGE:
                self._lookups[language] = self.build_lookup(language, self.pivot_heads)
            elif lexicon is not None:
                self._lookups[language] = self.build_lookup(language, lexicon.words)
        return self._lookups.get(language)


def rescued_stems(
    stems: np.ndarray, words: Sequence[str], language: str, lexicons: PivotLexicons
) -> np.ndarray:
    """``stems`` (uint32 hashes of ``words``' stems) with each stem no lexicon knows replaced by
    the one headword stem within one edit of it, where there is one."""
    out = np.array(stems, dtype=np.uint32)
    unknown = np.flatnonzero(~lexicons.known(out, language))
    lookup = lexicons.lookup(language) if unknown.size else None
    if lookup is None:
        return out
    found = lookup.find(stem_words([words[i] for i in unknown.tolist()], language) or [])
    out[unknown[found != 0]] = found[found != 0]
    return out


def pivot_senses(
    stems: np.ndarray | None, language: str, lexicons: PivotLexicons, senses: int
) -> np.ndarray:
    """(known words, ``senses``) uint32 English stem hashes of the words a lexicon knows, in
    reading order; 0 where a word has fewer senses. Empty for a language no lexicon reaches."""
    empty = np.zeros((0, senses), np.uint32)
    if stems is None or not len(stems):
        return empty
    h = np.asarray(stems, dtype=np.uint32)
    known = lexicons.known(h, language)
    if language == PIVOT_LANGUAGE:
        out = np.zeros((h.size, senses), np.uint32)
        out[:, 0] = h
        return out[known]
    lexicon = lexicons.to_pivot.get(language)
    if lexicon is None:
        return empty
    translated, _, source = translate_with_source(
        None, np.zeros(h.size, np.int32), lexicon, keep_untranslated=False, hashes=h
    )
    first = np.r_[0, np.flatnonzero(np.diff(source)) + 1]
    within = np.arange(source.size) - np.repeat(first, np.diff(np.r_[first, source.size]))
    kept = within < senses
    out = np.zeros((h.size, senses), np.uint32)
    out[source[kept], within[kept]] = translated[kept]
    return out[known]


def pair_keys(senses: np.ndarray, gap: int) -> np.ndarray:
    """Sorted distinct uint64 keys of every ordered pair (a sense of word i, a sense of word j),
    1 <= j - i <= ``gap``."""
    out = [np.zeros(0, np.uint64)]
    with np.errstate(over="ignore"):
        for step in range(1, gap + 1):
            if senses.shape[0] <= step:
                break
            a, b = np.broadcast_arrays(
                senses[:-step, :, None].astype(np.uint64), senses[step:, None, :].astype(np.uint64)
            )
            ok = (a != 0) & (b != 0)
            out.append(fmix64((a[ok] << np.uint64(32)) | b[ok]))
    return np.unique(np.concatenate(out))


def pivot_keys(
    stems: np.ndarray | None,
    language: str,
    lexicons: PivotLexicons,
    senses: int = INDEX_SENSES,
    words: Sequence[str] | None = None,
    gap: int = INDEX_GAP,
) -> np.ndarray:
    """A book's pivot pair keys (``senses`` per word and pairs up to ``gap`` apart:
    ``INDEX_SENSES`` and ``INDEX_GAP`` for its document, ``QUERY_SENSES`` and ``QUERY_GAP``
    for its query); with its unique ``words``, garbled ones looked up first."""
    if stems is not None and words is not None:
        stems = rescued_stems(stems, words, language, lexicons)
    return pair_keys(pivot_senses(stems, language, lexicons, senses), gap)


def key_terms(keys: np.ndarray) -> list[str]:
    """64-bit keys as keyword terms of their top ``KEY_BITS`` bits in 8 base64url characters
    (half the 16 hex digits' bytes; chance collisions stay far below one a query at 10K books)."""
    top = np.asarray(keys, dtype=np.uint64) >> np.uint64(64 - KEY_BITS)
    raw = top.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - KEY_BITS // 8 :]
    text = base64.urlsafe_b64encode(raw.tobytes()).decode("ascii")
    return [text[i : i + 8] for i in range(0, len(text), 8)]


def table_keys(keys: np.ndarray) -> np.ndarray:
    """The top 32 bits of 64-bit pivot keys: the document-frequency table's keys (at 10K
    books of 4K-8K words, ~10M distinct keys: a chance collision adds one book to a count)."""
    return (np.asarray(keys, dtype=np.uint64) >> np.uint64(32)).astype(np.uint32)


def terms_table_keys(terms: Sequence[str]) -> np.ndarray:
    """A document's stored key terms (``key_terms``) as their distinct ``table_keys``."""
    if not terms:
        return np.zeros(0, np.uint32)
    raw = np.frombuffer(base64.urlsafe_b64decode("".join(terms)), np.uint8)
    top = raw.reshape(-1, KEY_BITS // 8)[:, :4].copy()
    return np.unique(top.view(">u4").reshape(-1).astype(np.uint32))


def held_elsewhere(
    query: np.ndarray, tables: Mapping[str, KeyFrequencies], language: str, max_df: int
) -> np.ndarray:
    """The ``query`` keys (uint64) of a book of ``language`` held by 1 … ``max_df`` books of
    the other languages (``tables``: the stored keys' counts by language, min_count 1). A
    pivot search reaches only the other languages' books: a key none of them holds scores no
    hit, so dropping it changes no list."""
    query = np.asarray(query, dtype=np.uint64)
    top = table_keys(query)
    df = np.zeros(top.size, np.int64)
    for other, table in tables.items():
        if other != language:
            df += table.df(top)
    return query[(df >= 1) & (df <= max_df)]
