"""Bilingual word lexicons from FreeDict dictd files, shaped for TRANS (SIGIR 2012, §3.3.2).

The lexicon is a table word -> translations with no probabilities. Built as the paper says:
function words are removed on both sides of each entry (language-specific stop-word lists);
an entry whose source side still has several words is dropped; a translation phrase is split
into its words, each listed as a possible translation. Words are normalised exactly like book
text (``bookdup.text.tokenize``: NFKC, casefold, letters only) so that translations meet the
target book's words.

FreeDict dictd entry text looks like::

    acquisition spree /ɐkwɪsˈɪʃən spɹˈiː/
    Expansionstour <fem>, Einkaufstour <fem>
             Note: einer Firma
     see: {spree}, {burglary spree}

(first line: headword, pronunciation, grammar tags; then translations, possibly numbered
``1. ...`` or prefixed by a domain ``[mach.]``; then notes, examples in quotes, cross references).

Pure: entry texts in, tables out. Reading the dictd files, the on-disk cache of parsed tables
and choosing a dictionary for a pair of languages are ``readers.dictionaries``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bookdup.text import tokenize

__all__ = [
    "ISO3",
    "STOP_WORDS",
    "Dictionary",
    "canonical_direction",
    "compose",
    "invert",
    "merge_tables",
    "parse_entries",
    "parse_entry",
]

ISO3 = {"en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita"}

# Function words removed from both sides of every entry (TRANS §3.3.2). Short on purpose:
# articles, pronouns, auxiliaries, prepositions, conjunctions — the words a dictionary adds
# around a headword ("to go", "sich freuen") or a translation ("das Geschlecht bestimmen").


def _stops(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOP_WORDS: dict[str, frozenset[str]] = {
    "en": _stops(
        "a an the to of in on at by for from with without into onto up out off over under about "
        "as and or but nor not no so than that this these those it its he him his she her they "
        "them their we us our you your i me my one ones oneself someone something sb sth be is "
        "am are was were been being have has had do does did will would shall should can could "
        "may might must there here which who whom whose what when where how"
    ),
    "de": _stops(
        "der die das den dem des ein eine einen einem einer eines und oder aber nicht kein keine "
        "zu zum zur in im ins an am auf aus bei mit nach von vom vor für über unter um durch "
        "gegen ohne bis als wie so dass daß es er sie ihn ihm ihr ihre sein seine sich man wir "
        "uns ich mich mir du dich dir jemand jemanden jemandem jds jdn jdm etw etwas ist sind war "
        "waren sein werden wird wurde haben hat hatte wer was wo"
    ),
    "fr": _stops(
        "le la les l un une des du de d au aux et ou mais ne pas ni à a en dans sur sous par pour "
        "avec sans chez vers que qu qui quoi dont où ce cet cette ces se s il elle ils elles on "
        "je j me m tu te t nous vous lui leur leurs son sa ses mon ma mes ton ta tes y est sont "
        "être avoir quelqu quelque chose qch qn"
    ),
    "es": _stops(
        "el la los las lo un una unos unas y e o u pero ni no de del a al en con sin por para "
        "sobre entre hasta desde que quien cual se su sus le les me te nos os yo tú él ella "
        "ellos ellas usted es son ser estar está algo alguien"
    ),
    "it": _stops(
        "il lo la i gli le l un uno una e ed o ma non né di del dello della dei degli delle "
        "a al allo alla ai agli alle da dal dalla in nel nello nella nei con su sul sulla per "
        "tra fra che chi cui si ci vi mi ti ne se suo sua suoi sue è sono essere avere qualcosa "
        "qualcuno qc qd"
    ),
}

_LABEL = re.compile(r"^\s*(?:Note|see|Synonyms?|Antonyms?|Examples?|Also)\s*:")
_BRACKETED = re.compile(r"<[^>]*>|\[[^\]]*\]|\([^)]*\)|\{[^}]*\}")
_NUMBERING = re.compile(r"^\s*\d+\.\s*")
_PRONUNCIATION = re.compile(r"\s/[^/]*/")
_SEPARATORS = re.compile(r"[,;/|]")


@dataclass(eq=False)
class Dictionary:
    """A one-to-many word lexicon source -> target (ISO 639-1 codes).

    Stored as a sorted word list and a parallel list of space-joined translations: two string
    splits rebuild it from the cache (~0.05 s for 280K entries, where unpickling a dict of
    tuples takes ~0.3 s), and lookups bisect. Hashable by identity so callers can cache per
    dictionary.
    """

    source: str
    target: str
    words: list[str] = field(repr=False)  # sorted source words
    translations: list[str] = field(repr=False)  # space-joined target words, parallel to words
    origin: str = ""  # the dictd file it was built from, for reports

    @classmethod
    def from_mapping(
        cls, source: str, target: str, mapping: Mapping[str, Sequence[str]], origin: str = ""
    ) -> Dictionary:
        """Build from word -> translations (all already normalised single words)."""
        words = sorted(w for w, ts in mapping.items() if ts)
        return cls(source, target, words, [" ".join(mapping[w]) for w in words], origin)

    def translate(self, word: str) -> tuple[str, ...]:
        """All translations of a normalised word; empty when the word is not in the lexicon."""
        i = bisect_left(self.words, word)
        if i < len(self.words) and self.words[i] == word:
            return tuple(self.translations[i].split(" "))
        return ()

    def __len__(self) -> int:
        return len(self.words)


def _content_words(text: str, stop: frozenset[str]) -> list[str]:
    return [w for w in tokenize(text) if w not in stop]


def parse_entry(
    text: str, src_stop: frozenset[str], tgt_stop: frozenset[str]
) -> tuple[str, list[str]] | None:
    """(source word, target words) of one dictd entry, or None when it is not a one-word entry."""
    lines = text.split("\n")
    head = _BRACKETED.sub(" ", _PRONUNCIATION.sub(" ", lines[0]))
    head_words = _content_words(head, src_stop)
    if len(head_words) != 1:
        return None
    out: list[str] = []
    for line in lines[1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith('"') or _LABEL.match(line):
            continue
        body = _BRACKETED.sub(" ", _NUMBERING.sub("", stripped))
        for phrase in _SEPARATORS.split(body):
            out.extend(_content_words(phrase, tgt_stop))
    return (head_words[0], out) if out else None


def parse_entries(src: str, tgt: str, entries: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Lexicon src -> tgt from dictd entry texts: the translations of every one-word entry,
    merged per source word in order of first appearance (a word may head several entries)."""
    merged: dict[str, dict[str, None]] = {}
    src_stop, tgt_stop = STOP_WORDS[src], STOP_WORDS[tgt]
    for text in entries:
        parsed = parse_entry(text, src_stop, tgt_stop)
        if parsed is not None:
            merged.setdefault(parsed[0], {}).update(dict.fromkeys(parsed[1]))
    return {w: tuple(ts) for w, ts in merged.items()}


