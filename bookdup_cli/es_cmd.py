"""`bookdup es`: run a local Elasticsearch node (thin over devnode.localnode)."""

from __future__ import annotations

from pathlib import Path

import click

from devnode import localnode
from devnode.config import LocalNodeConfig, LocalNodeError
from devnode.locate import find_node


def _root_es_url() -> str | None:
    """`bookdup --es-url` (or ELASTICSEARCH_URL through it): the node the data commands use."""
    root = click.get_current_context().find_root()
    url = root.params.get("es_url")
    return url if isinstance(url, str) else None


def _config(
    version: str | None = None,
    port: int | None = None,
    heap: str | None = None,
    data_dir: Path | None = None,
    nodes: int | None = None,
) -> LocalNodeConfig:
    try:
        return LocalNodeConfig.from_env(
            es_url=_root_es_url(),
            version=version,
            port=port,
            heap=heap,
            data_dir=data_dir,
            nodes=nodes,
        )
    except LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc


def _located(port: int | None, data_dir: Path | None, nodes: int | None) -> LocalNodeConfig:
    """The node `status` / `down` mean (see devnode.locate), or one clear line."""
    try:
        return find_node(_config(port=port, data_dir=data_dir, nodes=nodes))
    except LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc


_port_option = click.option(
    "--port",
    type=int,
    default=None,
    help="HTTP port [env BOOKDUP_ES_PORT; else the port of ELASTICSEARCH_URL / --es-url when it"
    " is http on this machine; else the port the data dir last ran on; else 9200]",
)
_data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="node state directory (config, data, logs, es.pid) [env BOOKDUP_ES_DATA; default"
    " ~/.local/share/bookdup/elasticsearch/node-PORT, as root"
    " /var/lib/bookdup/elasticsearch/node-PORT]; of a cluster (--nodes N), the folder holding"
    " each node's node-0 … node-N-1 [default .../cluster-PORT]",
)
_nodes_option = click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="nodes of the local cluster: N > 1 serve HTTP on ports PORT … PORT+N-1 (transport"
    " +100), one cluster [env BOOKDUP_ES_NODES; default 1: a single node; status and down"
    " find a cluster from any of its members]",
)


@click.group("es")
def es() -> None:
    """Run a local Elasticsearch: one node, or a cluster of several (no Docker needed).

    \b
    Folders (as root the node runs as an unprivileged user, which cannot enter /root, so homes
    and data go to the shared /var/lib/bookdup/elasticsearch instead of ~/.local/share):
      download cache   ~/.cache/bookdup/elasticsearch ($XDG_CACHE_HOME), also as root
                       [env BOOKDUP_CACHE]
      unpacked home    ~/.local/share/bookdup/elasticsearch/elasticsearch-VERSION
                       (root: /var/lib/bookdup/elasticsearch/...) [env BOOKDUP_ES_HOME]
      node data        .../node-PORT [--data-dir, env BOOKDUP_ES_DATA]
      cluster data     .../cluster-PORT/node-0 … node-N-1 (with --nodes N)
    """


@es.command("up")
@click.option("--version", default=None, help="Elasticsearch version [env BOOKDUP_ES_VERSION]")
@_port_option
@click.option("--heap", default=None, help="JVM heap, e.g. 1g [env BOOKDUP_ES_HEAP]")
@_data_dir_option
@_nodes_option
def up(
    version: str | None,
    port: int | None,
    heap: str | None,
    data_dir: Path | None,
    nodes: int | None,
) -> None:
    """Download (once), start and wait for the node (or all N nodes: health yellow or green
    with N nodes joined); a running node is reused."""
    try:
        localnode.start(_config(version, port, heap, data_dir, nodes))
    except LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc


@es.command("down")
@_port_option
@_data_dir_option
@_nodes_option
def down(port: int | None, data_dir: Path | None, nodes: int | None) -> None:
    """Stop the node `es up` started on the port (of a cluster: every node); data is kept.

    Without a data dir, the node answering on the port says where its data (and pidfile) are.
    """
    cfg = _located(port, data_dir, nodes)
    try:
        stopped = localnode.stop(cfg)
    except LocalNodeError as exc:
        raise click.ClickException(str(exc)) from exc
    what = "" if cfg.nodes == 1 else f" ({cfg.nodes} nodes)"
    click.echo(
        f"stopped Elasticsearch at {cfg.url}{what}" if stopped else f"no node of ours at {cfg.url}"
    )


@es.command("status")
@_port_option
@_data_dir_option
@_nodes_option
def status(port: int | None, data_dir: Path | None, nodes: int | None) -> None:
    """Say whether the node runs, its version, health, nodes and data dir (of a cluster, each
    node's too); exit 1 when it does not run."""
    st = localnode.status(_located(port, data_dir, nodes))
    click.echo(st.describe())
    if not st.running:
        raise SystemExit(1)
