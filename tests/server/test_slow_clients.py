"""Issue 30, slow and idle clients, without a node: uvicorn with the server's protocol
(``server.protocol``) and ``server.limits.Guard`` in front of a trivial app, spoken to over
raw sockets. A connection that sends nothing, headers that trickle in, a body that trickles
in, and an idle kept-alive connection are all cut off within their bounds; too many or too
large headers are refused with the error contract, and so is an error raised in front of
the app (a JSON 500, not uvicorn's plain text)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import socket
import time
from collections.abc import Iterator

import pytest
import uvicorn

from server.limits import MAX_HEADERS, SECURITY_HEADERS, Guard
from server.protocol import GuardedH11Protocol
from tests.server.conftest import serving

#: The event loops the protocol must work on (``bookdup serve --loop``): uvloop when installed.
LOOPS = [
    "asyncio",
    pytest.param(
        "uvloop",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed"
        ),
    ),
]

HEADER_TIMEOUT = 0.6
BODY_TIMEOUT = 0.6
KEEP_ALIVE = 0.6


async def echo(scope, receive, send) -> None:
    """A trivial app: answers the length of the body it was given."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    payload = json.dumps({"size": len(body)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


@pytest.fixture(scope="module", params=LOOPS)
def port(request: pytest.FixtureRequest) -> Iterator[int]:
    config = uvicorn.Config(
        Guard(echo, 10_000, body_timeout=BODY_TIMEOUT, max_header_bytes=2048),
        host="127.0.0.1",
        port=0,
        log_level="critical",
        http=GuardedH11Protocol.configured(HEADER_TIMEOUT, 2048),
        timeout_keep_alive=KEEP_ALIVE,  # type: ignore[arg-type]
        h11_max_incomplete_event_size=2048,
        lifespan="off",
        loop=request.param,
    )
    with serving(config) as port:
        yield port


def read_all(s: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and when it closed (monotonic)."""
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        data += chunk
    return data, time.monotonic()


def error_of(data: bytes, status: int) -> str:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert int(lines[0].split()[1]) == status, data[:300]
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:])}
    assert headers["content-type"] == "application/json"
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name.lower()) == value, name
    payload = json.loads(body)
    assert set(payload) == {"error"}
    return payload["error"]


def trickle(s: socket.socket, piece: bytes) -> None:
    """Send ``piece`` every 0.2 s for 4 s, or until the server closes."""
    with contextlib.suppress(OSError):
        for _ in range(20):
            time.sleep(0.2)
            s.sendall(piece)


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def test_a_connection_that_sends_nothing_is_closed(port) -> None:
    with connect(port) as s:
        start = time.monotonic()
        data, closed = read_all(s)
    assert data == b""
    assert HEADER_TIMEOUT * 0.8 <= closed - start < HEADER_TIMEOUT + 5


def test_trickled_headers_are_a_408(port) -> None:
    with connect(port) as s:
        start = time.monotonic()
        s.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        trickle(s, b"X-Slow: 1\r\n")  # one header line every 0.2 s: each resets no clock
        data, closed = read_all(s)
    assert "headers did not arrive" in error_of(data, 408)
    assert closed - start < HEADER_TIMEOUT + 5


def test_a_trickled_body_is_a_408(port) -> None:
    with connect(port) as s:
        start = time.monotonic()
        s.sendall(b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
        trickle(s, b"x")
        data, closed = read_all(s)
    assert "body did not arrive" in error_of(data, 408)
    assert BODY_TIMEOUT * 0.8 <= closed - start < BODY_TIMEOUT + 5


def test_a_body_in_time_is_served_and_the_idle_connection_then_closed(port) -> None:
    with connect(port) as s:
        s.sendall(b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nab")
        time.sleep(0.2)
        s.sendall(b"cde")
        answered = time.monotonic()
        data, closed = read_all(s)  # kept alive, then closed when idle
    assert data.startswith(b"HTTP/1.1 200") and data.endswith(b'{"size": 5}')
    assert KEEP_ALIVE * 0.8 <= closed - answered < KEEP_ALIVE + 5


def test_a_second_request_on_a_kept_alive_connection_is_timed_too(port) -> None:
    with connect(port) as s:
        s.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while not first.endswith(b'{"size": 0}'):
            first += s.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        start = time.monotonic()
        s.sendall(b"GET /x HTTP/1.1\r\n")  # keeps the keep-alive timer off; not the header one
        trickle(s, b"X-Slow: 1\r\n")
        data, closed = read_all(s)
    assert "headers did not arrive" in error_of(data, 408)
    assert closed - start < HEADER_TIMEOUT + 5


@pytest.mark.parametrize("complete", [True, False])
def test_headers_over_the_size_limit_are_a_431(port, complete: bool) -> None:
    """Complete in one read (Guard counts them) or still incomplete (h11's buffer limit)."""
    big = b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 4000 + b"\r\n"
    with connect(port) as s:
        s.sendall(big + (b"\r\n" if complete else b""))
        data, _closed = read_all(s)
    assert "over 2,048 bytes" in error_of(data, 431)


def test_malformed_http_is_still_a_json_400(port) -> None:
    with connect(port) as s:
        s.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n")
        data, _closed = read_all(s)
    assert "malformed" in error_of(data, 400)


def test_too_many_header_lines_are_a_431(port) -> None:
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS))  # with Host: one too many
    with connect(port) as s:
        s.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + many + b"\r\n")
        data, _closed = read_all(s)
    assert "header lines" in error_of(data, 431)


