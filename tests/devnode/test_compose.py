"""The Docker Compose files run the node tool's layout: its version, cluster and node names."""

from __future__ import annotations

import re
from pathlib import Path

from devnode.config import CLUSTER_NAME, DEFAULT_VERSION

REPO = Path(__file__).resolve().parents[2]


def test_compose_files_run_the_local_nodes_version_and_names() -> None:
    single = (REPO / "docker-compose.yml").read_text()
    cluster = (REPO / "docker-compose.cluster.yml").read_text()
    for text in (single, cluster):
        assert set(re.findall(r"elasticsearch:(\d+\.\d+\.\d+)", text)) == {DEFAULT_VERSION}
        assert f"cluster.name: {CLUSTER_NAME}" in text
    assert "discovery.type: single-node" in single
    names = [f"bookdup-{9200 + i}" for i in range(3)]
    assert f"cluster.initial_master_nodes: {','.join(names)}" in cluster
    assert re.findall(r"node\.name: (\S+)", cluster) == names
    assert "discovery.seed_hosts: es01,es02,es03" in cluster
