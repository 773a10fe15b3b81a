"""`bookdup es`: run a local Elasticsearch node (thin over devnode.localnode)."""

from __future__ import annotations

from pathlib import Path

import click

from devnode import localnode
from devnode.localnode import LocalNodeConfig, LocalNodeError


def _config(
    version: str | None = None,
    port: int | None = None,
    heap: str | None = None,
    data_dir: Path | None = None,
) -> LocalNodeConfig:
    return LocalNodeConfig.from_env(version=version, port=port, heap=heap, data_dir=data_dir)


_port_option = click.option(
    "--port", type=int, default=None, help="HTTP port [env BOOKDUP_ES_PORT; default 9200]"
)


@click.group("es")
def es() -> None:
    """Run a local single-node Elasticsearch (no Docker needed)."""


@es.command("up")
@click.option("--version", default=None, help="Elasticsearch version [env BOOKDUP_ES_VERSION]")
@_port_option
@click.option("--heap", default=None, help="JVM heap, e.g. 1g [env BOOKDUP_ES_HEAP]")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="node state directory [env BOOKDUP_ES_DATA]",
)
def up(version: str | None, port: int | None, heap: str | None, data_dir: Path | None) -> None:
    """Download (once), start and wait for the node; a running node is reused."""
    try:
        localnode.start(_config(version, port, heap, data_dir))
    except LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc


@es.command("down")
@_port_option
def down(port: int | None) -> None:
    """Stop the node started by `es up` (its data is kept)."""
    cfg = _config(port=port)
    try:
        stopped = localnode.stop(cfg)
    except LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"stopped Elasticsearch at {cfg.url}" if stopped else f"no node of ours at {cfg.url}"
    )


@es.command("status")
@_port_option
def status(port: int | None) -> None:
    """Say whether the node runs, its version, health and data dir; exit 1 when it does not run."""
    st = localnode.status(_config(port=port))
    click.echo(st.describe())
    if not st.running:
        raise SystemExit(1)
