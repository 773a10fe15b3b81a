"""JSON Lines of evaluation records (ground truth, books, predictions)."""

from __future__ import annotations

from pathlib import Path

from readers.groundtruth import load_jsonl


def test_load_jsonl_reads_records_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "ground_truth.jsonl"
    path.write_text(
        '{"a": "b1", "b": "b2", "relation": "TRANSLATION"}\n\n  \n{"a": "b3", "b": "é"}\n',
        encoding="utf-8",
    )
    assert load_jsonl(path) == [
        {"a": "b1", "b": "b2", "relation": "TRANSLATION"},
        {"a": "b3", "b": "é"},
    ]
    assert load_jsonl(str(path)) == load_jsonl(path)
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    assert load_jsonl(tmp_path / "empty.jsonl") == []
