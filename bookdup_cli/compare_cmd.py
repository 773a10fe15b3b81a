"""`bookdup compare A B`: relation between two book files, with the evidence (no index needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from bookdup.compare import compare_features
from bookdup.features import extract_features
from bookdup.model import Book
from bookdup.orderstat import describe_order
from bookdup.signals import describe_neighbours
from readers import iter_books
from readers.dictionaries import resolve_dictionary

_SIGNAL_LINES = (
    ("book similarity (min-hash Jaccard)", "book_similarity"),
    ("page-based book similarity", "page_similarity"),
    ("pages matched (smaller book)", "page_match_fraction"),
    ("page agreement", "page_agreement"),
    ("linear fit slope a", "slope"),
    ("linear fit offset b", "offset"),
    ("fit residual (pages)", "fit_residual"),
    ("Δpages (x − y)", "delta_pages"),
    ("Δpage count (eq. 3)", "delta_page_count"),
    ("relative consecutive page correlation", "consecutive_corr"),
    ("coverage x / y", ("coverage_x", "coverage_y")),
    ("span x / y", ("span_x", "span_y")),
    ("contiguity x / y", ("contiguity_x", "contiguity_y")),
    ("neighbour words agreeing / comparable", ("neighbour_agreement", "neighbour_share")),
)


def _read_one(path: Path, lines_per_page: int) -> Book:
    """The first book in ``path`` (any reader format); a usage error if there is none."""
    for item in iter_books([path], lines_per_page=lines_per_page):
        if isinstance(item, Book):
            return item
        raise click.BadParameter(str(item), param_hint=str(path))
    raise click.BadParameter("no book found", param_hint=str(path))


def _summary(r: dict[str, Any]) -> str:
    """Readable report: the papers' scores, the Google signals, the class."""
    scores = r["scores"]
    s = r["signals"]
    lines = [
        f"x: {r['ids'][0]}  [{r['languages'][0]}]",
        f"y: {r['ids'][1]}  [{r['languages'][1]}]",
    ]
    if r["dictionary"]:
        lines.append(f"translated {r.get('translated') or 'x'} with dictionary {r['dictionary']}")
    lines += [
        f"unique words |X| = {r['x']}, |Y| = {r['y']}, shared = {r['shared']}, |LCS| = {r['lcs']}",
        f"{scores}-cs = {r['cs']:.4f}   {scores}-its = {r['its']:.4f}",
        describe_order(r["order"], ("x", "y")),
        *filter(None, [describe_neighbours(s)]),
        "signals:",
    ]
    for label, key in _SIGNAL_LINES:
        value = " / ".join(str(s[k]) for k in key) if isinstance(key, tuple) else str(s[key])
        lines.append(f"  {label:<40} {value}")
    direction = f" ({r['direction']})" if r["direction"] else ""
    lines.append(f"relation: {r['relation']}{direction}  confidence {r['confidence']:.3f}")
    others = ", ".join(f"{k} {v:.3f}" for k, v in r["confidences"].items() if v > 0)
    lines.append(f"  per class: {others}")
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
    "--lines-per-page", default=40, show_default=True, help="page size for text without form feeds"
)
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
def compare(a: Path, b: Path, dictionary: str | None, lines_per_page: int, as_json: bool) -> None:
    """Compare book files A and B: unique-word scores, page signals and the relation class."""
    book_a, book_b = _read_one(a, lines_per_page), _read_one(b, lines_per_page)
    try:
        fa, fb = extract_features(book_a), extract_features(book_b)
        lexicon = resolve_dictionary(fa.language, fb.language, dictionary)
        result = {"ids": [book_a.id, book_b.id], **compare_features(fa, fb, dictionary=lexicon)}
    except ValueError as err:  # unknown or missing dictionary
        raise click.UsageError(str(err)) from err
    click.echo(json.dumps(result, ensure_ascii=False) if as_json else _summary(result))
