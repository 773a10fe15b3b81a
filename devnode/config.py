"""Where and how the local node runs: versions, ports, folders, and how each is chosen.

The port is chosen, first match wins: ``--port`` > ``BOOKDUP_ES_PORT`` > the port of
``ELASTICSEARCH_URL`` (or ``--es-url``) when that URL is plain http on this machine > the port a
node's data dir was last started on (``config/elasticsearch.yml``) > 9200. So ``es up``, ``es
status`` and ``es down`` mean the node the data commands talk to, without repeating the port.

Folders: the downloaded zip is cached in ``cache_dir`` (``BOOKDUP_CACHE``, else
``$XDG_CACHE_HOME/bookdup/elasticsearch``, also for root); it is unpacked once into ``home``
(``BOOKDUP_ES_HOME``), and each node keeps ``config/``, ``data/``, ``logs/`` and ``es.pid`` in its
``node_dir`` (``BOOKDUP_ES_DATA``). Homes and node dirs default to
``$XDG_DATA_HOME/bookdup/elasticsearch`` (``~/.local/share/...``) — but as root to
``/var/lib/bookdup/elasticsearch``: Elasticsearch refuses to run as root, so the node runs as an
unprivileged user, which cannot enter ``/root``.

Several nodes (``nodes`` > 1) make one cluster on this machine: member i serves HTTP on
``port + i`` and transport on ``port + 100 + i``, and keeps its folders in
``<node_dir>/node-i`` (``node_dir`` defaults to ``cluster-PORT`` then). Each member's
``elasticsearch.yml`` records the cluster (``CLUSTER_MARK``), so any member found on a port or
in a folder names the whole cluster.
"""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

DEFAULT_VERSION = "9.5.4"
"""Newest 9.x integ-test-zip that resolves on Maven Central (checked 9.0 … 9.8)."""
FALLBACK_VERSION = "8.19.21"
"""Newest 8.x, used when a 9.x distribution cannot be fetched (the 8.x client talks to both)."""
DEFAULT_PORT = 9200
CLUSTER_NAME = "bookdup-local"
TRANSPORT_OFFSET = 100
"""A node's transport port is its HTTP port + 100 (a single node takes the first free one of
the 100 above; a cluster member exactly that one, which the others' seed list names)."""
CLUSTER_MARK = "# bookdup cluster:"
"""The line of a member's elasticsearch.yml naming its cluster: first HTTP port and size."""
ROOT_STATE_DIR = Path("/var/lib/bookdup/elasticsearch")
"""Homes and node dirs when run as root: readable by the unprivileged node user, unlike /root."""


class LocalNodeError(RuntimeError):
    """A local-node operation failed; the message is one line meant for the user."""


def is_root() -> bool:
    """Root runs the node as another user, so its folders must be outside /root."""
    return os.geteuid() == 0


