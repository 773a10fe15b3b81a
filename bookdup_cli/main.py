"""The `bookdup` command: sub-commands grouped by job, thin over indexer/ and query/."""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from elasticsearch import ApiError, TransportError

from bookdup_cli.compare_cmd import compare
from bookdup_cli.es_cmd import es
from bookdup_cli.eval_cmd import evaluate
from bookdup_cli.generate_cmd import generate
from bookdup_cli.progress import Progress
from bookdup_cli.read_cmds import PIVOT_QUERY_HELP, READ_COMMANDS
from readers import DEFAULT_LINES_PER_PAGE
from store.connection import (
    ConnectionSettings,
    ElasticsearchUnavailable,
    connect,
    explain_error,
)
from store.locks import JobLocked
from store.schema import DEFAULT_PREFIX, IndexNames, LayoutError, prefix_problem


@dataclass
class Context:
    """What every sub-command needs: where the cluster is and which indices to use."""

    settings: ConnectionSettings
    names: IndexNames

    def client(self) -> Any:
        try:
            return connect(self.settings)
        except ElasticsearchUnavailable as exc:
            raise click.ClickException(str(exc)) from exc


pass_context = click.make_pass_decorator(Context)


class JobGroup(click.Group):
    """Every command ends a failing cluster conversation with one line and exit code 1.

    A node that dies mid-job (after the retry budget), refuses a request or answers garbage
    must not print a traceback: the operator needs to know what happened and that a rerun
    resumes.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LayoutError as exc:  # BOOKDUP_SHARDS / BOOKDUP_REPLICAS, read by every job
            raise click.ClickException(str(exc)) from exc
        except (TransportError, ApiError) as exc:
            settings = ctx.obj.settings if isinstance(ctx.obj, Context) else None
            message = explain_error(exc, settings or ConnectionSettings.from_env())
            raise click.ClickException(
                f"{message} — the job stopped; nothing written is lost, a rerun resumes"
            ) from exc


def _checked_prefix(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--index-prefix`` as Elasticsearch will take it in index names."""
    problem = prefix_problem(value)
    if problem:
        raise click.BadParameter(f"{value!r}: {problem}", ctx, param)
    return value


