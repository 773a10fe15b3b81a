"""The `bookdup` job commands through click's CliRunner, against a real Elasticsearch node."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bookdup_cli.main import cli
from store.connection import ConnectionSettings
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt


def invoke(names, *args: str):
    url = ConnectionSettings.from_env().url
    return CliRunner().invoke(cli, ["--es-url", url, "--index-prefix", names.prefix, *args])


def test_index_dedup_status_editions_search(index_names, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 6000, 2000)
    write_txt(corpus / "pride.txt", paginate(lines, 40), title="Pride and Prejudice")
    write_txt(corpus / "pride-reset.txt", paginate(lines, 29), title="Pride and Prejudice")
    walden = word_slice(gutenberg_body("walden-en-pg205"), 6000, 2000)
    write_txt(corpus / "walden.txt", paginate(walden, 40), title="Walden")
    bad = corpus / "broken.txt"
    bad.write_bytes(b"")

    result = invoke(index_names, "index", "--workers", "2", str(corpus))
    assert result.exit_code == 1, result.output
    assert "3 indexed, 0 unchanged, 1 failed" in result.stdout
    assert f"skipped {bad}: empty file" in result.stderr

    bad.unlink()
    result = invoke(index_names, "index", "--workers", "2", str(corpus))
    assert result.exit_code == 0, result.output
    assert "0 indexed, 3 unchanged, 0 failed" in result.stdout
    assert "skipped" not in result.stderr

    result = invoke(index_names, "dedup", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["run_id"].startswith("dedup-")
    assert (summary["books"], summary["query_books"]) == (3, 3)
    assert summary["relations"] == {"DIFFERENT_PAGINATION": 1}
    assert (summary["edition_clusters"], summary["work_clusters"]) == (2, 2)
    assert summary["clusters_updated"] == 1  # pride-reset joins pride's cluster

    result = invoke(index_names, "dedup", "--since", "yesterday")
    assert result.exit_code == 1
    assert "neither a run id nor an ISO date/time" in result.stderr

    result = invoke(index_names, "status")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"{index_names.books}: 3 documents" in out
    assert f"{index_names.relations}: 1 documents" in out
    run_lines = [line for line in out.splitlines() if line.startswith(("index-", "dedup-"))]
    assert len(run_lines) == 3 and all("finished" in line for line in run_lines)
    assert run_lines[0].startswith(summary["run_id"])  # newest first
    assert '"failed": 1' in run_lines[2] and "empty file" in out

    result = invoke(index_names, "editions", "pride")
    assert result.exit_code == 0, result.output
    assert "DIFFERENT_PAGINATION" in result.stdout and "pride-reset" in result.stdout
    result = invoke(index_names, "editions", "walden", "--json")
    assert json.loads(result.stdout)["relations"] == []
    result = invoke(index_names, "editions", "no-such-book")
    assert result.exit_code == 1 and "no book with id 'no-such-book'" in result.stderr

    result = invoke(index_names, "search", "Prejudice")
    assert result.exit_code == 0, result.output
    hits = result.stdout.splitlines()
    assert len(hits) == 1 and "(2 in cluster)" in hits[0]
    result = invoke(index_names, "search", "Prejudice", "--collapse", "none", "--json")
    assert sorted(r["book_id"] for r in json.loads(result.stdout)) == ["pride", "pride-reset"]

    volume = write_txt(tmp_path / "vol.txt", paginate(lines[: len(lines) // 3], 40))
    result = invoke(index_names, "editions", "--file", str(volume), "--json")
    assert result.exit_code == 0, result.output
    found = {r["book_id"]: r["direction"] for r in json.loads(result.stdout)["relations"]}
    assert found == {"pride": "this_in_other", "pride-reset": "this_in_other"}


def test_unreachable_cluster_is_a_one_line_error() -> None:
    result = CliRunner().invoke(cli, ["--es-url", "http://127.0.0.1:1", "status"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ") and "bookdup es up" in lines[0]
    assert "Traceback" not in result.output