def _default_cache_dir() -> Path:
    """Only the invoking user reads the cached zip, so root keeps it in its own cache too (the
    download location CI reuses)."""
    if env := os.environ.get("BOOKDUP_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bookdup" / "elasticsearch"


def state_dir() -> Path:
    """Where unpacked homes and node data live: root's home is not readable by the node user."""
    if is_root():
        return ROOT_STATE_DIR
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "bookdup" / "elasticsearch"


def loopback_port(url: str | None) -> int | None:
    """The port of a plain-http URL on this machine (where `es up` could serve it), else None:
    a remote or https URL names a cluster the local node cannot be."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != "http" or port is None:
        return None
    return port if is_loopback(parts.hostname or "") else None


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (a name or address on loopback)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def recorded_port(node_dir: Path) -> int | None:
    """The HTTP port a node dir was last started on, from the elasticsearch.yml `es up` wrote
    there: the data dir alone then names its node. For a cluster's folder, its first member's."""
    yml = node_dir / "config" / "elasticsearch.yml"
    if not yml.exists() and (node_dir / "node-0" / "config").is_dir():
        yml = node_dir / "node-0" / "config" / "elasticsearch.yml"  # a cluster's folder
    try:
        text = yml.read_text()
    except OSError:
        return None
    m = re.search(r"^http\.port:\s*(\d+)\s*$", text, re.M)
    return int(m.group(1)) if m else None


def recorded_cluster(node_dir: Path) -> tuple[int, int] | None:
    """(first HTTP port, nodes) of the cluster a member's folder was last started in, from its
    elasticsearch.yml; None for a single node's folder (or none)."""
    try:
        text = (node_dir / "config" / "elasticsearch.yml").read_text()
    except OSError:
        return None
    m = re.search(rf"^{re.escape(CLUSTER_MARK)} first_port=(\d+) nodes=(\d+)\s*$", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _env_values(env: Mapping[str, str]) -> dict[str, object]:
    """The BOOKDUP_ES_* variables that are set, as config fields."""
    values: dict[str, object] = {}
    for name, key, kind in (
        ("BOOKDUP_ES_VERSION", "version", str),
        ("BOOKDUP_ES_PORT", "port", int),
        ("BOOKDUP_ES_HEAP", "heap", str),
        ("BOOKDUP_ES_DATA", "data_dir", Path),
        ("BOOKDUP_ES_HOME", "home_dir", Path),
        ("BOOKDUP_ES_NODES", "nodes", int),
    ):
        if v := env.get(name):
            values[key] = kind(v)
    return values


def _fallback_port(data_dir: object, es_url: str | None) -> int:
    """The port when neither --port nor BOOKDUP_ES_PORT gives one."""
    if (port := loopback_port(es_url)) is not None:
        return port
    if isinstance(data_dir, Path) and (port := recorded_port(data_dir)) is not None:
        return port
    return DEFAULT_PORT


@dataclass(frozen=True)
class LocalNodeConfig:
    """Where and how the local node runs; ``None`` paths are derived from version and port."""

    version: str = DEFAULT_VERSION
    port: int = DEFAULT_PORT
    heap: str = "1g"
    data_dir: Path | None = None
    cache_dir: Path = field(default_factory=_default_cache_dir)
    home_dir: Path | None = None
    host: str = "127.0.0.1"
    settings: Mapping[str, object] = field(default_factory=dict)
    """Extra ``elasticsearch.yml`` settings, e.g. a small write queue or indexing-pressure
    limit to test back-pressure; they override bookdup's own."""
    nodes: int = 1
    """Nodes of the local cluster: 1 is today's single node; N > 1 are ``members()``."""
    member_of: tuple[int, int] | None = None
    """On a member of a cluster (``members()``): the cluster's first HTTP port and size."""

    def __post_init__(self) -> None:
        if self.nodes < 1:
            raise LocalNodeError(f"a cluster needs at least one node, not {self.nodes}")

    def members(self) -> list[LocalNodeConfig]:
        """One config per node: ``self`` for one node; else member i on ``port + i`` in
        ``node_dir/node-i``."""
        if self.nodes == 1:
            return [self]
        return [
            replace(
                self,
                port=self.port + i,
                data_dir=self.node_dir / f"node-{i}",
                nodes=1,
                member_of=(self.port, self.nodes),
            )
            for i in range(self.nodes)
        ]

    @classmethod
    def from_env(cls, es_url: str | None = None, **overrides: object) -> LocalNodeConfig:
        """Defaults, then BOOKDUP_ES_* / BOOKDUP_CACHE variables, then non-None ``overrides``;
        the port as the module docstring says (``es_url`` defaults to ELASTICSEARCH_URL)."""
        values = _env_values(os.environ)
        values.update({k: v for k, v in overrides.items() if v is not None})
        if "port" not in values:
            url = es_url or os.environ.get("ELASTICSEARCH_URL")
            values["port"] = _fallback_port(values.get("data_dir"), url)
        return cls(**values)  # type: ignore[arg-type]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def home(self) -> Path:
        return self.home_dir or state_dir() / f"elasticsearch-{self.version}"

    @property
    def node_dir(self) -> Path:
        """The node's folder; for a cluster (``nodes`` > 1) the folder of its members'."""
        if self.data_dir is not None:
            return self.data_dir
        return state_dir() / (f"node-{self.port}" if self.nodes == 1 else f"cluster-{self.port}")

    @property
    def pidfile(self) -> Path:
        return self.node_dir / "es.pid"

    @property
    def log_file(self) -> Path:
        return self.node_dir / "logs" / f"{CLUSTER_NAME}.log"

    @property
    def startup_log(self) -> Path:
        return self.node_dir / "logs" / "startup.out"
