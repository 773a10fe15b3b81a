"""FreeDict dictd files: reading, inverting, the parsed-table cache, errors, choosing a lexicon.

Most tests write a small dictd dictionary of their own (index + gzipped entries); the ones
marked ``needs_freedict`` check the real Debian files (entry counts, inversion, speed).
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest

from bookdup.dictionary import Dictionary
from bookdup.stemming import stem_lexicon, stemmer_version
from bookdup.translate import hashed_lexicon, translate_with_source
from readers import dictionaries
from readers.dictionaries import (
    DICTD_DIR,
    Dictionaries,
    available_pairs,
    load_dictionary,
    resolve_dictionary,
)

needs_freedict = pytest.mark.skipif(
    not (DICTD_DIR / "freedict-eng-deu.index").exists(), reason="dict-freedict-eng-deu missing"
)

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

# headword(s) in the index -> entry text; two headwords share the "house" entry (one offset).
ENG_DEU = {
    ("00databaseinfo",): "00databaseinfo\nThis is info about the database\n",
    ("house", "houses"): "house /hˈaʊs/ <n>\n1. Haus <neu>\n2. Gebäude; Heim\n",
    ("king",): "king /kˈɪŋ/\nKönig <masc>\n   see: {queen}\n",
    ("to go",): "to go\ngehen, fahren\n",
    ("big house",): "big house\nGroßhaus\n",
}
EN_DE = {"go": ("gehen", "fahren"), "house": ("haus", "gebäude", "heim"), "king": ("könig",)}


def _b64(n: int) -> str:
    digits = ""
    while True:
        n, r = divmod(n, 64)
        digits = _B64[r] + digits
        if n == 0:
            return digits


def write_dictd(directory: Path, name: str, entries: dict[tuple[str, ...], str]) -> Path:
    """A dictd dictionary ``freedict-<name>`` in ``directory``: index and gzipped data."""
    directory.mkdir(parents=True, exist_ok=True)
    data, lines = b"", []
    for headwords, text in entries.items():
        raw = text.encode("utf-8")
        for head in headwords:
            lines.append(f"{head}\t{_b64(len(data))}\t{_b64(len(raw))}\n")
        data += raw
    index = directory / f"freedict-{name}.index"
    index.write_text("".join(sorted(lines)), encoding="utf-8")
    with gzip.open(directory / f"freedict-{name}.dict.dz", "wb") as fh:
        fh.write(data)
    return index


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty parsed-table cache folder ($XDG_CACHE_HOME/bookdup/dict)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "bookdup" / "dict"


@pytest.fixture
def dictd(tmp_path: Path) -> Path:
    """A dictd folder holding only an eng-deu dictionary."""
    write_dictd(tmp_path / "dictd", "eng-deu", ENG_DEU)
    return tmp_path / "dictd"


def table(d: Dictionary) -> dict[str, tuple[str, ...]]:
    return {w: tuple(t.split(" ")) for w, t in zip(d.words, d.translations, strict=True)}


def test_load_parses_each_entry_once_and_skips_info(dictd: Path, cache: Path) -> None:
    d = load_dictionary("en", "de", directory=dictd)
    assert (d.source, d.target, d.origin) == ("en", "de", str(dictd / "freedict-eng-deu"))
    # "houses" is a second index line for the house entry; the 00database entry is skipped.
    assert table(d) == EN_DE
    assert d.translate("house") == ("haus", "gebäude", "heim")


def test_reverse_pair_is_inverted(dictd: Path, cache: Path) -> None:
    d = load_dictionary("de", "en", directory=dictd)
    assert (d.source, d.target, d.origin) == ("de", "en", str(dictd / "freedict-eng-deu"))
    assert table(d) == {
        "fahren": ("go",),
        "gebäude": ("house",),
        "gehen": ("go",),
        "haus": ("house",),
        "heim": ("house",),
        "könig": ("king",),
    }


def test_cache_file_is_written_and_used(dictd: Path, cache: Path) -> None:
    first = load_dictionary("en", "de", directory=dictd)
    index, data = dictd / "freedict-eng-deu.index", dictd / "freedict-eng-deu.dict.dz"
    si, sd = index.stat(), data.stat()
    key = f"{si.st_mtime_ns}-{si.st_size}-{sd.st_mtime_ns}-{sd.st_size}.pkl"
    path = cache / f"freedict-eng-deu-v2-{key}"
    # the merged lexicon, its stem lexicon, and each file parsed
    (lexicon,) = (p for p in cache.glob("lexicon-en-de-*.pkl") if "-stems-" not in p.name)
    stems = lexicon.with_name(f"{lexicon.stem}-stems-v1-{stemmer_version()}.pkl")
    hashed = [p.with_name(f"{p.stem}-hashed-v1.npz").name for p in (lexicon, stems)]
    names = sorted([path.name, lexicon.name, stems.name, *hashed])
    assert sorted(p.name for p in cache.iterdir()) == names
    with open(path, "rb") as fh:
        assert pickle.load(fh) == ("\n".join(first.words), "\n".join(first.translations))
    # the next load reads the cache, not the dictd files
    with open(lexicon, "wb") as fh:
        pickle.dump(("king", "kaiser", "cached"), fh)
    assert table(load_dictionary("en", "de", directory=dictd)) == {"king": ("kaiser",)}
    # the inverted table has its own file
    load_dictionary("de", "en", directory=dictd)
    assert (cache / f"freedict-eng-deu-v2-inv-{key}").exists()


def test_stem_lexicon_is_cached_beside_the_lexicon(
    dictd: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: stemming every lexicon a `match` needs was most of its ~7-16 s; the stem
    lexicon is computed once, kept beside the lexicon, and read back without stemming."""
    first = stem_lexicon(load_dictionary("en", "de", directory=dictd))
    assert first is not None
    assert list(cache.glob(f"lexicon-en-de-*-stems-v1-{stemmer_version()}.pkl"))

    def no_stemming(*_args: object) -> None:
        raise AssertionError("stemmed again")

    monkeypatch.setattr("bookdup.stemming.stem_words", no_stemming)
    again = stem_lexicon(load_dictionary("en", "de", directory=dictd))
    assert again is not None and again is not first
    assert table(again) == table(first) and again.origin == first.origin


