"""A TLS-terminating, authenticating nginx in front of the test node, for tests only.

The integ-test distribution of Elasticsearch has no security module: it speaks plain HTTP and
asks for no credentials. To exercise bookdup's TLS (a private CA file) and authentication (API
key, basic auth) end to end, Debian's nginx (``scripts/install_nginx.sh``) runs as an
unprivileged process on loopback ports, with its own configuration, pid file, logs and temp
folders under a test folder, and a CA and server certificate made by ``trustme``:

* ``api_key_port``: requires ``Authorization: ApiKey <key>`` (the exact key);
* ``basic_port``: requires HTTP basic auth (``auth_basic`` and an htpasswd file, ``{SHA}`` hash);
* ``unbranded_port``: the ApiKey server, but the upstream's ``X-Elastic-Product`` header is
  hidden: the client's product check must refuse it (proof that the check runs through a proxy).

Anything unauthenticated is answered 401 with a JSON body shaped like Elasticsearch's (and its
``WWW-Authenticate`` and ``X-Elastic-Product`` headers); authenticated requests are passed to the
node with the ``Authorization`` header removed, and every upstream header (``X-Elastic-Product``
in particular) passed back. The access log format names no header at all, so it cannot hold a
credential.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

NGINX = "/usr/sbin/nginx"
UNAUTHORIZED_BODY = (
    '{"error":{"root_cause":[{"type":"security_exception","reason":'
    '"unable to authenticate user for REST request"}],"type":"security_exception",'
    '"reason":"unable to authenticate user for REST request"},"status":401}'
)


@dataclass(frozen=True)
class Credentials:
    """What the proxy accepts; made fresh per test session, never written to a repository."""

    api_key: str
    username: str
    password: str

    @property
    def basic_token(self) -> str:
        """The base64 of ``user:password`` that travels in a basic ``Authorization`` header."""
        return base64.b64encode(f"{self.username}:{self.password}".encode()).decode()

    def secrets(self) -> dict[str, str]:
        """Every string that must never be shown: the key (and the secret half inside it), the
        password, and the basic-auth token."""
        key_secret = base64.b64decode(self.api_key).decode().partition(":")[2]
        return {
            "api key": self.api_key,
            "api key secret": key_secret,
            "password": self.password,
            "basic token": self.basic_token,
        }


def new_credentials() -> Credentials:
    """A key shaped like Elasticsearch's (base64 of ``id:secret``) and a random password."""
    key_id, key_secret = os.urandom(10).hex(), os.urandom(16).hex()
    api_key = base64.b64encode(f"{key_id}:{key_secret}".encode()).decode()
    return Credentials(api_key=api_key, username="bookdup-tester", password=os.urandom(12).hex())


