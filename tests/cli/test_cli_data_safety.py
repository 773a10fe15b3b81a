"""Data safety of the CLI against a real node: the demo in its own indices, deletions that say
what and how much and ask unless --yes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bookdup_cli.main import cli
from store.connection import ConnectionSettings
from store.schema import IndexNames, drop_indices
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt


def invoke(prefix: str, *args: str, stdin: str | None = None):
    url = ConnectionSettings.from_env().url
    return CliRunner().invoke(cli, ["--es-url", url, "--index-prefix", prefix, *args], input=stdin)


def _corpus(folder: Path, *books: tuple[str, str, int]) -> Path:
    folder.mkdir()
    for name, gutenberg, skip in books:
        lines = word_slice(gutenberg_body(gutenberg), 3000, skip)
        write_txt(folder / f"{name}.txt", paginate(lines, 40), title=name)
    return folder


def _count(es_client, alias: str) -> int:
    es_client.indices.refresh(index=alias)
    return int(es_client.count(index=alias)["count"])


def test_demo_uses_its_own_indices_and_resets_only_them(es_client, index_names, tmp_path) -> None:
    mine = _corpus(tmp_path / "mine", ("walden", "walden-en-pg205", 0))
    assert invoke(index_names.prefix, "index", "--workers", "1", str(mine)).exit_code == 0
    demo = IndexNames(f"{index_names.prefix}-demo")
    try:
        # a book left by an earlier demo: --reset (the default) drops it
        stale = _corpus(tmp_path / "stale", ("stale", "pride-en-pg1342", 9000))
        assert invoke(demo.prefix, "index", "--workers", "1", str(stale)).exit_code == 0
        corpus = _corpus(
            tmp_path / "demo",
            ("pride-a", "pride-en-pg1342", 0),
            ("pride-b", "pride-en-pg1342", 0),
        )
        result = invoke(index_names.prefix, "demo", "--corpus", str(corpus))
        assert result.exit_code == 0, result.output
        assert f"into {demo.books}" in result.stdout
        assert f"bookdup --index-prefix {demo.prefix} search" in result.stdout
        # the user's one book untouched; the demo's indices hold exactly the demo corpus
        assert _count(es_client, index_names.books) == 1
        assert es_client.exists(index=index_names.books, id="walden")
        assert _count(es_client, demo.books) == 2
        assert not es_client.exists(index=demo.books, id="stale")
        # --keep keeps the demo's books and still never touches the user's
        result = invoke(index_names.prefix, "demo", "--keep", "--corpus", str(stale))
        assert result.exit_code == 0, result.output
        assert (_count(es_client, demo.books), _count(es_client, index_names.books)) == (3, 1)
    finally:
        drop_indices(es_client, demo)


def test_reset_lists_indices_and_counts_and_asks(es_client, index_names, tmp_path) -> None:
    corpus = _corpus(
        tmp_path / "c", ("walden", "walden-en-pg205", 0), ("pride", "pride-en-pg1342", 0)
    )
    assert invoke(index_names.prefix, "index", "--workers", "1", str(corpus)).exit_code == 0

    result = invoke(index_names.prefix, "reset", stdin="n\n")
    assert result.exit_code == 1  # declined: aborted, nothing deleted
    books_index = next(iter(es_client.indices.get_alias(name=index_names.books).body))
    assert f"  {books_index}: 2 documents" in result.stdout
    assert "3 indices with 3 documents would be deleted" in result.stdout  # 2 books + 1 run
    assert _count(es_client, index_names.books) == 2

    result = invoke(index_names.prefix, "reset")  # no stdin: click.confirm aborts
    assert result.exit_code == 1
    assert _count(es_client, index_names.books) == 2

    result = invoke(index_names.prefix, "reset", "--yes")
    assert result.exit_code == 0, result.output
    assert not es_client.indices.exists_alias(name=index_names.books)
    result = invoke(index_names.prefix, "reset", "--yes")
    assert result.exit_code == 0 and "nothing to delete" in result.stdout


def test_remove_lists_books_and_relations_and_asks(es_client, index_names, tmp_path) -> None:
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 4000, 0)
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_txt(corpus / "pride.txt", paginate(lines, 40), title="Pride and Prejudice")
    write_txt(corpus / "pride-reset.txt", paginate(lines, 29), title="Pride reset")
    assert invoke(index_names.prefix, "index", "--workers", "1", str(corpus)).exit_code == 0
    assert invoke(index_names.prefix, "dedup").exit_code == 0
    assert _count(es_client, index_names.relations) == 1

    result = invoke(index_names.prefix, "remove", "pride", "nope")  # no stdin: aborted
    assert result.exit_code == 1
    assert "  pride  Pride and Prejudice" in result.stdout
    assert "not in the index: nope" in result.stderr
    assert "1 books and 1 relations would be deleted" in result.stdout
    assert (_count(es_client, index_names.books), _count(es_client, index_names.relations)) == (
        2,
        1,
    )
    result = invoke(index_names.prefix, "remove", "pride", stdin="y\n")
    assert result.exit_code == 0, result.output
    assert "removed 1 books and 1 relations" in result.stdout
    result = invoke(index_names.prefix, "remove", "--yes", "pride-reset")
    assert result.exit_code == 0, result.output
    assert _count(es_client, index_names.books) == 0


def test_a_second_dedup_with_nothing_new_says_so_and_does_nothing(
    es_client, index_names, tmp_path
) -> None:
    prefix = index_names.prefix
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 4000, 0)
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_txt(corpus / "pride.txt", paginate(lines, 40), title="Pride")
    write_txt(corpus / "pride-reset.txt", paginate(lines, 29), title="Pride")
    assert invoke(prefix, "index", "--workers", "1", str(corpus)).exit_code == 0
    first = invoke(prefix, "dedup", "--json")
    assert first.exit_code == 0, first.output
    first_id = json.loads(first.stdout)["run_id"]

    def dedup_runs() -> int:
        es_client.indices.refresh(index=index_names.runs)
        query = {"term": {"kind": "dedup"}}
        return int(es_client.count(index=index_names.runs, query=query)["count"])

    result = invoke(prefix, "dedup")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"nothing new since run {first_id}; use --full to re-verify everything"
    )
    assert dedup_runs() == 1  # nothing ran, nothing recorded
    result = invoke(prefix, "dedup", "--json")
    assert json.loads(result.stdout) == {"nothing_new_since": first_id}

    # a different translation setting is not the same work
    result = invoke(prefix, "dedup", "--no-translations", "--json")
    assert json.loads(result.stdout)["books"] == 2
    assert dedup_runs() == 2
    result = invoke(prefix, "dedup", "--no-translations")
    assert "nothing new since run" in result.stdout
    # --full re-verifies everything
    result = invoke(prefix, "dedup", "--full", "--json")
    full = json.loads(result.stdout)
    assert (full["books"], full["query_books"], full["relations"]) == (
        2,
        2,
        {"DIFFERENT_PAGINATION": 1},
    )
    assert dedup_runs() == 3
    # a book indexed since the last run: the job runs again
    walden = word_slice(gutenberg_body("walden-en-pg205"), 3000, 0)
    write_txt(corpus / "walden.txt", paginate(walden, 40), title="Walden")
    assert invoke(prefix, "index", "--workers", "1", str(corpus)).exit_code == 0
    result = invoke(prefix, "dedup", "--json")
    assert json.loads(result.stdout)["books"] == 3
    assert dedup_runs() == 4


def test_status_pages_every_skipped_file_and_prints_stage_durations(index_names, tmp_path) -> None:
    prefix = index_names.prefix
    corpus = _corpus(tmp_path / "c", ("walden", "walden-en-pg205", 0))
    empties = sorted(corpus / f"empty-{i:02d}.txt" for i in range(7))
    for path in empties:
        path.write_bytes(b"")
    result = invoke(prefix, "index", "--workers", "1", str(corpus))
    assert result.exit_code == 1 and "1 indexed, 0 unchanged, 7 failed" in result.stdout
    run_id = result.stdout.split(":")[0].removeprefix("run ")
    assert invoke(prefix, "dedup").exit_code == 0

    result = invoke(prefix, "status")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    durations = [line for line in lines if line.startswith("    durations: ")]
    assert len(durations) == 2  # the dedup run, then the index run
    for stage in ("prepare", "search", "verify", "cluster", "total"):
        assert f" {stage} " in durations[0], durations[0]
    for stage in ("lookup", "extract wait", "write", "refresh", "merge", "total"):
        assert f" {stage} " in durations[1], durations[1]
    assert durations[1].count(" s") == 6  # rates (books per second) are not durations
    assert durations[1].endswith(" s") and " per " not in " ".join(durations)
    assert f"7 skipped in all: `bookdup status --skipped --run {run_id}`" in result.stdout

    pages = []
    for page in (1, 2, 3):
        args = ("status", "--skipped", "--page-size", "3", "--page", str(page))
        result = invoke(prefix, *args)
        assert result.exit_code == 0, result.output
        pages.append(result.stdout.splitlines())
    assert pages[0][0] == f"run {run_id} skipped 7; 1-3 (page 1 of 3):"
    assert pages[0][-1] == f"next: bookdup status --skipped --run {run_id} --page 2"
    assert pages[2][0] == f"run {run_id} skipped 7; 7-7 (page 3 of 3):"
    listed = [line for page in pages for line in page if line.startswith("  ")]
    assert listed == [f"  {path}: empty file" for path in empties]
    result = invoke(prefix, "status", "--skipped", "--run", run_id, "--page", "2")
    assert result.exit_code == 1 and "page 2 is past the last page (1)" in result.stderr


def test_demo_names_the_pairs_it_missed_and_classed_wrong(es_client, index_names, tmp_path) -> None:
    """The summary against the ground truth lists each missed pair and each wrong class with
    both ids and truth vs found class (here the truth is made to disagree with the books)."""
    corpus = _corpus(
        tmp_path / "corpus",
        ("pride-a", "pride-en-pg1342", 0),
        ("pride-b", "pride-en-pg1342", 0),
        ("walden", "walden-en-pg205", 0),
    )
    truth = [
        {"a": "pride-b", "b": "pride-a", "relation": "ABRIDGED", "direction": "a_in_b"},
        {"a": "walden", "b": "pride-a", "relation": "TRANSLATION", "direction": None},
    ]
    (tmp_path / "ground_truth.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in truth), encoding="utf-8"
    )
    demo = IndexNames(f"{index_names.prefix}-demo")
    try:
        result = invoke(index_names.prefix, "demo", "--corpus", str(corpus))
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert "1 of 2 related pairs found" in out, out
        assert "missed (related in the ground truth, not found): 1" in out
        assert "  pride-a ~ walden: truth TRANSLATION, found UNRELATED" in out
        assert "classed wrong: 1" in out
        assert "  pride-a ~ pride-b: truth ABRIDGED, found " in out
        assert "found ABRIDGED" not in out
    finally:
        drop_indices(es_client, demo)
