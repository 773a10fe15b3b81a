"""Terminal output of the read side: one table style, one wording, everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from query.display import direction_words

MAX_CELL = 60


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str] | None = None) -> list[str]:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    cells = [[_cell(v) for v in row] for row in rows]
    if headers:
        cells.insert(0, [h.upper() for h in headers])
    if not cells:
        return []
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return [
        "  ".join(
            c.ljust(w) if i < len(row) - 1 else c
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in cells
    ]


def echo_table(rows: Sequence[Sequence[Any]], headers: Sequence[str] | None = None) -> None:
    for line in table(rows, headers):
        click.echo(line.rstrip())


def book_line(book: dict[str, Any]) -> str:
    parts = [book.get("book_id"), book.get("language") or "?", book.get("display_title")]
    if book.get("author"):
        parts.append(f"by {book['author']}")
    if book.get("n_pages"):
        parts.append(f"({book['n_pages']} pages)")
    return "  ".join(str(p) for p in parts if p)


def relation_rows(relations: Sequence[dict[str, Any]]) -> list[list[Any]]:
    return [
        [
            r["book_id"],
            r.get("language") or "?",
            r.get("display_title", ""),
            direction_words(r.get("direction"), r.get("relation")) or "-",
            f"{r['confidence']:.2f}",
            f"{r['its']:.3f}",
            f"{r['cs']:.3f}",
        ]
        for r in relations
    ]


RELATION_HEADERS = ["book", "lang", "title", "direction", "conf", "its", "cs"]


def echo_groups(result: dict[str, Any]) -> None:
    """A book's (or a text's) related books, one table per relation class."""
    if not result["groups"]:
        click.echo("no related books found")
        return
    for group in result["groups"]:
        click.echo(f"\n{group['label']} ({group['relation']}): {len(group['books'])}")
        for line in table(relation_rows(group["books"]), RELATION_HEADERS):
            click.echo(f"  {line}".rstrip())
