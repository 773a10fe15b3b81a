"""Which local node a command means, found the way `es up` left it.

`es up` writes the node's pid into ``<data dir>/es.pid``, and the port into
``<data dir>/config/elasticsearch.yml``. A node started with ``--data-dir`` keeps both there, not
in the default ``node-PORT`` folder, so when the default folder holds no live pid the node
answering on the port is asked where its data lives (nodes info). It is taken for ours only when
the pidfile there names the very process that answers: a node on another port, a container or a
foreign cluster is never stopped. A named data dir last started on another port than the one
asked for is refused, so `es down --port` never stops another port's node.

A member of a local cluster (`es up --nodes N`), found by its port or its folder, stands for
the whole cluster (``cluster_of``): `es status` / `es down` then mean every member.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from devnode.config import (
    CLUSTER_NAME,
    LocalNodeConfig,
    LocalNodeError,
    recorded_cluster,
    recorded_port,
)
from devnode.probe import get_json, read_pid

_NODE_FIELDS = (
    "version",
    "settings.cluster.name",
    "settings.path.data",
    "settings.path.home",
    "process.id",
    "jvm.mem.heap_max_in_bytes",
)
NODE_INFO_PATH = "/_nodes/_local/settings,process,jvm?filter_path=" + ",".join(
    f"nodes.*.{f}" for f in _NODE_FIELDS
)


def check_port(cfg: LocalNodeConfig) -> None:
    """Refuse a data dir whose node was started on another port than the one asked for: acting
    on its pidfile would stop (or corrupt) a node the user did not mean."""
    port = recorded_port(cfg.node_dir)
    if port is not None and port != cfg.port:
        raise LocalNodeError(
            f"the node in {cfg.node_dir} serves port {port}, not {cfg.port}: use --port {port}"
        )


def running_node(cfg: LocalNodeConfig) -> LocalNodeConfig | None:
    """The node `es up` started that answers on ``cfg``'s port, as it runs (data dir, home,
    version, heap), so it can be stopped or restarted; None when nothing, something else, or a
    node not started by `es up` on this machine answers."""
    body, is_es = get_json(cfg.url + NODE_INFO_PATH)
    nodes = list(((body or {}).get("nodes") or {}).values()) if is_es else []
    return _as_config(cfg, nodes[0]) if len(nodes) == 1 else None


def _as_config(cfg: LocalNodeConfig, node: dict[str, Any]) -> LocalNodeConfig | None:
    """``cfg`` describing ``node`` (a nodes-info entry) when its data dir's pidfile names it."""
    settings = node.get("settings") or {}
    paths = settings.get("path") or {}
    data = paths.get("data")
    data = data[0] if isinstance(data, list) and data else data
    if (settings.get("cluster") or {}).get("name") != CLUSTER_NAME or not isinstance(data, str):
        return None
    node_dir = Path(data).parent
    pid = (node.get("process") or {}).get("id")
    if pid is None or read_pid(node_dir / "es.pid") != pid:
        return None
    heap = ((node.get("jvm") or {}).get("mem") or {}).get("heap_max_in_bytes")
    home = paths.get("home")
    return replace(
        cfg,
        nodes=1,
        member_of=None,
        data_dir=node_dir,
        home_dir=Path(home) if isinstance(home, str) else cfg.home_dir,
        version=str(node.get("version") or cfg.version),
        heap=f"{int(heap) >> 20}m" if heap else cfg.heap,
    )


def cluster_of(cfg: LocalNodeConfig) -> LocalNodeConfig:
    """``cfg`` as its whole cluster when its folder is a cluster member's (or a cluster's
    folder, holding ``node-0``); else ``cfg`` itself."""
    if cfg.nodes > 1:
        return cfg
    node_dir = cfg.node_dir
    if (found := recorded_cluster(node_dir)) is not None:
        base = node_dir.parent
    elif (found := recorded_cluster(node_dir / "node-0")) is not None:
        base = node_dir
    else:
        return cfg
    first, nodes = found
    if not first <= cfg.port < first + nodes:
        raise LocalNodeError(
            f"the cluster in {base} serves ports {first}–{first + nodes - 1}, not {cfg.port}:"
            f" use --port {first}"
        )
    return replace(cfg, port=first, nodes=nodes, data_dir=base, member_of=None)


def find_node(cfg: LocalNodeConfig) -> LocalNodeConfig:
    """The node `es status` / `es down` mean: a named data dir (checked against the port: a
    contradiction is refused rather than guessed), else the default one when a live pid is
    there, else the node of ours answering on the port, else ``cfg`` (no node of ours). A
    cluster member found stands for its cluster (``cluster_of``)."""
    named = cfg.data_dir is not None
    if named or any(read_pid(m.pidfile) is not None for m in cfg.members()):
        check_port(cfg)
        return cluster_of(cfg)
    found = running_node(cfg)
    return cfg if found is None else cluster_of(found)