@click.group(cls=JobGroup)
@click.option("--es-url", envvar="ELASTICSEARCH_URL", default=None, help="cluster URL")
@click.option("--api-key", envvar="ELASTICSEARCH_API_KEY", default=None, help="API key")
@click.option("--user", envvar="ELASTICSEARCH_USERNAME", default=None, help="basic-auth user")
@click.option("--password", envvar="ELASTICSEARCH_PASSWORD", default=None, help="password")
@click.option("--ca-certs", envvar="ELASTICSEARCH_CA_CERTS", default=None, help="CA bundle")
@click.option("--timeout", type=float, default=None, help="request timeout in seconds")
@click.option(
    "--index-prefix",
    envvar="BOOKDUP_INDEX_PREFIX",
    default=DEFAULT_PREFIX,
    show_default=True,
    callback=_checked_prefix,
)
@click.option("-v", "--verbose", is_flag=True, help="log retries and requests")
@click.version_option(package_name="bookdup")
@click.pass_context
def cli(
    ctx: click.Context,
    es_url: str | None,
    api_key: str | None,
    user: str | None,
    password: str | None,
    ca_certs: str | None,
    timeout: float | None,
    index_prefix: str,
    verbose: bool,
) -> None:
    """Find duplicate editions, partial duplicates and translations of books in Elasticsearch."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )
    if not verbose:
        logging.getLogger("elastic_transport").setLevel(logging.ERROR)
    settings = ConnectionSettings.from_env(
        url=es_url,
        api_key=api_key,
        username=user,
        password=password,
        ca_certs=ca_certs,
        timeout=timeout,
    )
    ctx.obj = Context(settings, IndexNames(index_prefix))


@cli.command("index")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--workers", type=int, default=None, help="processes (default: all cores)")
@click.option("--lines-per-page", type=int, default=DEFAULT_LINES_PER_PAGE, show_default=True)
@click.option("--encoding", default=None, help="force an input encoding instead of detecting")
@click.option(
    "--max-book-mb",
    type=click.FloatRange(min=0, min_open=True),
    default=32,
    show_default=True,
    help="largest book accepted, in MB of text; a larger one is reported and skipped",
)
@click.option(
    "--bulk-chunk",
    type=click.IntRange(min=1),
    default=None,
    help="most books per bulk request [default: 20]; the node's 429s make them fewer for a while",
)
@click.option(
    "--shards",
    type=click.IntRange(min=1),
    default=None,
    help="primary shards of the books and relations indices when this job creates them"
    " [env BOOKDUP_SHARDS; default 1]",
)
@click.option(
    "--replicas",
    type=click.IntRange(min=0),
    default=None,
    help="replicas of every index (applied to existing ones too) [env BOOKDUP_REPLICAS; default 0]",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="extract on Dask: a scheduler's address (tcp://host:8786), or 'local' for a "
    "LocalCluster of --workers processes (needs the 'dask' extra)",
)
@click.option(
    "--pivot-pairs/--no-pivot-pairs",
    default=True,
    help="index each book's pivot pair keys (its rare words in order, mapped into English), "
    "which `bookdup dedup` and `match` search for translations; books already indexed and "
    "unchanged get none until indexed again [default: on]",
)
@pass_context
def index_cmd(
    ctx: Context,
    paths: tuple[Path, ...],
    workers: int | None,
    lines_per_page: int,
    encoding: str | None,
    max_book_mb: float,
    bulk_chunk: int | None,
    shards: int | None,
    replicas: int | None,
    scheduler: str | None,
    pivot_pairs: bool,
) -> None:
    """Read books from PATHS (txt, page folders, JSONL, ALTO, hOCR, _djvu.txt; any of them
    .gz) and index them."""
    from indexer.index_job import IndexOptions, count_inputs, run_index
    from store.schema import IndexLayout

    layout = IndexLayout.from_env(shards=shards, replicas=replicas)
    if scheduler:  # said before any node is reached
        _require_dask()
    client = ctx.client()
    options = IndexOptions(
        lines_per_page=lines_per_page,
        encoding=encoding,
        max_book_mb=max_book_mb,
        layout=layout,
        scheduler=scheduler,
        pivot_pairs=pivot_pairs,
    )
    if workers:
        options = dataclasses.replace(options, workers=workers)
    if bulk_chunk:
        options = dataclasses.replace(options, bulk_chunk=bulk_chunk)
    with Progress("indexing", total=count_inputs(list(paths)), unit="books") as bar:
        try:
            summary = run_index(client, ctx.names, list(paths), options, progress=bar.update)
        except ValueError as exc:  # no Dask scheduler at the address
            raise click.ClickException(str(exc)) from exc
    _report_resumed(summary.resumed_from)
    click.echo(
        f"run {summary.run_id}: {summary.indexed} indexed, {summary.unchanged} unchanged, "
        f"{len(summary.failures)} failed in {summary.seconds:.1f} s "
        f"({summary.books_per_s:.1f} books/s)"
    )
    if summary.resent:
        click.echo(
            f"the node pushed back (429): {summary.resent} books sent again, requests "
            f"down to {summary.smallest_chunk} books",
            err=True,
        )
    for where, warning in summary.warnings[:50]:
        click.echo(f"  warning {where}: {warning}", err=True)
    _report_failures(summary.failures, summary.run_id)
    if pivot_pairs:
        _report_without_pivots(client, ctx.names)
    if summary.failures:
        sys.exit(1)


def _report_without_pivots(client: Any, names: IndexNames) -> None:
    """Say how many books the pivot pair keys miss: a flag added to an existing index does
    not reach its unchanged books, and nothing else would tell."""
    from store.schema import books_without_pivots

    missing, total = books_without_pivots(client, names)
    if missing:
        click.echo(
            f"{missing} of {total} books hold no pivot pair keys (indexed by an earlier build "
            "or with --no-pivot-pairs, or in a language no lexicon maps into English): their "
            "translations are found by the other keys only; `bookdup reset` and index again "
            "to give them keys",
            err=True,
        )


def _require_dask() -> None:
    """``--scheduler`` without the 'dask' extra: one clear error, said before any work."""
    from indexer.dask_cluster import require_distributed

    try:
        require_distributed()
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def _report_resumed(run_id: str | None) -> None:
    if run_id:
        click.echo(f"resumed the work of interrupted run {run_id}", err=True)


def _report_failures(failures: list[tuple[str, str]], run_id: str, limit: int = 50) -> None:
    for where, reason in failures[:limit]:
        click.echo(f"  skipped {where}: {reason}", err=True)
    if len(failures) > limit:
        click.echo(
            f"  ... and {len(failures) - limit} more "
            f"(all of them: `bookdup status --skipped --run {run_id}`)",
            err=True,
        )


@cli.command("dedup")
@click.option("--since", default=None, help="only books indexed since this run id or ISO time")
@click.option("--no-translations", is_flag=True, help="skip cross-language candidates")
@click.option("--json", "as_json", is_flag=True, help="print the summary as JSON")
@click.option(
    "--full",
    is_flag=True,
    help="re-verify every book even when nothing was indexed since the last completed run",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="verification processes (default: all cores, at most 4; 1: in this process)",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="verify on Dask: a scheduler's address (tcp://host:8786), or 'local' for a "
    "LocalCluster of --workers processes (needs the 'dask' extra)",
)
@click.option("--pivot-pairs/--no-pivot-pairs", default=True, help=PIVOT_QUERY_HELP)
@pass_context
def dedup_cmd(
    ctx: Context,
    since: str | None,
    no_translations: bool,
    as_json: bool,
    full: bool,
    workers: int | None,
    scheduler: str | None,
    pivot_pairs: bool,
) -> None:
    """Find, verify, classify and cluster related books; write relations and cluster ids.

    When no book was indexed since the last completed run, says so and does nothing (--full
    re-verifies everything; --since RUN_ID queries with the books indexed since that run)."""
    from indexer.dedup_job import DedupParams, run_dedup
    from store.candidates import CandidateParams

    params = DedupParams(
        candidates=CandidateParams(pivot_pairs=pivot_pairs), translations=not no_translations
    )
    if workers:
        params = dataclasses.replace(params, verify_workers=workers)
    if scheduler:
        _require_dask()
        params = dataclasses.replace(params, verify_scheduler=scheduler)
    client = ctx.client()
    with Progress("dedup", total=None, unit="books") as bar:
        try:
            summary = run_dedup(
                client,
                ctx.names,
                since=since,
                params=params,
                progress=lambda done, total: bar.update(done, total),
                full=full,
            )
        except (ValueError, JobLocked) as exc:
            raise click.ClickException(str(exc)) from exc
    if pivot_pairs and not no_translations:
        _report_without_pivots(client, ctx.names)
    if summary.nothing_new_since:
        message = (
            f"nothing new since run {summary.nothing_new_since}; use --full to re-verify everything"
        )
        if as_json:
            click.echo(json.dumps({"nothing_new_since": summary.nothing_new_since}, indent=2))
            click.echo(message, err=True)
        else:
            click.echo(message)
        return
    _report_resumed(summary.resumed_from)
    _report_missing_lexicons(summary.missing_lexicons)
    if as_json:
        click.echo(
            json.dumps(
                {"run_id": summary.run_id, **summary.as_counts(), "timings": summary.timings},
                indent=2,
            )
        )
        return
    click.echo(
        f"run {summary.run_id}: {summary.query_books} books queried, "
        f"{summary.candidate_pairs} candidate pairs"
        + (
            f" (+{summary.pairs_through_translations} through found translations)"
            if summary.pairs_through_translations
            else ""
        )
        + f", {summary.verified_pairs} verified, "
        f"relations {summary.relations or '{}'}; {summary.edition_clusters} edition clusters, "
        f"{summary.work_clusters} work clusters ({summary.clusters_updated} books updated) "
        f"in {summary.timings.get('total_s', 0):.1f} s"
    )
    _report_failures(summary.skipped, summary.run_id)


def _report_missing_lexicons(pairs: list[str]) -> None:
    """Warn that the translations between ``pairs`` of indexed languages were not searched."""
    if pairs:
        click.echo(
            f"warning: no FreeDict lexicon between {', '.join(pairs)}: translations between "
            "these languages were not searched (`make dictionaries` installs the lexicons, "
            "then run `bookdup dedup --full`)",
            err=True,
        )


@cli.command("remove")
@click.argument("book_ids", nargs=-1, required=True)
@click.option("--yes", is_flag=True, help="do not ask for confirmation")
@pass_context
def remove_cmd(ctx: Context, book_ids: tuple[str, ...], yes: bool) -> None:
    """Withdraw books: delete them and their relations, recompute the clusters they held.

    Says which books and how many relations would go, and asks unless --yes."""
    from indexer.remove_job import removal_plan, run_remove

    client = ctx.client()
    plan = removal_plan(client, ctx.names, list(book_ids))
    for book_id, title in plan.books:
        click.echo(f"  {book_id}" + (f"  {title}" if title else ""))
    for missing in plan.missing:
        click.echo(f"  not in the index: {missing}", err=True)
    click.echo(
        f"{len(plan.books)} books and {plan.relations} relations would be deleted from "
        f"{ctx.names.books} and {ctx.names.relations}"
    )
    if plan.books and not yes:
        click.confirm("delete them?", abort=True)
    try:
        summary = run_remove(client, ctx.names, list(book_ids))
    except JobLocked as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"removed {summary.books_removed} books and {summary.relations_removed} relations; "
        f"{summary.clusters_updated} books changed cluster"
    )
    if summary.missing:
        sys.exit(1)


@cli.command("status")
@click.option("--runs", "n_runs", type=int, default=5, show_default=True)
@click.option("--skipped", is_flag=True, help="list every file or book a run skipped, paged")
@click.option(
    "--run",
    "run_id",
    default=None,
    help="with --skipped: this run [default: the last run that skipped any]",
)
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--page-size", type=click.IntRange(min=1), default=50, show_default=True)
@pass_context
def status_cmd(
    ctx: Context, n_runs: int, skipped: bool, run_id: str | None, page: int, page_size: int
) -> None:
    """Index sizes and the last runs (what each did, how long each stage took, what it skipped).

    With --skipped: every file or book one run skipped and why, a page at a time."""
    from store.runs import last_runs
    from store.schema import ensure_indices

    client = ctx.client()
    ensure_indices(client, ctx.names)
    if skipped:
        _print_skipped(client, ctx.names, run_id, page, page_size)
        return
    for name in ("books", "relations"):
        alias = ctx.names.alias(name)
        click.echo(f"{alias}: {client.count(index=alias)['count']} documents")
    for run in last_runs(client, ctx.names, n_runs):
        click.echo(
            f"{run['run_id']}  {run['status']:<9} {run.get('started_at', '')}  "
            f"{json.dumps(run.get('counts', {}))}"
        )
        if durations := _durations(run.get("timings") or {}):
            click.echo(f"    durations: {durations}")
        run_skipped = run.get("skipped", [])
        for entry in run_skipped[:5]:
            click.echo(f"    skipped {json.dumps(entry)}")
        if len(run_skipped) > 5:
            click.echo(
                f"    ... {len(run_skipped)} skipped in all: "
                f"`bookdup status --skipped --run {run['run_id']}`"
            )


def _durations(timings: dict[str, Any]) -> str:
    """``stage 1.2 s, ...`` from a run's timings (the ``*_s`` entries), total last."""
    stages = [
        f"{name.removesuffix('_s').replace('_', ' ')} {float(value):.1f} s"
        for name, value in timings.items()
        if name.endswith("_s")
        and not name.endswith("_per_s")  # rates, not durations
        and name != "total_s"
        and isinstance(value, int | float)
    ]
    total = timings.get("total_s", timings.get("seconds"))
    if isinstance(total, int | float):
        stages.append(f"total {float(total):.1f} s")
    return ", ".join(stages)


