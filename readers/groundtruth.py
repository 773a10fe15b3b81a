"""Evaluation inputs: JSON Lines of plain records, as `bookdup generate` writes them.

``ground_truth.jsonl`` (one related pair a line), ``books.jsonl`` (one book's metadata a line)
or saved predictions, read into the dicts that ``bookdup.evaluate`` scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["load_jsonl"]


def load_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """Lines of a JSONL file (ground truth, predictions, books); blank lines are skipped."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
