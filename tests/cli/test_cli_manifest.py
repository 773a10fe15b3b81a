"""A manifest (JSONL metadata records without text) beside the book files, through `bookdup
index` against a real node: its records are the books' metadata, it is never read as books."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bookdup_cli.main import cli
from store.connection import ConnectionSettings
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt


def invoke(prefix: str, *args: str):
    url = ConnectionSettings.from_env().url
    return CliRunner().invoke(cli, ["--es-url", url, "--index-prefix", prefix, *args])


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _book(folder: Path, name: str, gutenberg: str, **meta: str) -> None:
    lines = word_slice(gutenberg_body(gutenberg), 2500, 0)
    write_txt(folder / f"{name}.txt", paginate(lines, 40), **meta)


def test_a_manifest_gives_the_books_metadata_and_is_not_indexed(
    es_client, index_names, tmp_path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _book(corpus, "pride-pg1342", "pride-en-pg1342")
    _book(corpus, "walden-pg205", "walden-en-pg205")
    _book(corpus, "sidecar-pg1", "walden-en-pg205", title="From the sidecar")
    manifest = corpus / "manifest.jsonl"
    _write_jsonl(
        manifest,
        [
            {
                "id": "pride-pg1342",
                "file": "pride-pg1342.txt",
                "title": "Pride and Prejudice",
                "author": "Jane Austen",
                "year": "1813",
                "language": "en",
                "translator": None,
            },
            {"file": "walden-pg205.txt", "title": "Walden", "author": ["Henry David Thoreau"]},
            {"id": "sidecar-pg1", "title": "From the manifest", "year": 1854},
            {"id": "not-here", "title": "A book this folder does not hold"},
        ],
    )
    # a manifest whose records name nothing beside it: one warning, no failure
    elsewhere = corpus / "elsewhere"
    elsewhere.mkdir()
    _write_jsonl(elsewhere / "catalogue.jsonl", [{"id": f"x{i}", "title": "?"} for i in range(80)])

    result = invoke(index_names.prefix, "index", "--workers", "1", str(corpus))
    assert result.exit_code == 0, result.output
    assert "3 indexed, 0 unchanged, 0 failed" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("  warning ")]
    assert warnings == [
        f"  warning {elsewhere / 'catalogue.jsonl'}: metadata without text (80 records) naming "
        "no book file beside it: skipped",
        f"  warning {manifest}: metadata of 3 books used; 1 of its 4 records name no book file "
        "beside it",
    ]
    assert not [line for line in result.stderr.splitlines() if line.startswith("  skipped ")]

    fields = ["title", "author", "year", "declared_language"]
    docs = es_client.mget(
        index=index_names.books, ids=["pride-pg1342", "walden-pg205", "sidecar-pg1"], source=fields
    )["docs"]
    got = {d["_id"]: d["_source"] for d in docs}
    assert got["pride-pg1342"] == {
        "title": "Pride and Prejudice",
        "author": "Jane Austen",
        "year": 1813,
        "declared_language": "en",
    }
    assert (got["walden-pg205"]["title"], got["walden-pg205"]["author"]) == (
        "Walden",
        "Henry David Thoreau",
    )
    # the sidecar's own title wins; the manifest fills what the sidecar lacks
    assert (got["sidecar-pg1"]["title"], got["sidecar-pg1"]["year"]) == ("From the sidecar", 1854)
    es_client.indices.refresh(index=index_names.books)
    assert es_client.count(index=index_names.books)["count"] == 3

    # unchanged on a rerun; a manifest named on its own is skipped with one warning
    result = invoke(index_names.prefix, "index", "--workers", "1", str(corpus), str(manifest))
    assert result.exit_code == 0, result.output
    assert "0 indexed, 3 unchanged, 0 failed" in result.stdout
    assert f"  warning {manifest}: metadata without text, not a corpus: skipped" in result.stderr


def test_a_jsonl_corpus_with_text_is_still_read_as_books(index_names, tmp_path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = " ".join(word_slice(gutenberg_body("walden-en-pg205"), 2500, 0))
    _write_jsonl(
        corpus / "books.jsonl",
        [{"id": "w1", "title": "Walden", "text": text}, {"id": "w2", "title": "Walden"}],
    )
    result = invoke(index_names.prefix, "index", "--workers", "1", str(corpus))
    assert result.exit_code == 1
    assert "1 indexed, 0 unchanged, 1 failed" in result.stdout
    assert "record has neither 'pages' nor 'text'" in result.stderr