def test_the_body_timeout_counts_from_the_headers_not_per_chunk() -> None:
    """Guard alone: a body whose every chunk comes in time, but not the whole, is a 408."""
    sent: list[dict] = []

    async def receive() -> dict:
        await asyncio.sleep(0.05)
        return {"type": "http.request", "body": b"x", "more_body": True}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "headers": [(b"host", b"127.0.0.1")]}
    asyncio.run(Guard(echo, 10_000, body_timeout=0.3)(scope, receive, send))
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]


def sent_to(sent: list[dict]):
    async def send(message: dict) -> None:
        sent.append(message)

    return send


def test_an_error_in_front_of_the_app_is_a_json_500() -> None:
    """Not uvicorn's plain-text 500 without the headers; an app that answered is left alone."""

    async def broken(scope, receive, send) -> None:
        raise RuntimeError("/tmp/secret-path")

    async def answers_then_fails(scope, receive, send) -> None:
        await echo(scope, receive, send)
        raise RuntimeError("after the answer")

    scope = {"type": "http", "method": "GET", "headers": [(b"host", b"127.0.0.1")]}

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    for app, status in ((broken, 500), (answers_then_fails, 200)):
        sent: list[dict] = []
        asyncio.run(Guard(app, 10_000)(scope, receive, sent_to(sent)))
        starts = [m for m in sent if m["type"] == "http.response.start"]
        assert [m["status"] for m in starts] == [status]
        headers = dict(starts[0]["headers"])
        assert headers[b"x-content-type-options"] == b"nosniff"
    assert json.loads(sent[1]["body"]) == {"size": 0}


def test_an_internal_error_names_nothing() -> None:
    async def broken(scope, receive, send) -> None:
        raise RuntimeError("/tmp/secret-path")

    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "headers": [(b"host", b"127.0.0.1")]}
    asyncio.run(Guard(broken, 10_000)(scope, receive, send))
    assert json.loads(sent[1]["body"]) == {"error": "internal error"}


async def busy_or_echo(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    """``echo``, except that /busy is a 429 with ``Retry-After: 1`` (as the admission's)."""
    if scope["path"] != "/busy":
        await echo(scope, receive, send)
        return
    payload = b'{"error": "the server is busy (heavy): retry in 1 s"}'
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(payload)),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def status_of_answer(s: socket.socket) -> int:
    """The status of the next whole answer on ``s`` (its body read to the end)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += s.recv(4096)
    return int(head.split()[1])


@pytest.mark.parametrize("loop", LOOPS)
def test_a_client_refused_with_retry_after_is_held_to_it(loop: str) -> None:
    """A 429 is answered at once; the next request on that connection is read only after
    Retry-After (issue 30: clients that retry at once must not crowd out the others), while
    another connection is served at once meanwhile."""
    config = uvicorn.Config(
        Guard(busy_or_echo, 10_000),
        host="127.0.0.1",
        port=0,
        log_level="critical",
        http=GuardedH11Protocol.configured(10.0),
        lifespan="off",
        loop=loop,
    )
    request = b"GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with serving(config) as port, connect(port) as hammer, connect(port) as other:
        started = time.monotonic()
        hammer.sendall(request % b"busy")
        assert status_of_answer(hammer) == 429
        assert time.monotonic() - started < 0.5  # the refusal itself is not delayed
        hammer.sendall(request % b"busy")  # again, at once
        other.sendall(request % b"x")
        assert status_of_answer(other) == 200
        assert time.monotonic() - started < 0.5  # others are served meanwhile
        assert status_of_answer(hammer) == 429
        assert time.monotonic() - started >= 0.9  # read after Retry-After
