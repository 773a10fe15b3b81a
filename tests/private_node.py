"""A node of the test's own: for tests that must kill, restart or constrain Elasticsearch.

Such a test cannot use the suite's shared node (``ELASTICSEARCH_URL``): the other tests need
it alive and with default limits. Each private node gets a free port (suites run in parallel
must not share or stop one) and a fresh data folder, and reuses the suite node's unpacked
distribution when there is one, which spares a download.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from devnode.config import TRANSPORT_OFFSET, LocalNodeConfig
from devnode.localnode import start, stop
from devnode.locate import running_node


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_cluster_port(nodes: int) -> int:
    """A first HTTP port for a local cluster of ``nodes``: its members' HTTP ports (port …
    port + nodes - 1) and transport ports (the same + 100) are all free."""
    for _ in range(100):
        first = free_port()
        ports = [first + i + off for off in (0, TRANSPORT_OFFSET) for i in range(nodes)]
        if ports[-1] < 65536 and all(_bindable(p) for p in ports[1:]):
            return first
    raise RuntimeError(f"no {nodes} free ports in a row (with their transport ports)")


def suite_distribution() -> dict[str, object]:
    """The unpacked distribution of the suite's node (ELASTICSEARCH_URL) when it is ours: the
    developer's BOOKDUP_ES_HOME / BOOKDUP_CACHE are hidden from tests, and reusing the home
    spares a download."""
    suite = running_node(LocalNodeConfig.from_env())
    return {} if suite is None else {"version": suite.version, "home_dir": suite.home_dir}


@contextmanager
def private_config(**fields: object) -> Iterator[LocalNodeConfig]:
    """A config for a private node (not started), its folder removed afterwards and the node
    stopped if the test left it running. ``nodes=N`` makes it a cluster of N nodes."""
    # Not pytest's tmp_path: /tmp/pytest-of-root is 0700, unreachable for the node user.
    data = Path(tempfile.mkdtemp(prefix="bookdup-es-test-", dir="/tmp"))
    nodes = int(fields.get("nodes", 1))  # type: ignore[call-overload]
    port = free_port() if nodes == 1 else free_cluster_port(nodes)
    cfg = LocalNodeConfig(port=port, data_dir=data, **{**suite_distribution(), **fields})  # type: ignore[arg-type]
    try:
        yield cfg
    finally:
        stop(cfg)
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def private_node(
    settings: Mapping[str, object] | None = None, **fields: object
) -> Iterator[LocalNodeConfig]:
    """A started private node with extra ``elasticsearch.yml`` settings."""
    with private_config(settings=dict(settings or {}), **fields) as cfg:
        start(cfg)
        yield cfg
