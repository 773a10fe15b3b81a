"""Issue 30's contract at the HTTP level, through `bookdup serve` in a subprocess (uvicorn):
what TestClient cannot send — chunked bodies, a raw Host, a malformed request line."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from server.limits import SECURITY_HEADERS

MAX_BODY = int(0.01 * 1024 * 1024)  # --max-body-mb 0.01


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def port(served, es_settings) -> Iterator[int]:
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "from bookdup_cli.main import cli; cli()",
        "--es-url",
        es_settings.url,
        "--index-prefix",
        served[0].prefix,
        "serve",
        "--port",
        str(port),
        "--max-body-mb",
        "0.01",
        "--allowed-host",
        "books.example.org",
        "--max-inflight",
        "4",
        "--request-timeout",
        "6",
        "--header-timeout",
        "1",
        "--body-timeout",
        "1",
        "--keep-alive",
        "1",
        "--max-header-kb",
        "4",
    ]
    server = subprocess.Popen(command, env=os.environ.copy(), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        assert server.poll() is None, server.stderr.read() if server.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "bookdup serve did not start"
            time.sleep(0.2)
    yield port
    server.terminate()
    server.wait(timeout=10)


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw`` and read the answer until the server closes: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        # the server may answer and close before the whole body is sent
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    return int(lines[0].split()[1]), headers, body


def _unchunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        out, body = out + body[:size], body[size + 2 :]
    return out


def request(
    method: str, path: str, host: str | None = "127.0.0.1", headers: str = "", body: bytes = b""
) -> bytes:
    host_line = f"Host: {host}\r\n" if host is not None else ""
    return (
        f"{method} {path} HTTP/1.1\r\n{host_line}Connection: close\r\n{headers}\r\n".encode() + body
    )


def chunked(data: bytes, size: int = 4096) -> bytes:
    parts = [data[i : i + size] for i in range(0, len(data), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def error_of(answer: tuple[int, dict[str, str], bytes], status: int) -> str:
    got, headers, body = answer
    assert got == status, (got, body[:300])
    assert headers["content-type"].startswith("application/json")
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name.lower()) == value, name
    payload = json.loads(body)
    assert set(payload) == {"error"}
    return payload["error"]


def test_a_chunked_body_over_the_limit_is_a_413(port) -> None:
    text_chunked = "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
    body = chunked(b"word " * (MAX_BODY // 5 + 2000))
    answer = exchange(port, request("POST", "/api/match", headers=text_chunked, body=body))
    assert f"over {MAX_BODY:,} bytes" in error_of(answer, 413)
    small = exchange(
        port, request("POST", "/api/match", headers=text_chunked, body=chunked(b"few words"))
    )
    assert "too short" in error_of(small, 400)  # under the limit: read, and answered by the app


def test_a_declared_length_over_the_limit_is_a_413_before_the_body(port) -> None:
    headers = f"Content-Type: text/plain\r\nContent-Length: {MAX_BODY + 1}\r\n"
    answer = exchange(port, request("POST", "/api/match", headers=headers))
    error_of(answer, 413)


def test_malformed_http_is_a_json_400_with_the_headers(port) -> None:
    for raw in (
        b"GARBAGE\r\n\r\n",
        b"GET /api/search?q=a HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
        b"GET /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\x00b\r\n\r\n",
    ):
        assert "malformed" in error_of(exchange(port, raw), 400)


def test_hosts(port) -> None:
    for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", "[::1]:1", "books.example.org:81"):
        status, _h, _b = exchange(port, request("GET", "/api/search?q=alice", host=host))
        assert status == 200, host
    for host in ("evil.example", "rebound.example:8000", "books.example.org.evil"):
        answer = exchange(port, request("GET", "/api/search?q=alice", host=host))
        assert "--allowed-host" in error_of(answer, 400)
    http10 = b"GET /api/search?q=alice HTTP/1.0\r\n\r\n"  # no Host at all
    assert "Host" in error_of(exchange(port, http10), 400)


def test_405_names_the_allowed_method(port) -> None:
    status, headers, _body = exchange(port, request("DELETE", "/api/books/x/related"))
    assert (status, headers["allow"]) == (405, "GET")
    error_of((status, headers, _body), 405)


def test_a_cross_origin_match_is_refused(port) -> None:
    text = b"word " * 200
    headers = "Content-Type: text/plain\r\nOrigin: http://evil.example\r\n"
    headers += f"Content-Length: {len(text)}\r\n"
    answer = exchange(port, request("POST", "/api/match", headers=headers, body=text))
    assert "another origin" in error_of(answer, 403)


def test_slow_and_idle_clients_are_cut_off(port) -> None:
    """The serve flags reach uvicorn and the guard (tests/server/test_slow_clients.py has the
    details): a silent connection is closed, a trickled body is a 408, big headers a 431."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        start = time.monotonic()
        assert s.recv(100) == b""
        assert time.monotonic() - start < 5
    trickle = "Content-Type: text/plain\r\nContent-Length: 1000\r\n"
    answer = exchange(port, request("POST", "/api/match", headers=trickle, body=b"word "))
    assert "did not arrive" in error_of(answer, 408)
    big = "X-Big: " + "a" * 5000 + "\r\n"
    answer = exchange(port, request("GET", "/api/search?q=alice", headers=big))
    assert "4,096 bytes" in error_of(answer, 431)
