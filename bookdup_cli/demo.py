"""`bookdup demo`: the README's first command — the whole job end to end on the shipped corpus."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import click

from bookdup.evaluate import pair_differences, relation_metrics
from readers.groundtruth import load_jsonl
from store.connection import ElasticsearchUnavailable, connect
from store.schema import IndexNames

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo" / "corpus"


def _ensure_node(settings: Any) -> Any:
    """Connect; if nothing answers at the default local URL, bring up the local node first."""
    try:
        return connect(settings)
    except ElasticsearchUnavailable:
        if not settings.url.startswith(("http://127.0.0.1:", "http://localhost:")):
            raise
    from devnode import localnode

    cfg = localnode.LocalNodeConfig.from_env(port=int(settings.url.rsplit(":", 1)[1].strip("/")))
    click.echo("no Elasticsearch answering; starting the local node (`bookdup es up`) ...")
    try:
        localnode.start(cfg)
    except localnode.LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc
    return connect(settings)


def demo_names(names: IndexNames) -> IndexNames:
    """The demo's own indices: the configured prefix + ``-demo`` (``bookdup-demo-books``...)."""
    return IndexNames(f"{names.prefix}-demo")


def _ground_truth(corpus: Path) -> list[dict[str, Any]]:
    """The generator's ground truth beside (or inside) the corpus folder, if there is one."""
    for path in (corpus.parent / "ground_truth.jsonl", corpus / "ground_truth.jsonl"):
        if path.exists():
            return load_jsonl(path)
    return []


def run_demo(click_ctx: click.Context, corpus: Path | None, keep: bool) -> None:
    """Index ``corpus`` (default: the shipped demo), dedup it and print clusters and relations."""
    from indexer.dedup_job import run_dedup
    from indexer.index_job import run_index
    from store.schema import drop_indices

    ctx = click_ctx.obj
    corpus = corpus or DEMO_DIR
    if not corpus.exists():
        raise click.ClickException(f"demo corpus not found at {corpus}")
    try:
        client = _ensure_node(ctx.settings)
    except ElasticsearchUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    names = demo_names(ctx.names)
    if not keep:
        drop_indices(client, names)  # the demo's own indices only, never the user's
    click.echo(f"indexing {corpus} into {names.books} ...")
    summary = run_index(client, names, [corpus])
    click.echo(
        f"  {summary.indexed} indexed, {summary.unchanged} unchanged, "
        f"{len(summary.failures)} failed ({summary.books_per_s:.1f} books/s)"
    )
    for where, reason in summary.failures:
        click.echo(f"  skipped {where}: {reason}")
    click.echo("finding duplicates, partial duplicates and translations ...")
    dedup = run_dedup(client, names)
    click.echo(
        f"  {dedup.candidate_pairs} candidate pairs of {dedup.books * (dedup.books - 1) // 2} "
        f"possible, {dedup.verified_pairs} verified, relations: {dedup.relations}"
    )
    relations = _print_clusters_and_relations(client, names)
    _print_against_truth(_ground_truth(corpus), relations)
    click.echo(
        f"\nthe demo's books are in its own indices ({names.prefix}-*), apart from yours; "
        f"look at them with:\n"
        f'  bookdup --index-prefix {names.prefix} search "alice"\n'
        f"  bookdup --index-prefix {names.prefix} status\n"
        f"  bookdup --index-prefix {names.prefix} reset    # delete them"
    )


def _print_clusters_and_relations(client: Any, names: Any) -> list[dict[str, Any]]:
    """Work clusters with their edition clusters, then every relation; returns the relations."""
    from store.iterate import iter_documents

    fields = ["title", "language", "edition_cluster", "work_cluster"]
    books = {h["_id"]: h["_source"] for h in iter_documents(client, names.books, source=fields)}
    fields = ["a", "b", "relation", "direction", "its", "confidence"]
    relations = [h["_source"] for h in iter_documents(client, names.relations, source=fields)]
    works: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for book_id, doc in sorted(books.items()):
        works[doc["work_cluster"]][doc["edition_cluster"]].append(book_id)
    n_editions = sum(len(e) for e in works.values())
    click.echo(f"\n{len(works)} work clusters ({n_editions} edition clusters):")
    for work, editions in sorted(works.items(), key=lambda kv: -sum(map(len, kv[1].values()))):
        if sum(map(len, editions.values())) < 2:
            continue
        click.echo(f"  work {work}")
        for edition, members in sorted(editions.items()):
            langs = ",".join(sorted({books[m].get("language") or "?" for m in members}))
            click.echo(f"    edition {edition} [{langs}]: {', '.join(members)}")
    singletons = [w for w, e in works.items() if sum(map(len, e.values())) == 1]
    click.echo(f"  ... and {len(singletons)} books with no relative")
    click.echo("\nrelations:")
    for r in sorted(relations, key=lambda r: (r["relation"], r["a"], r["b"])):
        direction = f" {r['direction']}" if r.get("direction") else ""
        click.echo(
            f"  {r['relation']:<21} {r['a']} ~ {r['b']}{direction} "
            f"(its={r['its']:.3f}, confidence={r['confidence']:.2f})"
        )
    return relations


def _print_against_truth(truth: list[dict[str, Any]], relations: list[dict[str, Any]]) -> None:
    """Related-pair precision and recall against the generator's ground truth (bookdup.evaluate),
    then every pair it missed, classed wrong or found falsely, with both ids and both classes."""
    if not truth:
        return
    related = relation_metrics(truth, relations)["RELATED"]
    hit, found = int(related["tp"]), int(related["predicted"])
    click.echo(
        f"\nagainst the generator's ground truth: {hit} of {related['true']} related pairs found, "
        f"{found - hit} false; precision {related['precision']:.3f}, "
        f"recall {related['recall']:.3f}"
    )
    diffs = pair_differences(truth, relations)
    headings = {
        "missed": "missed (related in the ground truth, not found)",
        "wrong": "classed wrong",
        "false": "found but unrelated in the ground truth",
    }
    for kind, heading in headings.items():
        if not diffs[kind]:
            continue
        click.echo(f"{heading}: {len(diffs[kind])}")
        for first, second, true, found_as in diffs[kind]:
            click.echo(f"  {first} ~ {second}: truth {true}, found {found_as}")
