"""What is checked before any endpoint runs, and what every answer carries.

``Guard`` is the outermost ASGI layer of ``bookdup serve``:

- every answer, the app's and its own refusals alike, carries the security headers;
- the ``Host`` must be an allowed name (loopback names by default, any port): another is a
  400, so a DNS-rebound name cannot reach the loopback API;
- a request that is neither GET, HEAD nor OPTIONS with an ``Origin`` (or ``Sec-Fetch-Site``)
  of another origin is a 403: a web page cannot make a browser start a match with a "simple"
  cross-origin POST (curl and programs send no ``Origin``);
- the body is read here, up to the limit: a declared ``Content-Length`` over it, or a chunked
  body that grows past it, is a 413 before the app sees a byte; a malformed length is a 400;
- a request with more than ``MAX_HEADERS`` header lines, or whose line and headers pass
  ``max_header_bytes``, is a 431 (uvicorn refuses the ones still incomplete at that size:
  ``server.protocol``);
- the body must arrive within ``body_timeout`` seconds of the request's headers: a client
  trickling its body is answered 408 and its connection closed (uvicorn's own timeouts, set
  by ``bookdup serve``, bound the headers and idle connections: ``server.protocol``);
- a request the app would refuse anyway for lack of a place (``refuse_early``: a match,
  explain or plot while every heavy place and waiting slot is taken) is answered 429 with
  ``Retry-After`` before its body is read and before the app routes it: the overflow costs
  no body buffering, no budget, no validation;
- the bodies held at once, all requests together, stay under ``bodies`` bytes (``BodyBudget``):
  300 clients each sending 25 MB must not hold 7.5 GB; a body that would pass it is a 429 with
  ``Retry-After``, and its bytes are given back when its request ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; frame-ancestors 'none'"
    ),
}
_SECURITY = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
log = logging.getLogger("bookdup.server")
#: Host names accepted without ``--allowed-host`` (with any port).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: Methods that change nothing and start no heavy work: no Origin check.
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
#: Header lines a request may carry (uvicorn bounds their bytes: ``--max-header-kb``).
MAX_HEADERS = 100
#: Seconds a request's whole body may take to arrive (``bookdup serve --body-timeout``).
DEFAULT_BODY_TIMEOUT_S = 30.0
#: Bytes of a request's line and headers (``bookdup serve --max-header-kb``).
DEFAULT_MAX_HEADER_BYTES = 16 * 1024


def host_name(host: str) -> str:
    """The name of a ``Host`` header value without its port: ``[::1]:8000`` → ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        return host.split(":")[0]
    return host


def header_bytes(scope: Scope) -> int:
    """About the bytes of a request's line and headers as sent."""
    line = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
    return line + sum(len(k) + len(v) + 4 for k, v in scope.get("headers") or [])


def _default_port(scheme: str) -> str:
    return "443" if scheme in ("https", "wss") else "80"


def same_origin(origin: str, host: str, scheme: str) -> bool:
    """Whether an ``Origin`` header names this server (scheme, host and port) as ``Host`` does."""
    try:
        parts = urlsplit(origin.strip())
        origin_port = str(parts.port or _default_port(parts.scheme))
    except ValueError:
        return False
    if not parts.hostname or parts.scheme not in ("http", "https"):
        return False  # "null" (sandboxed frames, file: pages) and other schemes
    here = urlsplit(f"{scheme}://{host.strip()}")
    try:
        here_port = str(here.port or _default_port(scheme))
    except ValueError:
        return False
    return (parts.scheme, parts.hostname, origin_port) == (scheme, here.hostname, here_port)