def _print_skipped(client: Any, names: Any, run_id: str | None, page: int, page_size: int) -> None:
    """One page of what a run skipped: the given run, else the latest run that skipped any."""
    from store.runs import get_run, last_runs

    if run_id is not None:
        run = get_run(client, names, run_id)
        if run is None:
            raise click.ClickException(f"no run {run_id!r} in {names.runs}")
    else:
        run = next((r for r in last_runs(client, names, 100) if r.get("skipped")), None)
        if run is None:
            click.echo("no run skipped anything")
            return
    entries = run.get("skipped") or []
    pages = max(1, -(-len(entries) // page_size))
    if page > pages:
        raise click.ClickException(f"page {page} is past the last page ({pages})")
    first = (page - 1) * page_size
    shown = entries[first : first + page_size]
    click.echo(
        f"run {run['run_id']} skipped {len(entries)}; "
        f"{first + 1 if shown else 0}-{first + len(shown)} (page {page} of {pages}):"
    )
    for entry in shown:
        where = entry.get("file") or entry.get("book") or "?"
        click.echo(f"  {where}: {entry.get('reason', '')}")
    failed = (run.get("counts") or {}).get("failed")
    if isinstance(failed, int) and failed > len(entries):
        click.echo(f"  (the run record keeps the first {len(entries)} of {failed})")
    if page < pages:
        click.echo(f"next: bookdup status --skipped --run {run['run_id']} --page {page + 1}")


@cli.command("reset")
@click.option("--yes", is_flag=True, help="do not ask for confirmation")
@pass_context
def reset_cmd(ctx: Context, yes: bool) -> None:
    """Delete this prefix's books, relations and runs indices (everything bookdup wrote).

    Says which indices and how many documents would go, and asks unless --yes."""
    from store.schema import drop_indices, existing_indices

    client = ctx.client()
    indices = existing_indices(client, ctx.names)
    if not indices:
        click.echo(f"nothing to delete: no {ctx.names.prefix}-books, -relations or -runs index")
        return
    for index, count in indices.items():
        click.echo(f"  {index}: {count} documents")
    total = sum(indices.values())
    click.echo(f"{len(indices)} indices with {total} documents would be deleted")
    if not yes:
        click.confirm(f"delete the {ctx.names.prefix}-* indices above?", abort=True)
    drop_indices(client, ctx.names)
    click.echo(f"deleted the {ctx.names.prefix}-books, -relations and -runs indices")


@cli.command("demo")
@click.option(
    "--corpus",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="folder to index (default: the demo corpus shipped in the repository)",
)
@click.option(
    "--keep/--reset",
    default=False,
    help="keep what a previous demo indexed in the demo's own indices (<prefix>-demo-*) "
    "[default: --reset, which drops only those; your own books are never touched]",
)
@click.pass_context
def demo_cmd(click_ctx: click.Context, corpus: Path | None, keep: bool) -> None:
    """The whole job end to end: local node up, index the demo corpus, dedup, print clusters.

    The demo works in its own indices (prefix `<--index-prefix>-demo`), never in yours."""
    from bookdup_cli.demo import run_demo

    run_demo(click_ctx, corpus, keep)


cli.add_command(es)
cli.add_command(compare)
cli.add_command(generate)
cli.add_command(evaluate)
for _command in READ_COMMANDS:
    cli.add_command(_command)
