"""`bookdup compare` through click's CliRunner: JSON and readable output, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bookdup_cli.compare_cmd import compare
from readers.dictionaries import available_pairs
from tests.bookdup.test_signals import GUTENBERG, gutenberg_lines, needs_data, paginate

pytestmark = needs_data


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    alice = gutenberg_lines("alice-en-pg11")
    full = tmp_path / "alice.txt"
    full.write_text("\f".join(paginate(alice, 40)), encoding="utf-8")
    volume = tmp_path / "volume.txt"
    volume.write_text("\f".join(paginate(alice[: len(alice) * 2 // 5], 40)), encoding="utf-8")
    return full, volume, GUTENBERG / "sherlock-en-pg1661.txt"


def test_json_output(files):
    full, volume, _ = files
    result = CliRunner().invoke(compare, [str(volume), str(full), "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["relation"] == "CONTIGUOUS_SUBSET" and r["direction"] == "x_in_y"
    assert r["x"] < r["y"] and r["lcs"] <= r["shared"] and 0 < r["cs"] <= 1
    assert r["languages"] == ["en", "en"] and r["signals"]["coverage_x"] > 0.95
    # form feeds are pages
    alice = gutenberg_lines("alice-en-pg11")
    assert r["signals"]["n_pages_x"] == len(paginate(alice[: len(alice) * 2 // 5], 40))
    assert r["signals"]["n_pages_y"] == len(paginate(alice, 40))


def test_readable_summary(files):
    full, _, sherlock = files
    result = CliRunner().invoke(compare, [str(full), str(sherlock)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "DUPNIQ-cs" in out and "DUPNIQ-its" in out and "in the same order" in out
    assert "page fit: page of B" in out and "relation: UNRELATED" in out
    assert out.rstrip().splitlines()[-1] == "Verdict: A and B are not related."


def test_summary_says_a_and_b_in_plain_words_and_ends_with_a_verdict(files):
    """Issue 26: A/B as everywhere else, no paper jargon, no raw None, a verdict last."""
    full, volume, _ = files
    out = CliRunner().invoke(compare, [str(volume), str(full)]).output
    lines = out.rstrip().splitlines()
    assert lines[0].startswith("A: ") and lines[1].startswith("B: ")
    confidence = json.loads(CliRunner().invoke(compare, [str(volume), str(full), "--json"]).output)
    assert lines[-1] == (
        f"Verdict: A is contained in B (part of / contains, confidence "
        f"{confidence['confidence']:.2f})."
    )
    for jargon in ("eq. 3", "None", "x / y", "x:", "y:", "|X|", "x_in_y"):
        assert jargon not in out, jargon
    # the same books the other way round: B is the part
    back = CliRunner().invoke(compare, [str(full), str(volume)]).output
    assert back.rstrip().splitlines()[-1].startswith("Verdict: B is contained in A (")


def test_an_abridgement_is_named_and_a_missing_page_fit_is_said_once():
    storyland = GUTENBERG / "alice-en-storyland-pg19033.txt"
    out = CliRunner().invoke(compare, [str(storyland), str(GUTENBERG / "alice-en-pg11.txt")])
    assert out.exit_code == 0, out.output
    assert "Verdict: A is an abridgement of B (abridged edition, confidence" in out.output


@pytest.mark.skipif(("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed")
def test_a_translation_prints_no_raw_none_and_names_its_part():
    """A translated pair has no neighbour-word signals: left out, not printed as None / None;
    Werther's book 1 against the complete English is named as the part."""
    book1 = GUTENBERG / "werther-de-b1-pg2407.txt"
    whole = GUTENBERG / "werther-en-boylan-pg2527.txt"
    result = CliRunner().invoke(compare, [str(book1), str(whole)])
    assert result.exit_code == 0, result.output
    assert "None" not in result.output and "neighbour words" not in result.output
    assert "translated A with dictionary de-en" in result.output
    assert "Verdict: A is a partial translation: it matches only a part of B" in result.output


@pytest.mark.skipif(("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed")
def test_translation_found_automatically():
    """Languages differ and the pair is installed: the dictionary is chosen without asking."""
    en, de = GUTENBERG / "alice-en-pg11.txt", GUTENBERG / "alice-de-zimmermann-pg19778.txt"
    result = CliRunner().invoke(compare, [str(en), str(de), "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    # one lexicon direction per pair (into English), whichever file comes first
    assert r["languages"] == ["en", "de"] and r["dictionary"] == "de-en"
    assert r["scores"] == "TRANS" and r["relation"] == "TRANSLATION"
    back = CliRunner().invoke(compare, [str(de), str(en), "--json"])
    rb = json.loads(back.output)
    assert rb["relation"] == r["relation"] and rb["order"]["z"] == r["order"]["z"]
    # naming the pair either way round gives the same lexicon
    result = CliRunner().invoke(compare, [str(en), str(de), "--json", "--dictionary", "eng-deu"])
    assert json.loads(result.output)["dictionary"] == "de-en"


@pytest.mark.skipif(("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed")
def test_dictionary_that_does_not_fit_is_a_usage_error():
    en, de = GUTENBERG / "alice-en-pg11.txt", GUTENBERG / "alice-de-zimmermann-pg19778.txt"
    result = CliRunner().invoke(compare, [str(en), str(de), "--dictionary", "fra-spa"])
    assert result.exit_code != 0 and "does not fit these books" in result.output


def test_unknown_dictionary_is_a_usage_error(files):
    full, volume, _ = files
    result = CliRunner().invoke(compare, [str(volume), str(full), "--dictionary", "xx-yy"])
    assert result.exit_code == 2 and "xx" in result.output


def test_missing_file(tmp_path: Path, files):
    result = CliRunner().invoke(compare, [str(tmp_path / "nope.txt"), str(files[0])])
    assert result.exit_code == 2


@pytest.mark.skipif(("en", "de") not in available_pairs(), reason="FreeDict eng-deu not installed")
def test_a_translated_part_is_explained_with_its_window():
    """The summary states the order evidence in words, and where in the whole the part is."""
    part = GUTENBERG / "tomsawyer-en-part1-pg7193.txt"
    whole = GUTENBERG / "tomsawyer-de-hellwag-pg30165.txt"
    result = CliRunner().invoke(compare, [str(part), str(whole)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "relation: TRANSLATION" in out
    line = next(x for x in out.splitlines() if x.startswith("Order of the shared words"))
    z = float(line.split("z = ")[1].split(",")[0])
    assert z > 15
    # the three chapters are the start of the German book (B: the second argument)
    assert "strongest in 0–" in line and "of B" in line
    assert (
        out.rstrip()
        .splitlines()[-1]
        .startswith("Verdict: A is a partial translation: it matches only a part of B (translation")
    )
