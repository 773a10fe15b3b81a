"""The read side's commands (search, related/editions, match, explain, serve, sync) as a new
user meets them: tables and sentences, one wording, one-line errors; a real node."""

from __future__ import annotations

import html
import json
import os
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from bookdup.cluster import cluster_id
from bookdup_cli.main import cli
from bookdup_cli.read_cmds import check_port_free
from devnode.config import is_loopback as _is_loopback
from store.connection import ConnectionSettings
from store.schema import IndexNames, drop_indices
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt

PRIDE, RESET, VOLUME, WALDEN = "pride", "pride-reset", "pride-vol1", "walden"


def invoke(names, *args: str):
    url = ConnectionSettings.from_env().url
    return CliRunner().invoke(cli, ["--es-url", url, "--index-prefix", names.prefix, *args])


@pytest.fixture(scope="module")
def corpus(es_client, tmp_path_factory):
    """Two editions of a Pride and Prejudice slice, its first third, and an untitled Walden."""
    folder = tmp_path_factory.mktemp("read-corpus")
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 9000, 2000)
    write_txt(folder / f"{PRIDE}.txt", paginate(lines, 40), title="Pride and Prejudice")
    write_txt(folder / f"{RESET}.txt", paginate(lines, 29), title="First Impressions")
    write_txt(folder / f"{VOLUME}.txt", paginate(lines[: len(lines) // 3], 40), title="Volume I")
    walden = ["WALDEN", "", "by Henry David Thoreau", ""] + word_slice(
        gutenberg_body("walden-en-pg205"), 6000, 2000
    )
    write_txt(folder / f"{WALDEN}.txt", paginate(walden, 40))  # no sidecar: no title
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    assert invoke(names, "index", "--workers", "2", str(folder)).exit_code == 0
    assert invoke(names, "dedup").exit_code == 0
    es_client.indices.refresh(index=[names.books, names.relations])
    yield names, folder
    drop_indices(es_client, names)


def test_search_prints_one_row_per_cluster_with_its_real_size(corpus) -> None:
    names = corpus[0]
    result = invoke(names, "search", "Impressions")  # only one of the three editions matches
    assert result.exit_code == 0, result.output
    (row,) = result.stdout.splitlines()
    assert row.startswith(RESET) and "First Impressions" in row and "(3 in cluster)" in row
    assert "1 edition clusters (1 matching books); page 1 of 1" in result.stderr

    hits = json.loads(invoke(names, "search", "Impressions", "--json").stdout)
    assert [(h["book_id"], h["cluster_size"], h["matching"]) for h in hits] == [(RESET, 3, 1)]
    none = invoke(names, "search", "zebracorn")
    assert none.exit_code == 0 and none.stdout == ""
    assert "no book matches 'zebracorn'" in none.stderr
    empty = invoke(names, "search", "  ")
    assert empty.exit_code == 1 and empty.stderr.startswith("Error: the query is empty")


def test_search_page_past_the_last_one_is_an_error(corpus) -> None:
    """Issue 26: a clear error, as the README promises, not an empty page."""
    names = corpus[0]
    last = invoke(names, "search", "Pride", "--size", "1", "--page", "1")
    assert last.exit_code == 0 and "page 1 of 1" in last.stderr
    past = invoke(names, "search", "Pride", "--size", "1", "--page", "2")
    assert past.exit_code == 1 and past.stdout == ""
    assert past.stderr.strip() == (
        "Error: page 2 is past the last page: 1 edition cluster matches, 1 page of 1"
    )


def test_related_is_a_table_per_class_and_editions_is_its_alias(corpus) -> None:
    names = corpus[0]
    result = invoke(names, "related", PRIDE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.splitlines()[0].startswith(f"{PRIDE}  en  Pride and Prejudice")
    assert f"edition cluster {cluster_id([PRIDE, RESET, VOLUME])}" in out
    assert "same text, different pagination (DIFFERENT_PAGINATION): 1" in out
    assert "part of / contains (CONTIGUOUS_SUBSET): 1" in out
    (vol_row,) = [line for line in out.splitlines() if line.strip().startswith(VOLUME)]
    assert "the other book is contained in this one" in vol_row
    for raw in ("{'", "other_in_this", "b_in_a", "None", "[]"):
        assert raw not in out, raw
    assert invoke(names, "editions", PRIDE).stdout == out

    volume = invoke(names, "related", VOLUME).stdout
    assert "this book is contained in the other" in volume
    missing = invoke(names, "related", "no-such-book")
    assert missing.exit_code == 1
    assert missing.stderr.strip().splitlines() == [
        "Error: no book with id 'no-such-book' in " + names.books
    ]


def test_untitled_books_show_a_title_found_in_their_text(corpus) -> None:
    names = corpus[0]
    out = invoke(names, "related", WALDEN).stdout
    assert out.splitlines()[0].startswith(f"{WALDEN}  en  [WALDEN by Henry David Thoreau")
    assert "no related books found" in out


def test_match_of_an_indexed_file_says_so_and_does_not_list_itself(corpus, tmp_path) -> None:
    """Issue 26: "already indexed as <id>", never "not indexed; would join", and the book is
    not among its own related books (its other editions are)."""
    names, folder = corpus
    result = invoke(names, "match", str(folder / f"{RESET}.txt"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    edition = cluster_id([PRIDE, RESET, VOLUME])
    assert out.splitlines()[1].startswith(f"already indexed as {RESET}; edition cluster {edition}")
    assert "not indexed" not in out and "would join" not in out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert RESET not in listed and PRIDE in listed and VOLUME in listed
    assert "None" not in out and "[]" not in out
    as_json = json.loads(
        invoke(names, "editions", "--file", str(folder / f"{RESET}.txt"), "--json").stdout
    )
    assert as_json["book"]["indexed"] is True and as_json["book"]["indexed_as"] == RESET
    found = {r["book_id"]: r for r in as_json["relations"]}
    assert RESET not in found and found[PRIDE]["language"] == "en"
    assert found[PRIDE]["title"] == "Pride and Prejudice"

    # a text that is not indexed (a third of the book, paged otherwise): would join
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 9000, 2000)
    write_txt(tmp_path / "new-scan.txt", paginate(lines[: len(lines) // 2], 33))
    fresh = invoke(names, "match", str(tmp_path / "new-scan.txt")).stdout
    assert f"not indexed; would join edition cluster {edition}" in fresh


def test_explain_prints_the_decision_and_writes_the_picture(corpus, tmp_path: Path) -> None:
    names = corpus[0]
    svg = tmp_path / "pair.svg"
    result = invoke(names, "explain", VOLUME, PRIDE, "--plot", str(svg))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "CONTIGUOUS_SUBSET (part of / contains)" in out
    assert "A is contained in B: it is pages 1–" in out and "of B" in out
    assert "how it was decided:" in out and "confidence of each class:" in out
    assert svg.read_bytes().lstrip().startswith(b"<?xml") and b"<svg" in svg.read_bytes()
    # signals in plain words (bookdup.vocabulary), not field names
    assert "share of A covered by shared text" in out and "coverage_x" not in out
    as_json = json.loads(invoke(names, "explain", VOLUME, PRIDE, "--json").stdout)
    assert as_json["direction"] == "this_in_other"
    assert as_json["signal_labels"]["coverage_y"] == "share of B covered by shared text"
    # the picture carries the verdict the CLI prints, whole (wrapped), and the class line
    picture = html.unescape(svg.read_text(encoding="utf-8"))
    assert as_json["verdict"] in out
    for line in textwrap.wrap(as_json["verdict"], 130):
        assert line in picture, line
    assert "CONTIGUOUS_SUBSET (part of / contains), confidence" in picture
    # related --plot: each panel says the verdict seen from the book, in the same words
    panels = tmp_path / "related.svg"
    assert invoke(names, "related", VOLUME, "--plot", str(panels)).exit_code == 0
    drawn = " ".join(html.unescape(panels.read_text(encoding="utf-8")).split())
    assert "This book is contained in the other" in drawn
    same = invoke(names, "explain", PRIDE, PRIDE)
    assert same.exit_code == 1 and "same book" in same.stderr


def test_pictures_never_create_folders_and_are_written_in_their_suffix_format(
    corpus, tmp_path: Path
) -> None:
    """Issue 26: a missing folder is an error (nothing created); x.gif is a GIF, x.pdf a PDF;
    a suffix matplotlib cannot write is refused, naming the ones it can."""
    names = corpus[0]
    missing = tmp_path / "some" / "new" / "dir" / "x.png"
    for command in (["explain", VOLUME, PRIDE], ["related", PRIDE]):
        result = invoke(names, *command, "--plot", str(missing))
        assert result.exit_code == 1, result.output
        assert result.stderr.strip() == (
            f"Error: {missing}: the folder {missing.parent} does not exist (it is not created)"
        )
        assert not (tmp_path / "some").exists()
    signatures = {"gif": b"GIF8", "pdf": b"%PDF", "png": b"\x89PNG", "jpg": b"\xff\xd8\xff"}
    for suffix, magic in signatures.items():
        picture = tmp_path / f"pair.{suffix}"
        result = invoke(names, "explain", VOLUME, PRIDE, "--plot", str(picture))
        assert result.exit_code == 0, result.output
        assert picture.read_bytes().startswith(magic), suffix
    alignment = tmp_path / "related.gif"
    assert invoke(names, "related", PRIDE, "--plot", str(alignment)).exit_code == 0
    assert alignment.read_bytes().startswith(b"GIF8")
    for bad in ("pair.docx", "pair"):
        result = invoke(names, "explain", VOLUME, PRIDE, "--plot", str(tmp_path / bad))
        assert result.exit_code == 1 and "cannot write the picture as" in result.stderr
        assert ".png" in result.stderr and ".svg" in result.stderr
        assert not (tmp_path / bad).exists()


def test_sync_into_a_catalog_index(es_client, corpus) -> None:
    names = corpus[0]
    catalog = f"catalog-{uuid.uuid4().hex[:8]}"
    es_client.indices.create(index=catalog, mappings={"properties": {"title": {"type": "text"}}})
    try:
        for book in (PRIDE, RESET, "someone-else"):
            es_client.index(index=catalog, id=book, document={"title": book}, refresh=True)
        result = invoke(names, "sync", "--into", catalog)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"{catalog}: 2 catalog documents matched bookdup books")
        assert "updated 2, 0 already current; 2 bookdup books not in the catalog" in result.stdout
        again = json.loads(invoke(names, "sync", "--into", catalog, "--json").stdout)
        assert (again["updated"], again["unchanged"]) == (0, 2)
        doc = es_client.get(index=catalog, id=RESET)["_source"]
        assert doc["edition_cluster"] == cluster_id([PRIDE, RESET, VOLUME])
    finally:
        es_client.indices.delete(index=catalog)
    bad = invoke(names, "sync", "--into", names.books)
    assert bad.exit_code == 1 and "bookdup's own" in bad.stderr


def test_serve_binds_loopback_by_default() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert "--host TEXT" in result.output and "[default: 127.0.0.1]" in result.output
    assert "--allowed-host NAME" in result.output  # issue 30: other Host names, repeatable
    assert _is_loopback("127.0.0.1") and _is_loopback("::1") and _is_loopback("localhost")
    assert not _is_loopback("0.0.0.0") and not _is_loopback("example.org")


def test_serve_on_a_busy_port_is_one_line_and_announces_nothing() -> None:
    """Issue 26: the port is checked before the URL is printed; busy → one line, exit 1."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        done = subprocess.run(
            [sys.executable, "-c", "from bookdup_cli.main import cli; cli()", "serve"]
            + ["--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    assert done.returncode == 1, done
    assert done.stdout == "" and "http://" not in done.stderr
    assert done.stderr.splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: the port is already in use (try --port)"
    ]
    # once the port is let go, the same check passes
    check_port_free("127.0.0.1", port)
