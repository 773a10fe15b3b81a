"""The read side on the command line: search, related (editions), match, explain, serve, sync.

Each command calls one function of ``query/`` (the same the HTTP server calls) and prints a
table, or ``--json``. Errors are one line (``click.ClickException``), never a traceback.
"""

from __future__ import annotations

import errno
import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from bookdup_cli.tables import book_line, echo_groups, echo_table
from devnode.config import is_loopback
from query.context import BadRequest, NotFound, ReadSide
from store.connection import serving_client

T = TypeVar("T")

#: ``--pivot-pairs/--no-pivot-pairs`` of dedup and match (issue 27).
PIVOT_QUERY_HELP = (
    "also find translations by the books' pivot pair keys (`bookdup index` stores them; "
    "used only when some book holds them) [default: on]"
)


def _run(call: Callable[[], T]) -> T:
    """Run a read-side call; its refusals become one-line CLI errors."""
    try:
        return call()
    except (BadRequest, NotFound) as exc:
        raise click.ClickException(str(exc)) from exc
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def _dump(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


# --- search ----------------------------------------------------------------------------------


def _hit_row(hit: dict[str, Any], collapse: str) -> list[Any]:
    size = f"({hit['cluster_size']} in cluster"
    if collapse != "work" and hit.get("translation_count"):
        size += f", {hit['translation_count']} in other languages"
    return [
        hit["book_id"],
        hit.get("language") or "?",
        hit.get("year") or "",
        hit["display_title"],
        size + ")",
    ]


@click.command("search")
@click.argument("text")
@click.option("--collapse", type=click.Choice(["edition", "work", "none"]), default="edition")
@click.option("--language", default=None, help="only books in this language (ISO 639-1)")
@click.option("--page", type=int, default=1, show_default=True)
@click.option("--size", "per_page", type=int, default=10, show_default=True, help="hits a page")
@click.option("--json", "as_json", is_flag=True, help="the page's hits as a JSON list")
@click.pass_obj
def search_cmd(
    ctx: Any,
    text: str,
    collapse: str,
    language: str | None,
    page: int,
    per_page: int,
    as_json: bool,
) -> None:
    """Catalog search: one hit per edition (or work) cluster, with the cluster's size."""
    from query.search import search

    client = ctx.client()
    filters = {"language": language} if language else None
    result = _run(
        lambda: search(
            client,
            ctx.names.books,
            text,
            collapse=collapse,
            filters=filters,
            page=page,
            per_page=per_page,
        )
    )
    if as_json:
        _dump([dict(h, editions=h["members"]) for h in result["hits"]])
    else:
        echo_table([_hit_row(h, collapse) for h in result["hits"]])
    _search_footer(result)


def _search_footer(result: dict[str, Any]) -> None:
    """What was found, on stderr (stdout keeps one line per hit)."""
    q, collapse = result["query"], result["collapse"]
    if result["total_books"] == 0:
        click.echo(
            f"no book matches {q!r} (titles, authors and each book's opening words are "
            "searched; try fewer or other words)",
            err=True,
        )
        return
    unit = "books" if collapse == "none" else f"{collapse} clusters"
    click.echo(
        f"{result['total_groups']} {unit} ({result['total_books']} matching books); "
        f"page {result['page']} of {max(result['pages'], 1)}",
        err=True,
    )


# --- related / editions / match --------------------------------------------------------------


def _print_related(result: dict[str, Any]) -> None:
    book = result["book"]
    click.echo(book_line(book))
    clusters = (
        f"edition cluster {book.get('edition_cluster')}, work cluster {book.get('work_cluster')}"
    )
    if book.get("indexed_as"):
        click.echo(f"already indexed as {book['indexed_as']}; {clusters}")
    elif book.get("indexed") is False:
        where = (
            f"would join edition cluster {book['edition_cluster']}"
            if book.get("edition_cluster")
            else "matches no indexed edition: it would start a cluster of its own"
        )
        click.echo(f"not indexed; {where}")
    else:
        click.echo(clusters)
    echo_groups(result)


def _related_of(ctx: Any, book_id: str) -> dict[str, Any]:
    from query.related import related

    client = ctx.client()
    return _run(lambda: related(client, ctx.names.books, ctx.names.relations, book_id))


def _match_file(ctx: Any, path: Path, pivot_pairs: bool = True) -> dict[str, Any]:
    from query.match import match, read_one_book
    from store.candidates import CandidateParams

    rs = ReadSide(ctx.client(), ctx.names, params=CandidateParams(pivot_pairs=pivot_pairs))
    return _run(lambda: match(rs, read_one_book(path)))


def _plot(ctx: Any, result: dict[str, Any], plot: Path, file_: Path | None) -> None:
    from query.match import read_one_book
    from query.plots import plot_alignments

    book = read_one_book(file_) if file_ else None
    _run(lambda: plot_alignments(ctx.client(), ctx.names, result, plot, book=book))
    click.echo(f"alignment plot written to {plot}", err=True)


def _related_command(name: str, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("book_id", required=False)
    @click.option(
        "--file",
        "file_",
        type=click.Path(exists=True, dir_okay=True, path_type=Path),
        help="a book that is not in the index (any input format): the same as `bookdup match`",
    )
    @click.option("--json", "as_json", is_flag=True)
    @click.option(
        "--plot",
        type=click.Path(path_type=Path),
        default=None,
        help="write a picture of the page alignment with each related book (.png, .svg, .pdf, "
        "…; the folder must exist)",
    )
    @click.pass_obj
    def command(
        ctx: Any, book_id: str | None, file_: Path | None, as_json: bool, plot: Path | None
    ) -> None:
        if bool(book_id) == bool(file_):
            raise click.UsageError("give either a BOOK_ID or --file")
        if plot:
            from query.plots import picture_format

            _run(lambda: picture_format(plot))
        result = _match_file(ctx, file_) if file_ else _related_of(ctx, str(book_id))
        if plot:
            _plot(ctx, result, plot, file_)
        if as_json:
            _dump(result)
        else:
            _print_related(result)

    return command


related_cmd = _related_command(
    "related",
    "Other editions, parts and translations of BOOK_ID, grouped by relation class.",
)
editions_cmd = _related_command("editions", "The same as `bookdup related` (its older name).")


@click.command("match")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
@click.option("--pivot-pairs/--no-pivot-pairs", default=True, help=PIVOT_QUERY_HELP)
@click.pass_obj
def match_cmd(ctx: Any, path: Path, as_json: bool, pivot_pairs: bool) -> None:
    """Related books of a text that is not in the index (any input format); writes nothing."""
    result = _match_file(ctx, path, pivot_pairs)
    if as_json:
        _dump(result)
    else:
        _print_related(result)


# --- explain ---------------------------------------------------------------------------------


def _print_explain(e: dict[str, Any]) -> None:
    click.echo(f"A  {book_line(e['a'])}")
    click.echo(f"B  {book_line(e['b'])}")
    click.echo(f"\n{e['relation']} ({e['label']}), confidence {e['confidence']:.2f}")
    click.echo(e["verdict"])
    click.echo("\nhow it was decided:")
    for step in e["decision"]:
        click.echo(f"  - {step}")
    click.echo("\nconfidence of each class:")
    ranked = sorted(e["confidences"].items(), key=lambda kv: -kv[1])
    echo_table([[f"  {k}", f"{v:.3f}"] for k, v in ranked])
    regions = e["alignment"]["regions"]
    if regions:
        click.echo("\naligned passages:")
        rows = [
            [
                f"  A p. {r['a_pages'][0]}-{r['a_pages'][1]}",
                f"B p. {r['b_pages'][0]}-{r['b_pages'][1]}",
                f"{r['words']} words",
                "boilerplate" if r["boilerplate"] else "text",
            ]
            for r in regions
        ]
        echo_table(rows)
    if e["signals"]:
        click.echo("\nsignals:")
        labels = e.get("signal_labels") or {}
        rows = [[f"  {labels.get(k, k)}", v] for k, v in e["signals"].items() if v is not None]
        echo_table(rows)


@click.command("explain")
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--plot",
    type=click.Path(path_type=Path),
    default=None,
    help="write the picture (dot plot and bars) in the format its suffix names: .png, .svg, "
    ".pdf, .jpg, .gif, … (the folder must exist)",
)
@click.pass_obj
def explain_cmd(ctx: Any, a: str, b: str, as_json: bool, plot: Path | None) -> None:
    """Why books A and B are (or are not) related: signals, confidences, the alignment."""
    from query.explain import explain
    from query.plots import picture_format, render_explain

    fmt = _run(lambda: picture_format(plot)) if plot else None
    rs = ReadSide(ctx.client(), ctx.names)
    result = _run(lambda: explain(rs, a, b))
    if plot and fmt:
        picture = _run(lambda: render_explain(result, fmt))
        try:
            plot.write_bytes(picture)
        except OSError as exc:
            raise click.ClickException(f"{plot}: {exc.strerror or exc}") from exc
        click.echo(f"picture written to {plot}", err=True)
    if as_json:
        _dump(result)
    else:
        _print_explain(result)


# --- serve -----------------------------------------------------------------------------------


def check_port_free(host: str, port: int) -> None:
    """Bind ``host:port`` once (as uvicorn will, with SO_REUSEADDR) and let it go; a one-line
    error when it cannot be bound, before anything announces the URL."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError, OverflowError) as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from exc
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            busy = exc.errno == errno.EADDRINUSE
            reason = "the port is already in use (try --port)" if busy else exc.strerror or exc
            raise click.ClickException(f"cannot listen on {host}:{port}: {reason}") from exc


def _limit(flag: str, default: float, kind: type, minimum: float, help: str) -> Any:
    """A ``serve`` limit: a number at least ``minimum``, its default shown in --help."""
    bound = click.IntRange(min=int(minimum)) if kind is int else click.FloatRange(min=minimum)
    return click.option(flag, type=bound, default=default, show_default=True, help=help)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=int, default=8000, show_default=True)
@click.option("--max-body-mb", type=float, default=25.0, show_default=True)
@click.option(
    "--max-bodies-mb",
    type=click.FloatRange(min=0),
    default=None,
    help="request bodies held at once, all requests together, in MB; beyond it a 429 "
    "[default: 4 x --max-body-mb]",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="a Host name the server answers besides 127.0.0.1, localhost and ::1 (and --host); "
    "repeatable; any port",
)
@_limit(
    "--max-inflight",
    8,
    int,
    1,
    "searches and related lookups worked on at once; more wait --queue-wait, then get 429",
)
@_limit(
    "--max-heavy",
    2,
    int,
    1,
    "matches, explains and plots worked on at once (apart from --max-inflight)",
)
@_limit("--queue-wait", 1.0, float, 0, "seconds a request waits for a place before its 429")
@_limit(
    "--request-timeout",
    8.0,
    float,
    0.1,
    "seconds a request may spend on Elasticsearch, retries included (then 504, or 503 "
    "when the node is down)",
)
@_limit(
    "--header-timeout",
    10.0,
    float,
    0.1,
    "seconds a client may take to send a request's headers (then 408, connection closed)",
)
@_limit(
    "--body-timeout",
    30.0,
    float,
    0.1,
    "seconds a client may take to send a request's body (then 408, connection closed)",
)
@_limit("--keep-alive", 5.0, float, 0.1, "seconds an idle connection is kept open after an answer")
@_limit(
    "--max-header-kb",
    16,
    int,
    1,
    "a request's line and headers, in KB (over it, or over 100 header lines: 431)",
)
@_limit(
    "--verify-cache-mb",
    256.0,
    float,
    0,
    "memory of the cache of prepared word sequences (match, explain), in MB",
)
@click.option(
    "--loop",
    type=click.Choice(["auto", "asyncio", "uvloop"]),
    default="auto",
    show_default=True,
    help="the event loop: uvloop when installed (auto), or the one named",
)
@click.pass_obj
def serve_cmd(
    ctx: Any,
    host: str,
    port: int,
    loop: str,
    max_body_mb: float,
    max_bodies_mb: float | None,
    allowed_hosts: tuple[str, ...],
    header_timeout: float,
    body_timeout: float,
    keep_alive: float,
    max_header_kb: int,
    verify_cache_mb: float,
    **limits: Any,
) -> None:
    """Serve the read side: a JSON API under /api and a review page at /."""
    try:
        import uvicorn

        from server.admission import Limits
        from server.app import create_app
        from server.protocol import GuardedH11Protocol
    except ImportError as exc:
        raise click.ClickException(
            f"`bookdup serve` needs the serve extra: pip install 'bookdup[serve]' ({exc.name})"
        ) from exc
    if not is_loopback(host):
        click.echo(
            f"warning: listening on {host}, not loopback; the API has no authentication",
            err=True,
        )
    check_port_free(host, port)
    from bookdup.verify import set_cache_limit

    set_cache_limit(max_bytes=int(verify_cache_mb * 1024 * 1024))
    if host not in ("0.0.0.0", "::", ""):  # the address it listens on is a name it answers
        allowed_hosts = (*allowed_hosts, host)
    ctx.client()  # one clear line now if the node is unusable
    client = serving_client(ctx.settings, limits["request_timeout"])
    app = create_app(
        ReadSide(client, ctx.names),
        max_body=int(max_body_mb * 1024 * 1024),
        allowed_hosts=allowed_hosts,
        limits=Limits(**limits),
        max_bodies=None if max_bodies_mb is None else int(max_bodies_mb * 1024 * 1024),
        body_timeout=body_timeout,
        max_header_bytes=max_header_kb * 1024,
    )
    click.echo(f"bookdup review page and API on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        server_header=False,
        http=GuardedH11Protocol.configured(header_timeout, max_header_kb * 1024),
        timeout_keep_alive=keep_alive,  # type: ignore[arg-type]
        h11_max_incomplete_event_size=max_header_kb * 1024,
        loop=loop,
    )


# --- sync ------------------------------------------------------------------------------------


@click.command("sync")
@click.option("--into", "target", required=True, help="the catalog index to write cluster ids to")
@click.option(
    "--id-field",
    default=None,
    help="field of the catalog documents holding bookdup's book id (default: the document _id)",
)
@click.option("--related", "with_related", is_flag=True, help="also write related_books ids")
@click.option("--dry-run", is_flag=True, help="count what would change, write nothing")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def sync_cmd(
    ctx: Any, target: str, id_field: str | None, with_related: bool, dry_run: bool, as_json: bool
) -> None:
    """Write edition_cluster / work_cluster into a catalog index bookdup did not create."""
    from query.sync import SyncOptions, sync_clusters

    options = SyncOptions(id_field=id_field, related=with_related, dry_run=dry_run)
    summary = _run(lambda: sync_clusters(ctx.client(), ctx.names, target, options))
    if as_json:
        _dump(summary.as_dict())
        return
    verb = "would update" if dry_run else "updated"
    click.echo(
        f"{target}: {summary.matched} catalog documents matched bookdup books; {verb} "
        f"{summary.updated}, {summary.unchanged} already current; "
        f"{summary.unmatched} bookdup books not in the catalog"
        + (f"; mapping: added {', '.join(summary.fields_added)}" if summary.fields_added else "")
    )
    for failure in summary.failures[:20]:
        click.echo(f"  failed {failure}", err=True)
    if summary.failures:
        sys.exit(1)


READ_COMMANDS = [
    search_cmd,
    related_cmd,
    editions_cmd,
    match_cmd,
    explain_cmd,
    serve_cmd,
    sync_cmd,
]
