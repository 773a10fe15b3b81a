"""The generator's ground truth is what it claims: determinism, contiguous volumes, the requested
noise rate, dictionary translations, and pair relations derived as designed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from bookdup.text import tokenize
from generator import GeneratorConfig, generate_corpus
from generator.noise import add_noise
from generator.render import paginate, render_lines
from generator.translate import translate_prose, untranslated_word_map, word_options
from generator.truth import BookRecord, Segment, ground_truth, relation
from generator.wordmodel import load_wordmodel
from readers.dictionaries import available_pairs, load_dictionary

SMALL = dict(n_books=14, words_min=800, words_max=1500, languages=("en", "de"))


def _books(out: Path) -> dict[str, dict]:
    return {d["id"]: d for d in map(json.loads, (out / "books.jsonl").read_text().splitlines())}


def _body_words(out: Path, book: dict) -> list[str]:
    """Words of a .txt book after its title page."""
    pages = (out / book["file"]).read_text(encoding="utf-8").split("\f")
    return [w for p in pages[1:] for w in tokenize(p)]


def test_same_seed_same_corpus(tmp_path: Path) -> None:
    cfg = GeneratorConfig(seed=7, **SMALL, translation_fraction=0.0)
    generate_corpus(cfg, tmp_path / "a")
    generate_corpus(cfg, tmp_path / "b")
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    assert files_a == files_b
    for rel in files_a:
        if (tmp_path / "a" / rel).is_file() and rel.name != "corpus.json":  # holds timings
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    other = GeneratorConfig(seed=8, **SMALL, translation_fraction=0.0)
    generate_corpus(other, tmp_path / "c")
    assert (tmp_path / "c" / "books.jsonl").read_bytes() != (
        tmp_path / "a" / "books.jsonl"
    ).read_bytes()


def test_missing_lexicons_stop_the_generator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seed names one corpus: without the lexicons its translations cannot be made, and a
    corpus without them (the truth silently short of every translation) is refused."""
    monkeypatch.setattr("readers.dictionaries.available_pairs", lambda: [])
    cfg = GeneratorConfig(seed=7, **SMALL, translation_fraction=0.3)
    with pytest.raises(RuntimeError, match="no FreeDict lexicon for en-de, de-en"):
        generate_corpus(cfg, tmp_path / "a")


def test_regenerating_replaces_the_old_corpus(tmp_path: Path) -> None:
    """A corpus generated over another one is exactly the new corpus: books are written per
    format, and an old b000017.txt left beside a new b000017.hocr gave a reader the same id
    twice (a calibration run read the stale book and reported translations that were not)."""
    mixed = (("txt", 0.5), ("hocr", 0.5))
    generate_corpus(GeneratorConfig(seed=7, **SMALL, formats=mixed), tmp_path / "x")
    generate_corpus(GeneratorConfig(seed=8, **SMALL, formats=mixed), tmp_path / "x")
    generate_corpus(GeneratorConfig(seed=8, **SMALL, formats=mixed), tmp_path / "fresh")
    listing = {
        d: sorted(p.relative_to(tmp_path / d) for p in (tmp_path / d).rglob("*"))
        for d in ("x", "fresh")
    }
    assert listing["x"] == listing["fresh"]
    # a folder this generator did not write is never emptied
    foreign = tmp_path / "mine"
    (foreign / "books").mkdir(parents=True)
    (foreign / "books" / "thesis.txt").write_text("my own book")
    with pytest.raises(ValueError, match="not a generated corpus"):
        generate_corpus(GeneratorConfig(seed=8, **SMALL), foreign)
    assert (foreign / "books" / "thesis.txt").read_text() == "my own book"


def test_volume_is_contiguous_subset_of_the_set(tmp_path: Path) -> None:
    cfg = GeneratorConfig(
        seed=3,
        **{**SMALL, "n_books": 12},
        noise=(0.0, 0.0),
        edition_fraction=0.0,
        volume_fraction=1.0,
        translation_fraction=0.0,
        anthology_fraction=0.0,
        formats=(("txt", 1.0),),
    )
    generate_corpus(cfg, tmp_path)
    books = _books(tmp_path)
    volumes = [b for b in books.values() if b["kind"] == "volume"]
    assert volumes
    by_base: dict[str, list[dict]] = {}
    for v in volumes:
        by_base.setdefault(v["of"], []).append(v)
    for base_id, vols in by_base.items():
        full = _body_words(tmp_path, books[base_id])
        joined = " ".join(full)
        vols.sort(key=lambda v: v["segments"][0][1])
        words = []
        for v in vols:
            part = _body_words(tmp_path, v)
            assert len(part) > 0
            assert " ".join(part) in joined  # contiguous in the original
            words += part
        assert words == full  # and the set's volumes tile it, in order
        # consecutive volumes share a boundary: disjoint, no gap
        for x, y in zip(vols, vols[1:], strict=False):
            assert x["segments"][0][2] == y["segments"][0][1]


