"""`bookdup compare A B`: relation between two book files, with the evidence (no index needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from bookdup.classify import describe_local, describe_neighbours
from bookdup.compare import compare_features
from bookdup.features import extract_features
from bookdup.model import Book
from bookdup.orderstat import describe_order
from bookdup.vocabulary import SIGNAL_LINES, part_direction, relation_label, verdict_sentence
from readers import DEFAULT_LINES_PER_PAGE, iter_books
from readers.dictionaries import resolve_dictionary

#: Signals that need a page mapping: without one they are all None (a translation, no runs).
_PAGE_FIT_KEYS = {"slope", "offset", "fit_residual", "delta_page_count"}


def _read_one(path: Path, lines_per_page: int) -> Book:
    """The first book in ``path`` (any reader format); a usage error if there is none."""
    for item in iter_books([path], lines_per_page=lines_per_page):
        if isinstance(item, Book):
            return item
        raise click.BadParameter(str(item), param_hint=str(path))
    raise click.BadParameter("no book found", param_hint=str(path))


def _value(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _signal_lines(s: dict[str, Any]) -> list[str]:
    """The signals a reader can read: no raw None (a missing page fit is said once)."""
    lines = []
    if s and all(s.get(k) is None for k in _PAGE_FIT_KEYS):
        lines.append("  no page mapping (too few aligned words in dense runs)")
    for label, key in SIGNAL_LINES:
        keys = key if isinstance(key, tuple) else (key,)
        values = [s.get(k) for k in keys]
        if all(v is None for v in values):
            continue
        shown = " / ".join("n/a" if v is None else _value(v) for v in values)
        lines.append(f"  {label:<50} {shown}")
    return lines


def verdict_line(r: dict[str, Any]) -> str:
    """The plain-language verdict: the class and direction in the words every reader uses."""
    direction = part_direction(r["relation"], r["direction"], r.get("signals"))
    sentence = verdict_sentence(r["relation"], direction)
    if r["relation"] == "UNRELATED":
        return f"Verdict: {sentence}"
    label = relation_label(r["relation"])
    return f"Verdict: {sentence[:-1]} ({label}, confidence {r['confidence']:.2f})."


def _summary(r: dict[str, Any]) -> str:
    """Readable report: the papers' scores, the Google signals, the class, the verdict."""
    scores = r["scores"]
    s = r["signals"]
    lines = [
        f"A: {r['ids'][0]}  [{r['languages'][0]}]",
        f"B: {r['ids'][1]}  [{r['languages'][1]}]",
    ]
    if r["dictionary"]:
        translated = "B" if r.get("translated") == "y" else "A"
        lines.append(f"translated {translated} with dictionary {r['dictionary']}")
    lines += [
        f"unique words: {r['x']} in A, {r['y']} in B, {r['shared']} shared, "
        f"{r['lcs']} in the same order",
        f"{scores}-cs = {r['cs']:.4f}   {scores}-its = {r['its']:.4f}",
        describe_order(r["order"], ("A", "B")),
        *filter(None, [describe_local(s), describe_neighbours(s)]),
    ]
    if s:
        lines += ["signals:", *_signal_lines(s)]
    others = ", ".join(
        f"{k} {v:.3f}" for k, v in sorted(r["confidences"].items(), key=lambda kv: -kv[1]) if v > 0
    )
    lines.append(f"relation: {r['relation']}  confidence {r['confidence']:.3f}")
    lines.append(f"  per class: {others}")
    lines.append(verdict_line(r))
    return "\n".join(lines)


@click.command("compare")
@click.argument("a", type=click.Path(exists=True, path_type=Path))
@click.argument("b", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--dictionary",
    default=None,
    help="bilingual dictionary, e.g. eng-spa (default: automatic when languages differ)",
)
@click.option(
    "--lines-per-page",
    default=DEFAULT_LINES_PER_PAGE,
    show_default=True,
    help="page size for text without form feeds",
)
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def compare(a: Path, b: Path, dictionary: str | None, lines_per_page: int, as_json: bool) -> None:
    """Compare book files A and B: unique-word scores, page signals and the relation class."""
    book_a, book_b = _read_one(a, lines_per_page), _read_one(b, lines_per_page)
    try:
        fa, fb = extract_features(book_a), extract_features(book_b)
        lexicon = resolve_dictionary(fa.language, fb.language, dictionary)
        compared = compare_features(fa, fb, dictionary=lexicon)
        result = {"ids": [book_a.id, book_b.id], **compared.to_dict()}
    except ValueError as err:  # unknown or missing dictionary
        raise click.UsageError(str(err)) from err
    click.echo(json.dumps(result, ensure_ascii=False) if as_json else _summary(result))
