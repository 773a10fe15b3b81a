"""`bookdup eval`: index + dedup a generated corpus (or read a finished run) and score it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from bookdup.evaluate import evaluate as compute_metrics
from bookdup.evaluate import render_report, translation_map
from readers.groundtruth import load_jsonl


def _predicted(client: Any, names: Any) -> list[dict[str, Any]]:
    from store.iterate import iter_documents

    client.indices.refresh(index=names.relations)
    return [h["_source"] for h in iter_documents(client, names.relations)]


def _translation_maps(
    truth: list[dict[str, Any]], predicted: list[dict[str, Any]], books: list[dict[str, Any]]
) -> dict[str, float]:
    """MAP of translation retrieval per language pair (TRANS evaluates this way)."""
    languages = {b["id"]: b["language"] for b in books}
    scores = [
        (p["a"], p["b"], float(p["its"])) for p in predicted if p["relation"] == "TRANSLATION"
    ]
    pairs = sorted(
        {(languages[t["a"]], languages[t["b"]]) for t in truth if t["relation"] == "TRANSLATION"}
    )
    out = {}
    for src, tgt in pairs:
        out[f"map_{src}_{tgt}"] = translation_map(truth, scores, languages, src, tgt)
    return out


@click.command("eval")
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--reuse", is_flag=True, help="score the relations already in the index")
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the Markdown report here",
)
@click.pass_obj
def evaluate(ctx: Any, corpus: Path, reuse: bool, report: Path | None) -> None:
    """Run index + dedup on a generated CORPUS and report metrics against its ground truth."""
    from indexer.dedup_job import run_dedup
    from indexer.index_job import run_index
    from store.schema import drop_indices

    truth_path = corpus / "ground_truth.jsonl"
    books_path = corpus / "books.jsonl"
    if not truth_path.exists() or not books_path.exists():
        raise click.ClickException(f"{corpus} has no ground_truth.jsonl/books.jsonl (generated?)")
    truth = load_jsonl(truth_path)
    books = load_jsonl(books_path)
    client = ctx.client()
    names = ctx.names
    extra: dict[str, Any] = {}
    dedup = None
    if not reuse:
        drop_indices(client, names)
        books_dir = (
            json.loads((corpus / "corpus.json").read_text())
            .get("config", {})
            .get("books_dir", "books")
        )
        t0 = time.monotonic()
        summary = run_index(client, names, [corpus / books_dir])
        extra["index_s"] = round(time.monotonic() - t0, 1)
        extra["books_per_s_indexed"] = round(summary.books_per_s, 1)
        extra["index_failures"] = len(summary.failures)
        t0 = time.monotonic()
        dedup = run_dedup(client, names)
        extra["dedup_s"] = round(time.monotonic() - t0, 1)
        extra["candidate_pairs"] = dedup.candidate_pairs
        extra["verified_pairs"] = dedup.verified_pairs
    predicted = _predicted(client, names)
    n_books = len(books)
    metrics = compute_metrics(
        truth,
        predicted,
        n_books=n_books,
        n_verified=dedup.verified_pairs if dedup else None,
        n_words={b["id"]: int(b["n_words"]) for b in books if "n_words" in b},
    )
    metrics.update(extra)
    metrics.update(_translation_maps(truth, predicted, books))
    text = render_report(metrics)
    click.echo(text)
    if report:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(text, encoding="utf-8")
        click.echo(f"report written to {report}", err=True)