@pytest.mark.parametrize("rate", [0.01, 0.03, 0.08])
def test_noise_rate_is_the_requested_rate(rate: float) -> None:
    rng = np.random.default_rng(11)
    model = load_wordmodel("en")
    pages = paginate(render_lines(model.words(rng, 20000), 70), 35)
    noisy = add_noise(pages, rate, rng)
    assert len(noisy) == len(pages)
    assert [p.count("\n") for p in noisy] == [p.count("\n") for p in pages]  # layout kept
    clean, dirty = "\f".join(pages), "\f".join(noisy)
    measured = Levenshtein.distance(clean, dirty) / len(clean)
    # adjacent edits occasionally cancel, so the edit distance runs slightly under the rate
    assert rate * 0.85 <= measured <= rate * 1.05
    assert add_noise(pages, 0.0, rng) == pages


class _Lexicon:
    """A tiny fixed dictionary: the test knows every allowed translation."""

    table = {"house": ("haus", "heim"), "dog": ("hund",), "sea": ("meer", "see", "ozean")}

    def translate(self, word: str) -> tuple[str, ...]:
        return self.table.get(word, ())


def test_translation_words_come_from_the_dictionary() -> None:
    rng = np.random.default_rng(5)
    src = load_wordmodel("en").words(rng, 3000)
    lex = _Lexicon()
    fw = untranslated_word_map(load_wordmodel("en"), load_wordmodel("de"))
    out = translate_prose(src, lex, rng, fw, swap_prob=0.0)
    for s, t in zip(src.words, out.words, strict=True):
        assert t in word_options(s, lex, fw)
        for part in tokenize(s):
            if part in lex.table:
                assert set(tokenize(t)) <= set(lex.table[part])
    # with reordering, only neighbours inside a sentence move
    swapped = translate_prose(src, lex, np.random.default_rng(5), fw, swap_prob=0.1)
    allowed = [set(word_options(w, lex, fw)) for w in src.words]
    for i, t in enumerate(swapped.words):
        assert any(t in allowed[j] for j in (i - 1, i, i + 1) if 0 <= j < len(allowed))


def test_real_dictionary_translation_in_corpus(tmp_path: Path) -> None:
    if ("en", "de") not in available_pairs():
        pytest.skip("FreeDict eng-deu not installed")
    lex = load_dictionary("en", "de")
    rng = np.random.default_rng(2)
    en, de = load_wordmodel("en"), load_wordmodel("de")
    src = en.words(rng, 2000)
    fw = untranslated_word_map(en, de)
    out = translate_prose(src, lex, rng, fw, swap_prob=0.0)
    translated = 0
    for s, t in zip(src.words, out.words, strict=True):
        parts = tokenize(s)
        options = [lex.translate(p) for p in parts]
        if len(parts) == 1 and options[0]:
            assert t in options[0]
            translated += 1
        elif len(parts) == 1:
            assert t == fw.get(parts[0], parts[0])
    assert translated > len(src) // 4


def _rec(
    i: str, segs, lang="en", pagination=(1,), rendering=None, text="", noise=0.0
) -> BookRecord:
    return BookRecord(
        id=i,
        work="w",
        language=lang,
        kind="x",
        segments=tuple(Segment(*s) for s in segs),
        pagination=pagination,
        rendering=hash(i) if rendering is None else rendering,
        noise=noise,
        text=text,
    )


