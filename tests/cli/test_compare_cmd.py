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
    assert "DUPNIQ-cs" in out and "DUPNIQ-its" in out and "|LCS|" in out
    assert "linear fit slope a" in out and "relation: UNRELATED" in out


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
    # the three chapters are the start of the German book (y here: the second argument)
    assert "strongest in 0–" in line and "of y" in line