def test_hashed_lexicon_is_cached_beside_the_lexicon(
    dictd: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: hashing the lexicons (and their stem lexicons) was ~2.7 s of every dedup
    run; the arrays are kept beside each lexicon and read back equal, without hashing."""
    d = load_dictionary("en", "de", directory=dictd)
    first = hashed_lexicon(d)
    stemmed = stem_lexicon(d)
    assert stemmed is not None
    first_stems = hashed_lexicon(stemmed)
    assert len(list(cache.glob("lexicon-en-de-*-hashed-v1.npz"))) == 2  # lexicon and stems

    def no_hashing(*_args: object) -> None:
        raise AssertionError("hashed again")

    monkeypatch.setattr("bookdup.translate._build", no_hashing)
    again = load_dictionary("en", "de", directory=dictd)
    again_stems = stem_lexicon(again)
    assert again_stems is not None
    for old, new in ((first, hashed_lexicon(again)), (first_stems, hashed_lexicon(again_stems))):
        for name, array in old.arrays().items():
            assert (
                np.array_equal(array, new.arrays()[name])
                and array.dtype == new.arrays()[name].dtype
            )
    words = ["house", "king", "zebra"]
    out, _, _ = translate_with_source(words, np.arange(3), again)
    expected, _, _ = translate_with_source(words, np.arange(3), d)
    assert out.tolist() == expected.tolist()


def test_unusable_or_stale_cache_reparses(dictd: Path, cache: Path) -> None:
    load_dictionary("en", "de", directory=dictd)
    for path in cache.iterdir():
        path.write_bytes(b"not a pickle")
    assert table(load_dictionary("en", "de", directory=dictd)) == EN_DE
    # a changed dictd file (size, mtime) gets new cache entries
    write_dictd(dictd, "eng-deu", {("king",): "king\nKönig, Herrscher\n"})
    assert table(load_dictionary("en", "de", directory=dictd)) == {"king": ("könig", "herrscher")}
    # parsed file, lexicon and its stems, each of the last two hashed, twice
    assert len(list(cache.iterdir())) == 10


def test_unwritable_cache_only_costs_time(
    dictd: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert table(load_dictionary("en", "de", directory=dictd)) == EN_DE


def test_missing_pair_names_package(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dict-freedict-eng-deu"):
        load_dictionary("en", "de", directory=tmp_path)
    with pytest.raises(ValueError, match="en->en"):
        load_dictionary("en", "en")
    with pytest.raises(ValueError, match="nl"):
        load_dictionary("en", "nl")
    assert available_pairs(tmp_path) == []


def test_available_pairs_needs_both_files_and_known_languages(tmp_path: Path) -> None:
    write_dictd(tmp_path, "eng-deu", ENG_DEU)
    write_dictd(tmp_path, "eng-nld", {("king",): "king\nkoning\n"})  # Dutch: not supported
    write_dictd(tmp_path, "fra-spa", {("roi",): "roi\nrey\n"})
    (tmp_path / "freedict-fra-spa.dict.dz").unlink()  # index without data
    assert available_pairs(tmp_path) == [("de", "en"), ("en", "de")]


def test_resolve_automatic(dictd: Path, cache: Path) -> None:
    d = resolve_dictionary("en", "de", None, directory=dictd)
    assert d is not None and (d.source, d.target) == ("de", "en")  # canonical: into English
    again = resolve_dictionary("de", "en", None, directory=dictd)
    assert again is not None and (again.source, again.target) == ("de", "en")
    assert resolve_dictionary("en", "en", None, directory=dictd) is None
    assert resolve_dictionary("und", "de", None, directory=dictd) is None
    assert resolve_dictionary("en", "fr", None, directory=dictd) is None  # not installed


def test_resolve_named_pair_in_its_canonical_direction(dictd: Path, cache: Path) -> None:
    for name in ("eng-deu", "en-de", "de-en", " DEU-eng"):
        for x, y in (("en", "de"), ("de", "en")):
            d = resolve_dictionary(x, y, name, directory=dictd)
            assert d is not None and (d.source, d.target) == ("de", "en"), name
    # an undetermined language is taken to be the other side of the named pair
    d = resolve_dictionary("und", "en", "eng-deu", directory=dictd)
    assert d is not None and (d.source, d.target) == ("de", "en")


def test_named_dictionary_that_does_not_fit_is_an_error(dictd: Path, cache: Path) -> None:
    for x, y in (("fr", "es"), ("en", "fr"), ("en", "en"), ("de", "de")):
        with pytest.raises(ValueError, match="does not fit these books"):
            resolve_dictionary(x, y, "eng-deu", directory=dictd)
    with pytest.raises(ValueError, match="does not fit"):
        resolve_dictionary("en", "de", "eng-eng", directory=dictd)
    lexicon = Dictionary.from_mapping("fr", "es", {"roi": ["rey"]})
    assert resolve_dictionary("en", "de", lexicon, directory=dictd) is lexicon


def test_resolve_errors(dictd: Path, cache: Path) -> None:
    with pytest.raises(ValueError, match="unknown language code 'klingon'"):
        resolve_dictionary("en", "de", "klingon-deu", directory=dictd)
    with pytest.raises(ValueError, match="must look like 'eng-spa'"):
        resolve_dictionary("en", "de", "engdeu", directory=dictd)
    with pytest.raises(ValueError, match="dict-freedict-fra-spa"):
        resolve_dictionary("fr", "es", "fr-es", directory=dictd)


def test_dictionaries_load_each_pair_once(
    dictd: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[tuple[str, str]] = []
    real = dictionaries.load_dictionary

    def counting(source: str, target: str, *, directory: Path = DICTD_DIR) -> Dictionary:
        loads.append((source, target))
        return real(source, target, directory=directory)

    monkeypatch.setattr(dictionaries, "load_dictionary", counting)
    lexicons = Dictionaries(True, dictd)
    assert lexicons.targets("en") == ["de"] and lexicons.targets("de") == ["en"]
    assert lexicons.targets("fr") == []
    assert lexicons.get("en", "fr") is None
    first = lexicons.get("en", "de")
    assert first is not None and table(first) == EN_DE
    assert lexicons.get("en", "de") is first
    assert loads == [("en", "de")]
    disabled = Dictionaries(False, dictd)
    assert disabled.targets("en") == [] and disabled.get("en", "de") is None
    assert loads == [("en", "de")]


def test_unreachable_language_pairs_are_named(dictd: Path, cache: Path) -> None:
    """A job warns of the indexed languages no lexicon joins (their translations are never
    searched); undetermined books and disabled translations ask nothing of a lexicon."""
    lexicons = Dictionaries(True, dictd)  # en-de only
    assert lexicons.unreachable(["en", "de"]) == []
    assert lexicons.unreachable(["fr", "de", "en", "und", "de"]) == [("de", "fr"), ("en", "fr")]
    assert Dictionaries(False, dictd).unreachable(["en", "fr"]) == []


def test_one_edit_lookups_are_built_once_then_read_from_the_cache(
    dictd: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A noisy book's first process builds its language's lookup; every later one reads it
    back (German's took ~2.2 s to build), and other headwords get their own."""
    lexicons = Dictionaries(True, dictd)
    heads = ["haus", "garten", "fenster", "strasse"]
    built = lexicons.one_edit_lookup("de", heads)
    assert (
        built.find(["gartem", "fenstr", "haus"]).tolist()
        == built.find(["garten", "fenster", "haus"]).tolist()
    )
    assert len(list(cache.glob("lookup-de-*.npz"))) == 1

    def no_build(_words: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(dictionaries.OneEditLookup, "build", no_build)
    again = Dictionaries(True, dictd).one_edit_lookup("de", list(reversed(heads)))
    assert np.array_equal(again.keys, built.keys) and np.array_equal(again.heads, built.heads)
    with pytest.raises(AssertionError, match="built again"):
        lexicons.one_edit_lookup("de", [*heads, "kirche"])


@needs_freedict
def test_real_dictionaries_entry_counts() -> None:
    en_de = load_dictionary("en", "de")
    # TRANS used a 62K-entry English-German lexicon; FreeDict eng-deu gives ~100K one-word entries.
    assert 80_000 < len(en_de) < 150_000
    assert "könig" in en_de.translate("king")
    assert "herz" in en_de.translate("heart")
    assert "nacht" in en_de.translate("night")
    fr_en = load_dictionary("fr", "en")
    assert 5_000 < len(fr_en) < 10_000
    assert fr_en.translate("roi") == ("king",)
    assert all(" " not in t for ts in en_de.translations[:1000] for t in ts.split(" "))


@needs_freedict
def test_second_load_is_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = load_dictionary("en", "de")
    assert list((tmp_path / "bookdup" / "dict").glob("freedict-eng-deu-*.pkl"))

    def no_parsing(*_args: object) -> None:
        raise AssertionError("the dictd files were parsed again instead of read from the cache")

    monkeypatch.setattr(dictionaries, "_iter_entries", no_parsing)
    second = load_dictionary("en", "de")
    assert second.words == first.words and second.translations == first.translations


def only_pairs(folder: Path, *stems: str) -> Path:
    """A dictd folder holding only the named real FreeDict pairs (links, nothing copied), so a
    test does not depend on which other packages the machine has."""
    folder.mkdir()
    for stem in stems:
        for suffix in (".index", ".dict.dz"):
            (folder / f"{stem}{suffix}").symlink_to(DICTD_DIR / f"{stem}{suffix}")
    return folder


@needs_freedict
def test_inverts_when_only_reverse_exists(tmp_path: Path) -> None:
    # Only freedict-spa-deu: de->es is built by inverting it.
    folder = only_pairs(tmp_path / "dictd", "freedict-spa-deu")
    de_es = load_dictionary("de", "es", directory=folder)
    assert len(de_es) > 5_000
    assert "rey" in de_es.translate("könig")


@needs_freedict
def test_available_pairs_lists_both_directions(tmp_path: Path) -> None:
    folder = only_pairs(tmp_path / "dictd", "freedict-eng-deu", "freedict-spa-deu")
    pairs = available_pairs(folder)
    assert ("en", "de") in pairs and ("de", "en") in pairs
    assert ("de", "es") in pairs  # via spa-deu
    assert ("fr", "es") not in pairs
    assert ("fr", "es") not in available_pairs(tmp_path / "empty")
