"""OCR text normalisation: the one place that decides what a "word" is.

Every signature (unique words, shingles, language) is computed from these words, so two
editions only match if they normalise alike. Rules:

* Unicode NFKC (ligatures such as ``ﬁ`` and full-width forms fold to plain letters), then
  ``str.casefold`` (``Straße`` and ``STRASSE`` become the same word), then NFKC again (casefold
  may decompose, e.g. Greek ``ῇ``), so words always come out composed.
* A word is a maximal run of Unicode letters (categories L*, plus combining marks M* so that
  scripts written with marks keep their words whole). Punctuation, digits (page numbers would
  otherwise align by themselves), symbols and underscores separate words. This works for Latin,
  Greek, Cyrillic and other scripts alike. Apostrophes split words (``don't`` -> ``don``, ``t``;
  ``l'homme`` -> ``l``, ``homme``) so elision does not multiply the vocabulary.
* A hyphen (``-``, U+2010 or a soft hyphen) at the end of a line between two letters is removed
  together with the line break and the next line's indentation: ``exam-\\n  ple`` ->
  ``example``. Soft hyphens elsewhere vanish. Hyphenation across a page boundary is not
  re-joined: each page keeps its own words.

Speed: a regex ``findall`` over ``[^\\W\\d_]+`` costs ~30 ms per 100K words; classifying code
points with a numpy lookup table and letting ``str.split`` cut the words costs about half
(``str.split`` creating the word objects is most of what remains). All pages are processed as
one string joined by a sentinel word (``\\x01``), so per-call overhead is paid once per book.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache

import numpy as np

_HYPHENS = "-\u2010\u00ad"
# Literal-led pattern (fast scan); the letters on both sides are checked in _join_hyphen.
_LINE_END_HYPHEN = re.compile(r"[-\u2010\u00ad][ \t]*\r?\n[ \t]*")
PAGE_BREAK = "\x01"  # a control character: never in text, so never a real word
_PAGE_JOIN = f" {PAGE_BREAK} "
# ASCII fast path: lower-case letters, everything else becomes a space.
_ASCII_TABLE = bytes(
    b + 32 if 65 <= b <= 90 else b if 97 <= b <= 122 or b == 1 else 32 for b in range(256)
)


@cache
def _bmp_word_chars() -> np.ndarray:
    """Boolean table over the Basic Multilingual Plane: True for letters and marks."""
    table = np.fromiter(
        (unicodedata.category(chr(i))[0] in "LM" for i in range(0x10000)), bool, count=0x10000
    )
    table[ord(PAGE_BREAK)] = True  # survives as its own word, marks page boundaries
    return table


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def _join_hyphen(m: re.Match[str]) -> str:
    s, e = m.string, m.end()
    before = s[m.start() - 1] if m.start() > 0 else " "
    after = s[e] if e < len(s) else " "
    return "" if before.isalpha() and after.isalpha() else m.group(0)


def _split_words(text: str) -> list[str]:
    """Normalise a whole string and split it into words (the sentinel is kept as a word)."""
    if "-" in text or "\u2010" in text or "\u00ad" in text:
        text = _LINE_END_HYPHEN.sub(_join_hyphen, text)
        if "\u00ad" in text:
            text = text.replace("\u00ad", "")
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_TABLE).decode("ascii").split()
    # casefold can leave decomposed sequences (Greek iota subscript): normalise again after it
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).copy()
    bmp = cps < 0x10000
    keep = np.zeros(cps.shape, dtype=bool)
    keep[bmp] = _bmp_word_chars()[cps[bmp]]
    if not bmp.all():  # astral code points: classify each distinct one directly
        astral = np.flatnonzero(~bmp)
        for cp in np.unique(cps[astral]).tolist():
            if _is_word_char(chr(cp)):
                keep[astral[cps[astral] == cp]] = True
    cps[~keep] = 32
    return cps.tobytes().decode("utf-32-le").split()


def tokenize(text: str) -> list[str]:
    """Normalise one string (a page) into its list of words."""
    if PAGE_BREAK in text:
        text = text.replace(PAGE_BREAK, " ")
    return _split_words(text)


def normalise_joined(pages: Sequence[str]) -> list[str]:
    """All pages' words in one list, with a ``PAGE_BREAK`` word between consecutive pages.

    The fast path for whole books: no per-page lists are built.
    """
    if not pages:
        return []
    joined = _PAGE_JOIN.join(pages)
    if joined.count(PAGE_BREAK) != len(pages) - 1:  # the sentinel occurs in the text itself
        joined = _PAGE_JOIN.join(p.replace(PAGE_BREAK, " ") for p in pages)
    return _split_words(joined)


def normalise_pages(pages: Sequence[str]) -> list[list[str]]:
    """Normalise every page; one word list per page, empty pages kept (pagination matters)."""
    words = normalise_joined(pages)
    out: list[list[str]] = []
    start = 0
    for _ in range(len(pages) - 1):
        end = words.index(PAGE_BREAK, start)
        out.append(words[start:end])
        start = end + 1
    if pages:
        out.append(words[start:])
    return out