@dataclass
class TlsProxy:
    """A running nginx; ``ca_file`` verifies its certificate (issued for 127.0.0.1)."""

    folder: Path
    ca_file: Path
    api_key_port: int
    basic_port: int
    unbranded_port: int
    process: subprocess.Popen[bytes]

    def url(self, port: int) -> str:
        return f"https://127.0.0.1:{port}"

    @property
    def access_log(self) -> Path:
        return self.folder / "access.log"

    @property
    def error_log(self) -> Path:
        return self.folder / "error.log"

    def logs(self) -> str:
        return "".join(
            p.read_text(encoding="utf-8", errors="replace")
            for p in (self.access_log, self.error_log)
            if p.exists()
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # SIGTERM: nginx's fast shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def free_port(start: int = 9610, stop: int = 9700) -> int:
    """A loopback port above 9600 that nothing listens on (checked by binding it)."""
    for port in range(start, stop):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {start}..{stop - 1}")


def _htpasswd_line(user: str, password: str) -> str:
    digest = base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()
    return f"{user}:{{SHA}}{digest}\n"


def _config(folder: Path, upstream: str, creds: Credentials, ports: tuple[int, int, int]) -> str:
    api_port, basic_port, unbranded_port = ports
    tls = f"""
        ssl_certificate {folder}/server.pem;
        ssl_certificate_key {folder}/server.key;
        client_max_body_size 0;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Authorization "";
        proxy_read_timeout 300s;
        error_page 401 = @unauthorized;
        location @unauthorized {{
            default_type application/json;
            add_header WWW-Authenticate 'ApiKey, Basic realm="security" charset="UTF-8"' always;
            add_header X-Elastic-Product Elasticsearch always;
            return 401 '{UNAUTHORIZED_BODY}';
        }}"""
    key_check = """
            if ($api_key_ok = 0) { return 401; }"""
    temp = "".join(
        f"    {kind}_temp_path {folder}/tmp-{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # as root, nginx's workers would drop to "nobody", who cannot enter a 0700 pytest folder
    # where the temp files of large bodies go: keep the workers as the current user
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return f"""daemon off;
{user}master_process on;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log notice;
events {{ worker_connections 256; }}
http {{
{temp}    # no header, no user name: nothing in the access log can be a credential
    log_format noauth '$remote_addr [$time_local] "$request_method $uri" $status $body_bytes_sent';
    access_log {folder}/access.log noauth;
    map_hash_bucket_size 256;  # the key is longer than the default bucket
    map $http_authorization $api_key_ok {{
        default 0;
        "ApiKey {creds.api_key}" 1;
    }}
    server {{
        listen 127.0.0.1:{api_port} ssl;{tls}
        location / {{{key_check}
            proxy_pass {upstream};
        }}
    }}
    server {{
        listen 127.0.0.1:{basic_port} ssl;{tls}
        location / {{
            auth_basic "security";
            auth_basic_user_file {folder}/htpasswd;
            proxy_pass {upstream};
        }}
    }}
    server {{
        listen 127.0.0.1:{unbranded_port} ssl;{tls}
        location / {{{key_check}
            proxy_hide_header X-Elastic-Product;
            proxy_pass {upstream};
        }}
    }}
}}
"""


def _wait_listening(proxy: TlsProxy, ports: tuple[int, ...], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    pending = set(ports)
    while pending:
        if proxy.process.poll() is not None:
            raise RuntimeError(f"nginx exited at start: {proxy.logs()[-2000:]}")
        for port in list(pending):
            with socket.socket() as s:
                s.settimeout(0.5)
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    pending.discard(port)
        if time.monotonic() > deadline:
            proxy.stop()
            raise RuntimeError(f"nginx did not listen on {sorted(pending)} in {seconds} s")
        time.sleep(0.1)


def start_proxy(folder: Path, upstream_url: str, creds: Credentials) -> TlsProxy:
    """Write the CA, certificate, htpasswd and configuration under ``folder`` and start nginx
    (``daemon off``: the child is nginx's master, stopped by ``TlsProxy.stop``)."""
    import trustme

    if not Path(NGINX).exists():
        raise RuntimeError(f"{NGINX} not found: run `bash scripts/install_nginx.sh`")
    parts = urlsplit(upstream_url)
    if parts.scheme != "http":
        raise RuntimeError(f"the proxy expects a plain-http test node, not {parts.scheme}://")
    upstream = f"http://{parts.hostname}:{parts.port or 80}"
    folder.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_pem.write_to_path(str(folder / "server.key"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "server.pem"))
    for extra in cert.cert_chain_pems[1:]:
        extra.write_to_path(str(folder / "server.pem"), append=True)
    (folder / "htpasswd").write_text(_htpasswd_line(creds.username, creds.password))
    first = free_port()
    second = free_port(first + 1)
    ports = (first, second, free_port(second + 1))
    conf = folder / "nginx.conf"
    conf.write_text(_config(folder, upstream, creds, ports))
    with (folder / "nginx.stderr").open("wb") as stderr:
        process = subprocess.Popen(
            [NGINX, "-c", str(conf), "-p", f"{folder}/", "-e", str(folder / "error.log")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    proxy = TlsProxy(folder, folder / "ca.pem", *ports, process=process)
    _wait_listening(proxy, ports)
    return proxy