def test_abridgements_and_other_translations_in_the_truth() -> None:
    original = _rec("o", [("w", 0, 1000)])
    abridged = _rec("ab", [("w", 0, 200), ("w", 350, 500), ("w", 800, 1000)])
    vol1 = _rec("v1", [("w", 0, 500)])
    first_pieces = _rec("fp", [("w", 0, 100), ("w", 200, 300)])  # pieces of one half only
    taylor = _rec("t", [("w", 0, 1000)], lang="de", text="w:de:1")
    swanwick = _rec("s", [("w", 0, 1000)], lang="de", text="w:de:2")
    taylor_part = _rec("tp", [("w", 0, 300)], lang="de", text="w:de:1")

    def rel(x, y):
        r = relation(x, y)
        return None if r is None else (r["relation"], r["direction"])

    assert rel(abridged, original) == ("ABRIDGED", "a_in_b")
    assert rel(original, abridged) == ("ABRIDGED", "b_in_a")
    # an abridgement against a volume shares only part of its text
    assert rel(abridged, vol1) == ("OVERLAPPING_TEXT", None)
    assert rel(first_pieces, original) == ("OVERLAPPING_TEXT", None)
    assert rel(taylor, swanwick) == ("SAME_WORK", None)
    assert rel(taylor_part, swanwick) == ("SAME_WORK", None)
    assert rel(taylor_part, taylor) == ("CONTIGUOUS_SUBSET", "a_in_b")  # the same text
    assert rel(taylor, original) == ("TRANSLATION", None)


def test_relations_of_a_hand_made_set() -> None:
    original = _rec("a0", [("w", 0, 1000)], pagination=(1,), rendering=1)
    copy = _rec("a1", [("w", 0, 1000)], pagination=(1,), rendering=1)
    reprint = _rec("a2", [("w", 0, 1000)], pagination=(1,), rendering=2, noise=0.01)
    clean_reprint = _rec("a10", [("w", 0, 1000)], pagination=(1,), rendering=3)
    noisy_repaginated = _rec("a3", [("w", 0, 1000)], pagination=(2,))
    vol1 = _rec("a4", [("w", 0, 400)], pagination=(2, "v"))
    vol2 = _rec("a5", [("w", 400, 1000)], pagination=(2, "v"))
    tr_vol = _rec("a6", [("w", 0, 400)], lang="de")
    tr_full = _rec("a7", [("w", 0, 1000)], lang="fr")
    anthology = _rec("a8", [("w", 300, 600), ("v", 0, 200)])

    def rel(x, y):
        r = relation(x, y)
        return None if r is None else (r["relation"], r["direction"], r["overlap"])

    assert rel(original, copy) == ("EXACT", None, 1.0)
    assert rel(original, reprint) == ("SAME_PAGINATION", None, 1.0)
    assert rel(original, clean_reprint) == ("EXACT", None, 1.0)  # no noise: the same pages
    assert rel(original, noisy_repaginated) == ("DIFFERENT_PAGINATION", None, 1.0)
    assert rel(vol1, vol2) is None  # volumes of one set are disjoint
    assert rel(vol1, original) == ("CONTIGUOUS_SUBSET", "a_in_b", 1.0)
    assert rel(noisy_repaginated, vol2) == ("CONTIGUOUS_SUBSET", "b_in_a", 1.0)
    assert rel(original, tr_vol) == ("TRANSLATION", "b_in_a", 1.0)
    assert rel(tr_vol, tr_full) == ("TRANSLATION", "a_in_b", 1.0)
    assert rel(vol2, tr_vol) is None  # a translation of volume 1 shares nothing with volume 2
    r = relation(original, anthology)
    assert r is not None and r["relation"] == "OVERLAPPING_TEXT"
    assert (r["coverage_a"], r["coverage_b"]) == (0.3, 0.6)
    assert rel(vol1, anthology)[0] == "OVERLAPPING_TEXT"
    inside = _rec("a9", [("w", 350, 500)])
    assert rel(inside, anthology) == ("CONTIGUOUS_SUBSET", "a_in_b", 1.0)

    records = [original, copy, reprint, noisy_repaginated, vol1, vol2, tr_vol, tr_full, anthology]
    truth = ground_truth(records)
    pairs = {(d["a"], d["b"]) for d in truth}
    assert len(pairs) == len(truth)
    assert ("a4", "a5") not in pairs and ("a0", "a8") in pairs
    # all 36 pairs share text except vol1-vol2, vol2-tr_vol
    assert len(truth) == 36 - 2