async def respond(send: Send, status: int, error: str, headers: Iterable = ()) -> None:
    """A JSON ``{"error": ...}`` answer with the security headers."""
    body = json.dumps({"error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
                *_SECURITY,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


#: Where an answer's ``Retry-After`` (seconds, for a 429) is left in the request's scope: the
#: connection then reads nothing more from the client for that long (``server.protocol``).
RETRY_AFTER_KEY = "bookdup.retry_after"


def _with_security_headers(send: Send, started: list[bool], scope: Scope | None = None) -> Send:
    """``send`` adding the security headers; ``started[0]`` becomes True with the answer; a
    429's ``Retry-After`` is noted in ``scope`` (``RETRY_AFTER_KEY``)."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            started[0] = True
            if message.get("status") == 429 and scope is not None:
                for key, value in message.get("headers", []):
                    if key.lower() == b"retry-after" and value.isdigit():
                        scope[RETRY_AFTER_KEY] = float(value)
            present = {k.lower() for k, _v in message.get("headers", [])}
            extra = [(k, v) for k, v in _SECURITY if k not in present]
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return wrapped


class BodyBudget:
    """Bytes of request bodies held at once, by all requests together, up to ``total``."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.held = 0
        self._lock = threading.Lock()

    def take(self, size: int) -> bool:
        """Reserve ``size`` bytes; False (nothing reserved) when that would pass the total."""
        with self._lock:
            if self.held + size > self.total:
                return False
            self.held += size
            return True

    def give_back(self, size: int) -> None:
        with self._lock:
            self.held -= size


#: Seconds a client refused for lack of body memory is told to wait.
BODY_RETRY_AFTER_S = 1


class Guard:
    """ASGI middleware: security headers on every answer, Host allow-list, same-origin POSTs,
    the body limit (``limit`` bytes), the time a body may take to arrive (``body_timeout``
    seconds) and the budget of all bodies held at once (``bodies`` bytes; by default four
    bodies at the limit)."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        allowed_hosts: Iterable[str] = (),
        bodies: int | None = None,
        body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
        refuse_early: Callable[[Scope], str | None] | None = None,
    ) -> None:
        self.app = app
        self.refuse_early = refuse_early
        self.max_header_bytes = max_header_bytes
        self.limit = limit
        self.body_timeout = body_timeout
        self.allowed = {host_name(h) for h in (*LOOPBACK_HOSTS, *allowed_hosts)}
        self.budget = BodyBudget(4 * limit if bodies is None else bodies)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = [False]
        send = _with_security_headers(send, started, scope)
        try:
            await self._guarded(scope, receive, send)
        except Exception as exc:
            # the app answers its own errors (then re-raises them: logged here); one raised
            # before any answer is a bug in front of it: JSON with the headers, not
            # uvicorn's plain-text 500
            log.error("internal error: %s", type(exc).__name__, exc_info=exc)
            if not started[0]:
                await respond(send, 500, "internal error")

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refusal(scope)
        if refusal:
            await respond(send, *refusal)
            return
        busy = self.refuse_early(scope) if self.refuse_early else None
        if busy:
            await respond(send, 429, busy, [(b"retry-after", str(BODY_RETRY_AFTER_S).encode())])
            return
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            self.budget.give_back(len(body))

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        if len(scope.get("headers") or []) > MAX_HEADERS:
            return 431, f"more than {MAX_HEADERS} header lines"
        if header_bytes(scope) > self.max_header_bytes:
            return 431, f"request line and headers over {self.max_header_bytes:,} bytes"
        headers: dict[bytes, bytes] = {}
        for key, value in scope.get("headers") or []:
            if key in headers and key in (b"host", b"content-length", b"origin"):
                return 400, f"more than one {key.decode()} header"
            headers[key] = value
        host = headers.get(b"host", b"").decode("latin-1")
        if not host:
            return 400, "a request needs a Host header"
        if host_name(host) not in self.allowed:
            return 400, "this Host is not served here (bookdup serve --allowed-host NAME)"
        if scope.get("method", "GET") not in SAFE_METHODS:
            origin = headers.get(b"origin")
            site = headers.get(b"sec-fetch-site", b"").lower()
            scheme = scope.get("scheme", "http")
            if (origin is not None and not same_origin(origin.decode("latin-1"), host, scheme)) or (
                site in (b"cross-site", b"same-site")
            ):
                return 403, "requests from another origin are refused"
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or len(declared) > 18:
                return 400, "malformed Content-Length"
            if int(declared) > self.limit:
                return 413, f"request body over {self.limit:,} bytes"
        return None

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body, its bytes taken from the budget (None when refused or the client
        went away: then, as when cancelled, nothing stays taken)."""
        chunks: list[bytes] = []
        try:
            body = await self._read_chunks(receive, send, chunks)
        except BaseException:
            self.budget.give_back(sum(len(c) for c in chunks))
            raise
        if body is None:
            self.budget.give_back(sum(len(c) for c in chunks))
        return body

    async def _read_chunks(self, receive: Receive, send: Send, chunks: list[bytes]) -> bytes | None:
        """Reads into ``chunks`` only what the budget gave."""
        seen = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        while True:
            try:
                # a deadline on the loop, not wait_for's task per message: cheaper per request
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                await respond(
                    send,
                    408,
                    f"the request body did not arrive within {self.body_timeout:g} s",
                    [(b"connection", b"close")],
                )
                return None
            if message["type"] != "http.request":
                return None  # http.disconnect: nobody to answer
            chunk = message.get("body", b"")
            if seen + len(chunk) > self.limit:
                await respond(send, 413, f"request body over {self.limit:,} bytes")
                return None
            if not self.budget.take(len(chunk)):
                await respond(
                    send,
                    429,
                    f"the server holds too many request bodies: retry in {BODY_RETRY_AFTER_S} s",
                    [(b"retry-after", str(BODY_RETRY_AFTER_S).encode())],
                )
                return None
            seen += len(chunk)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives ``body`` once, then waits on the client (for a disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