def invert(table: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """target -> source lexicon from a source -> target one (used when only the reverse exists)."""
    inv: dict[str, dict[str, None]] = {}
    for word, translations in table.items():
        for t in translations:
            inv.setdefault(t, {})[word] = None
    return {w: tuple(ts) for w, ts in inv.items()}


def canonical_direction(lang_a: str, lang_b: str) -> tuple[str, str]:
    """(source, target) in which a pair of languages is always translated.

    One direction per pair of languages makes a comparison independent of argument order
    (``compare alice-en alice-fr`` and ``compare alice-fr alice-en`` are the same
    computation). Into English when English is one side — English words are the least
    inflected, and on the real Gutenberg translations de→en, fr→en and es→en give more
    ordered evidence than the reverse (docs/EVALUATION.md); otherwise from the language whose
    code sorts first.
    """
    if lang_b == "en" or (lang_a != "en" and lang_a <= lang_b):
        return lang_a, lang_b
    return lang_b, lang_a


def merge_tables(*tables: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """The union of lexicons of one direction: every translation of each word, first seen first.

    Both FreeDict files of a pair (source→target and the inverted target→source) list words
    the other lacks; merged, a word found in either is translated.
    """
    merged: dict[str, dict[str, None]] = {}
    for table in tables:
        for word, translations in table.items():
            merged.setdefault(word, {}).update(dict.fromkeys(translations))
    return {w: tuple(ts) for w, ts in merged.items() if ts}


def compose(
    first: Mapping[str, Sequence[str]], second: Mapping[str, Sequence[str]], *, cap: int = 12
) -> dict[str, tuple[str, ...]]:
    """A pivot lexicon a→c from a→b and b→c (e.g. fr→en→it): each word's translations'
    translations, at most ``cap`` of them (a pivot multiplies senses; the first ones, from the
    first senses, are kept)."""
    out: dict[str, tuple[str, ...]] = {}
    for word, mids in first.items():
        seen: dict[str, None] = {}
        for mid in mids:
            seen.update(dict.fromkeys(second.get(mid, ())))
            if len(seen) >= cap:
                break
        if seen:
            out[word] = tuple(seen)[:cap]
    return out
