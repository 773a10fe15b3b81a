"""FreeDict dictd files in, `bookdup.dictionary.Dictionary` out; which lexicon a pair needs.

A dictd dictionary is two files: ``freedict-<src3>-<tgt3>.index`` (one line per headword: the
word, then the entry's offset and length in base64 digits, tab-separated) and the gzipped entry
texts ``freedict-<src3>-<tgt3>.dict.dz``. The entries are parsed by the core
(``bookdup.dictionary.parse_entries``); a pair whose file exists only the other way round is
built by inverting it.

Parsing the 80 MB eng-deu file takes seconds, so the parsed table is cached under
``$XDG_CACHE_HOME/bookdup/dict/`` (default ``~/.cache``), keyed by the dictd files' mtime and size.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import pickle
import zipfile
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bookdup.dictionary import (
    ISO3,
    Dictionary,
    canonical_direction,
    compose,
    invert,
    merge_tables,
    parse_entries,
)
from bookdup.editlookup import OneEditLookup
from bookdup.langid import UNDETERMINED
from bookdup.stemming import remember_stem_lexicon, stem_lexicon, stemmer_version
from bookdup.translate import HashedLexicon, hashed_lexicon, remember_hashed_lexicon

__all__ = [
    "DICTD_DIR",
    "Dictionaries",
    "available_pairs",
    "load_dictionary",
    "resolve_dictionary",
]

DICTD_DIR = Path("/usr/share/dictd")
_CACHE_VERSION = 2
_LOOKUP_VERSION = 2  # one-edit lookups (``bookdup.editlookup``)
_LEXICON_VERSION = 1
_STEMS_VERSION = 1
#: Of the hashed form (``bookdup.translate.HashedLexicon``): bump when word hashing changes.
_HASHED_VERSION = 1
#: Through English (source → eng → target) when a pair without English has fewer entries
#: than this in its own files (both directions merged): only where it has none. Measured on
#: the real Gutenberg translations (docs/EVALUATION.md): a pivot through FreeDict's small
#: English lexicons adds noise even to the small direct lexicons — z of Werther de–fr 23 →
#: 13, Alice de–it (7K entries) 19 → 10 — so it only serves pairs with no file at all.
PIVOT_BELOW = 1

_B64 = {
    c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}


def _decode_b64(s: str) -> int:
    v = 0
    for c in s:
        v = v * 64 + _B64[c]
    return v


def _paths(src3: str, tgt3: str, directory: Path) -> tuple[Path, Path]:
    stem = directory / f"freedict-{src3}-{tgt3}"
    return stem.with_suffix(".index"), Path(f"{stem}.dict.dz")


def _iter_entries(index: Path, data_path: Path) -> Iterator[str]:
    """Entry texts in index order (each distinct offset once; the server's info entries skipped)."""
    with gzip.open(data_path) as fh:
        data = fh.read()
    seen: set[int] = set()
    with open(index, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or parts[0].startswith("00database") or parts[0].startswith("00-"):
                continue
            off = _decode_b64(parts[1])
            if off in seen:
                continue
            seen.add(off)
            yield data[off : off + _decode_b64(parts[2])].decode("utf-8", "replace")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bookdup" / "dict"


def _cached_dictionary(src: str, tgt: str, index: Path, data: Path, inverted: bool) -> Dictionary:
    st_i, st_d = index.stat(), data.stat()
    key = f"{index.stem}-v{_CACHE_VERSION}-{'inv-' if inverted else ''}"
    key += f"{st_i.st_mtime_ns}-{st_i.st_size}-{st_d.st_mtime_ns}-{st_d.st_size}.pkl"
    path = _cache_dir() / key
    origin = str(index.with_suffix(""))
    try:
        with open(path, "rb") as fh:
            words, translations = pickle.load(fh)
        return Dictionary(src, tgt, words.split("\n"), translations.split("\n"), origin)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        pass  # no usable cache file: parse the dictd files below
    if inverted:
        table = invert(parse_entries(tgt, src, _iter_entries(index, data)))
    else:
        table = parse_entries(src, tgt, _iter_entries(index, data))
    d = Dictionary.from_mapping(src, tgt, table, origin)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            blob = ("\n".join(d.words), "\n".join(d.translations))
            pickle.dump(blob, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs time
    return d


def _file_dictionary(src: str, tgt: str, directory: Path) -> list[Dictionary]:
    """The lexicons src → tgt read from the pair's own files: the src-tgt file and the
    tgt-src file inverted, each when installed."""
    out = []
    for inverted, (a, b) in ((False, (src, tgt)), (True, (tgt, src))):
        index, data = _paths(ISO3[a], ISO3[b], directory)
        if index.exists() and data.exists():
            out.append(_cached_dictionary(src, tgt, index, data, inverted))
    return out


def _as_table(d: Dictionary) -> dict[str, list[str]]:
    return dict(zip(d.words, (t.split(" ") for t in d.translations), strict=True))


def _direct_table(src: str, tgt: str, directory: Path) -> tuple[dict[str, tuple[str, ...]], str]:
    """Both FreeDict files of the pair merged into one src → tgt table, and their names."""
    parts = _file_dictionary(src, tgt, directory)
    return merge_tables(*(_as_table(d) for d in parts)), " + ".join(d.origin for d in parts)


def _files_key(directory: Path, codes: set[str]) -> str:
    """Stat of every installed dictd file between ``codes``: a cache key that changes with them."""
    parts = []
    for index in sorted(directory.glob("freedict-*-*.index")):
        langs = index.stem.split("-")[1:]
        if len(langs) == 2 and set(langs) <= codes:
            st = index.stat()
            parts.append(f"{index.stem}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def build_lexicon(
    source: str, target: str, *, directory: Path = DICTD_DIR, pivot_below: int = PIVOT_BELOW
) -> Dictionary:
    """The source → target lexicon: both files of the pair merged, plus a pivot through
    English when the pair has no English side and fewer than ``pivot_below`` entries."""
    table, origin = _direct_table(source, target, directory)
    if "en" not in (source, target) and len(table) < pivot_below:
        to_en, _ = _direct_table(source, "en", directory)
        from_en, _ = _direct_table("en", target, directory)
        pivoted = compose(to_en, from_en)
        if pivoted:
            table = merge_tables(table, pivoted)
            origin = f"{origin} + pivot {source}-en-{target}".lstrip(" +")
    return Dictionary.from_mapping(source, target, table, origin)


def load_dictionary(source: str, target: str, *, directory: Path = DICTD_DIR) -> Dictionary:
    """Lexicon source -> target from FreeDict: both directions' files merged, pivoted through
    English where the pair is small or missing (``build_lexicon``); cached on disk."""
    if source not in ISO3 or target not in ISO3 or source == target:
        raise ValueError(
            f"no dictionary for {source}->{target}: languages must differ and be in {sorted(ISO3)}"
        )
    if (source, target) not in available_pairs(directory):
        src3, tgt3 = ISO3[source], ISO3[target]
        raise ValueError(
            f"no FreeDict dictionary for {source}->{target} in {directory}: install the Debian "
            f"package dict-freedict-{src3}-{tgt3} (or dict-freedict-{tgt3}-{src3}, or both "
            f"dict-freedict-{src3}-eng and dict-freedict-eng-{tgt3} to pivot through English)"
        )
    key = _files_key(directory, {ISO3[source], ISO3[target], "eng"})
    path = _cache_dir() / f"lexicon-{source}-{target}-v{_LEXICON_VERSION}-{key}.pkl"
    d = _read_cached(path, source, target)
    if d is None:
        d = build_lexicon(source, target, directory=directory)
        _write_cached(path, d)
    _with_hashed(d, path)
    _with_stems(d, path)
    return d


def _read_cached(path: Path, source: str, target: str) -> Dictionary | None:
    try:
        with open(path, "rb") as fh:
            words, translations, origin = pickle.load(fh)
        return Dictionary(source, target, words.split("\n"), translations.split("\n"), origin)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError):
        return None  # not cached yet


def _write_cached(path: Path, d: Dictionary) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            blob = ("\n".join(d.words), "\n".join(d.translations), d.origin)
            pickle.dump(blob, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs time


def _with_stems(d: Dictionary, path: Path) -> None:
    """Attach the lexicon's stem lexicon (``bookdup.stemming.stem_lexicon``), cached beside it:
    stemming every entry of the lexicons a `match` needs was most of its time (13 of 16 s
    for an English text against books in four other languages), reading them back is ~0.1 s
    each. Keyed by the lexicon's cache file and the stemmers' version."""
    stems = path.with_name(f"{path.stem}-stems-v{_STEMS_VERSION}-{stemmer_version()}.pkl")
    cached = _read_cached(stems, d.source, d.target)
    if cached is not None:
        remember_stem_lexicon(d, cached)
        _with_hashed(cached, stems)
        return
    stemmed = stem_lexicon(d)  # remembered for this lexicon object by the core
    if stemmed is not None:
        _write_cached(stems, stemmed)
        _with_hashed(stemmed, stems)


def _with_hashed(d: Dictionary, path: Path) -> None:
    """Attach the lexicon's hashed form (``bookdup.translate.HashedLexicon``), cached beside
    the lexicon's own cache file ``path``: hashing and grouping every entry took ~2.7 s of each
    dedup run for the 40 lexicons of five languages (stem lexicons included), ~70 ms each,
    where reading the arrays back takes a few ms. The arrays are stamped with the cache file's
    mtime and size, so a rewritten lexicon is hashed again; without a cache file (a read-only
    cache) the lexicon is hashed in memory when first used."""
    try:
        st = path.stat()
    except OSError:
        return
    stamp = np.array([st.st_mtime_ns, st.st_size], dtype=np.int64)
    hashed = path.with_name(f"{path.stem}-hashed-v{_HASHED_VERSION}.npz")
    try:
        with np.load(hashed, allow_pickle=False) as arrays:
            if np.array_equal(arrays["stamp"], stamp):
                remember_hashed_lexicon(d, HashedLexicon.from_arrays(arrays))
                return
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        pass  # no usable cache file: hash the lexicon below
    lexicon = hashed_lexicon(d)  # remembered for this lexicon object by the core
    try:
        tmp = hashed.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            blob: dict[str, Any] = {"stamp": stamp, **lexicon.arrays()}
            np.savez(fh, **blob)
        os.replace(tmp, hashed)
    except OSError:
        pass  # a read-only cache only costs time


def available_pairs(directory: Path = DICTD_DIR) -> list[tuple[str, str]]:
    """(source, target) pairs loadable from ``directory``: from a file of the pair (either
    direction), or through English when both legs are installed."""
    code = {v: k for k, v in ISO3.items()}
    pairs: set[tuple[str, str]] = set()
    for index in directory.glob("freedict-*-*.index"):
        parts = index.name.removesuffix(".index").split("-")
        if len(parts) != 3 or parts[1] not in code or parts[2] not in code:
            continue
        if not Path(f"{index.with_suffix('')}.dict.dz").exists():
            continue
        a, b = code[parts[1]], code[parts[2]]
        pairs.update({(a, b), (b, a)})
    to_en = {a for a, b in pairs if b == "en"}
    pairs.update((a, b) for a in to_en for b in to_en if a != b)
    return sorted(pairs)


def _iso1(code: str) -> str:
    """ISO 639-1 from a 639-1 or 639-3 code ("eng" → "en")."""
    code = code.strip().lower()
    by3 = {v: k for k, v in ISO3.items()}
    if code in ISO3:
        return code
    if code in by3:
        return by3[code]
    raise ValueError(f"unknown language code {code!r}; known: {sorted(ISO3)} or {sorted(by3)}")


def resolve_dictionary(
    lang_x: str,
    lang_y: str,
    dictionary: str | Dictionary | None,
    *,
    directory: Path = DICTD_DIR,
) -> Dictionary | None:
    """The lexicon between x's and y's languages, or None for no translation.

    The lexicon goes in the pair's canonical direction (``canonical_direction``), whichever
    book is x: ``bookdup.compare`` translates the book in its source language, so the answer
    does not depend on argument order.

    ``None``: automatic — a dictionary is used when the languages differ, both are known and
    the pair is reachable. A name such as ``"eng-spa"`` or ``"en-es"`` forces that pair of
    languages; it must fit the books (every detected language one of its two; two detected
    languages must differ). A ``Dictionary`` is used as given. ValueError for a malformed
    name, an unknown language, a pair that does not fit or one that is not installed: never a
    silent fall back to no translation.
    """
    if isinstance(dictionary, Dictionary):
        return dictionary
    if dictionary is None:
        if lang_x == lang_y or UNDETERMINED in (lang_x, lang_y):
            return None
        if (lang_x, lang_y) not in available_pairs(directory):
            return None
        return load_dictionary(*canonical_direction(lang_x, lang_y), directory=directory)
    src, sep, tgt = dictionary.partition("-")
    if not sep:
        raise ValueError(f"dictionary must look like 'eng-spa' or 'en-es', not {dictionary!r}")
    a, b = _iso1(src), _iso1(tgt)
    known = [lang for lang in (lang_x, lang_y) if lang != UNDETERMINED]
    if a == b or any(lang not in (a, b) for lang in known) or len(set(known)) < len(known):
        raise ValueError(
            f"dictionary {dictionary!r} does not fit these books: they were identified as "
            f"{lang_x} and {lang_y}, and a {a}-{b} lexicon needs one book in {a} and one in {b}"
        )
    return load_dictionary(*canonical_direction(a, b), directory=directory)


class Dictionaries:
    """FreeDict lexicons loaded on first use, keyed by (source, target) language."""

    def __init__(self, enabled: bool, directory: Path = DICTD_DIR) -> None:
        self.enabled = enabled
        self._directory = directory
        self._pairs = set(available_pairs(directory)) if enabled else set()
        self._loaded: dict[tuple[str, str], Dictionary] = {}

    def targets(self, source: str) -> list[str]:
        """Languages reachable from ``source`` (sorted); none when disabled."""
        return sorted(t for s, t in self._pairs if s == source)

    def unreachable(self, languages: Iterable[str]) -> list[tuple[str, str]]:
        """Pairs (a < b) of ``languages`` with no lexicon either way: their translations are
        never searched. None when translations are off (nothing was asked of a lexicon)."""
        if not self.enabled:
            return []
        known = sorted(set(languages) - {UNDETERMINED})
        return [
            (a, b)
            for i, a in enumerate(known)
            for b in known[i + 1 :]
            if (a, b) not in self._pairs and (b, a) not in self._pairs
        ]

    def one_edit_lookup(self, language: str, headwords: Collection[str]) -> OneEditLookup:
        """The one-edit lookup of ``headwords`` (``bookdup.editlookup``), cached on disk by
        their digest: building German's took ~2.2 s of every process that met a noisy book
        (an index worker, a dedup job), reading it back a few ms."""
        text = "\n".join(sorted(headwords)).encode("utf-8")
        digest = hashlib.blake2b(text, digest_size=12).hexdigest()
        path = _cache_dir() / f"lookup-{language}-v{_LOOKUP_VERSION}-{digest}.npz"
        try:
            with np.load(path, allow_pickle=False) as arrays:
                return OneEditLookup(arrays["keys"], arrays["heads"])
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            pass  # no usable cache file: build it below
        lookup = OneEditLookup.build(headwords)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            with open(tmp, "wb") as fh:
                np.savez(fh, keys=lookup.keys, heads=lookup.heads)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache only costs time
        return lookup

    def get(self, source: str, target: str) -> Dictionary | None:
        """The source -> target lexicon, loaded once; None when the pair is not installed."""
        if (source, target) not in self._pairs:
            return None
        if (source, target) not in self._loaded:
            self._loaded[(source, target)] = load_dictionary(
                source, target, directory=self._directory
            )
        return self._loaded[(source, target)]