def test_a_book_held_but_for_a_paragraph_is_contained() -> None:
    """Containment is read on whole books (issue 29): an anthology holding 99.5 % of a volume
    contains it, one holding 84 % overlaps it; books of several pieces never are one stretch."""
    vol1 = _rec("v1", [("w", 0, 4800)])
    most = _rec("am", [("w", 25, 7000), ("u", 0, 3000)])  # all of v1 but its first 25 words
    part = _rec("ap", [("w", 770, 7000), ("u", 0, 3000)])  # 84 % of v1
    edge = _rec("ae", [("w", 240, 7000), ("u", 0, 3000)])  # exactly CONTAINED_SHARE of v1
    small = _rec("as", [("w", 100, 1000), ("u", 0, 400)])  # both pieces inside `most`
    abridged = _rec("ab", [("w", 0, 1500), ("w", 2000, 4500), ("w", 6000, 6500)])

    def rel(x, y):
        r = relation(x, y)
        return None if r is None else (r["relation"], r["direction"])

    assert rel(vol1, most) == ("CONTIGUOUS_SUBSET", "a_in_b")
    assert rel(most, vol1) == ("CONTIGUOUS_SUBSET", "b_in_a")
    assert rel(vol1, edge) == ("CONTIGUOUS_SUBSET", "a_in_b")
    assert rel(vol1, part) == ("OVERLAPPING_TEXT", None)
    assert rel(small, most) == ("OVERLAPPING_TEXT", None)
    assert rel(abridged, vol1) == ("OVERLAPPING_TEXT", None)  # 83 % of v1, in two pieces
    assert relation(vol1, most)["coverage_a"] == 0.9948  # the truth still states the share


def test_abridged_and_retranslated_books(tmp_path: Path) -> None:
    """Generated abridgements keep 35-65 % of their work in pieces spread through it, with
    ground truth naming them the shorter; retranslations are other texts of one language."""
    cfg = GeneratorConfig(
        seed=4,
        **{**SMALL, "n_books": 40},
        abridged_fraction=1.0,
        translation_fraction=1.0,
        retranslation_fraction=1.0,
    )
    generate_corpus(cfg, tmp_path)
    books = _books(tmp_path)
    truth = [json.loads(x) for x in (tmp_path / "ground_truth.jsonl").read_text().splitlines()]
    abridged = [b for b in books.values() if b["kind"] == "abridged"]
    assert len(abridged) >= 5
    for b in abridged:
        full = books[b["of"]]["n_words"]
        assert len(b["segments"]) >= 2 and 0.2 < b["n_words"] / full < 0.8
    cut = [t for t in truth if t["relation"] == "ABRIDGED"]
    assert cut and all(
        books[t["a"] if t["direction"] == "a_in_b" else t["b"]]["kind"] == "abridged" for t in cut
    )
    other = [t for t in truth if t["relation"] == "SAME_WORK"]
    assert other
    for t in other:
        a, b = books[t["a"]], books[t["b"]]
        assert a["language"] == b["language"] and a["work"] == b["work"] and a["text"] != b["text"]


def test_corpus_ground_truth_is_complete_and_consistent(tmp_path: Path) -> None:
    cfg = GeneratorConfig(seed=1, **{**SMALL, "n_books": 40}, anthology_fraction=0.1)
    summary = generate_corpus(cfg, tmp_path)
    books = _books(tmp_path)
    assert summary.n_books == len(books) == 40
    truth = [json.loads(x) for x in (tmp_path / "ground_truth.jsonl").read_text().splitlines()]
    pairs = {(d["a"], d["b"]): d for d in truth}
    ids = sorted(books)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            sa = {(w, s, e) for w, s, e in books[a]["segments"]}
            sb = {(w, s, e) for w, s, e in books[b]["segments"]}
            share = any(x[0] == y[0] and min(x[2], y[2]) > max(x[1], y[1]) for x in sa for y in sb)
            assert ((a, b) in pairs) == share
            if share and books[a]["language"] != books[b]["language"]:
                assert pairs[a, b]["relation"] == "TRANSLATION"
    kinds = {b["kind"] for b in books.values()}
    assert {"original", "anthology"} <= kinds


def test_books_are_readable_by_the_readers(tmp_path: Path) -> None:
    readers = pytest.importorskip("readers")
    cfg = GeneratorConfig(
        seed=4,
        **{**SMALL, "n_books": 24},
        formats=(("txt", 1.0), ("jsonl", 1.0), ("alto", 1.0), ("hocr", 1.0)),
        translation_fraction=0.0,
    )
    generate_corpus(cfg, tmp_path)
    books = _books(tmp_path)
    assert {b["format"] for b in books.values()} == {"txt", "jsonl", "alto", "hocr"}
    read = list(readers.iter_books([tmp_path / "books"]))
    errors = [b for b in read if isinstance(b, readers.ReadError)]
    assert not errors
    assert {b.id: len(b.pages) for b in read} == {i: b["n_pages"] for i, b in books.items()}
    assert {b.id: b.language for b in read} == {i: b["language"] for i, b in books.items()}
