"""uvicorn's HTTP/1.1 protocol with the server's error contract and a header timeout.

- Requests uvicorn refuses itself (a malformed request line or header, headers over
  ``--max-header-kb``) get a JSON ``{"error": ...}`` 400 with the security headers instead of
  its plain-text one.
- uvicorn bounds the idle time between requests (``timeout_keep_alive``) but not the time a
  client takes to send a request's headers: a client that connects and sends nothing, or
  trickles its headers a byte at a time, would hold its connection forever. Here a request's
  headers must be complete within ``header_timeout`` seconds of the connection opening or of
  the previous answer; past that the connection is closed, with a JSON 408 when part of a
  request had arrived.
- A client answered 429 with ``Retry-After`` is held to it: nothing more is read from its
  connection for that long (its next request waits in the socket, costing the server nothing).
  Under attack (issue 30) 130 clients that retry at once made most of the event loop's work,
  and every cheap read waited behind a round of their refusals; the refusal itself is still
  answered at once.
- Headers still incomplete past ``max_header_bytes`` are a JSON 431 (complete ones that are
  too large are refused by ``server.limits.Guard``, also 431).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.limits import DEFAULT_MAX_HEADER_BYTES, RETRY_AFTER_KEY, SECURITY_HEADERS

#: Seconds a client may take to send a request's headers (``bookdup serve --header-timeout``).
DEFAULT_HEADER_TIMEOUT_S = 10.0


class GuardedH11Protocol(H11Protocol):
    """``uvicorn.run(..., http=GuardedH11Protocol.configured(...),
    h11_max_incomplete_event_size=max_header_bytes)``."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    _header_timer: asyncio.TimerHandle | None = None

    @classmethod
    def configured(
        cls, header_timeout: float, max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    ) -> type[GuardedH11Protocol]:
        """This protocol with other limits (uvicorn takes a class, not options)."""
        limits = {"header_timeout": header_timeout, "max_header_bytes": max_header_bytes}
        return type(cls.__name__, (cls,), limits)

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        # armed first: a pipelined request handled inside the call is then not timed
        self._arm_header_timer()
        cycle = self.cycle
        wait = cycle.scope.get(RETRY_AFTER_KEY) if cycle is not None else None
        super().on_response_complete()
        if isinstance(wait, float) and wait > 0 and not self.transport.is_closing():
            self.transport.pause_reading()
            self.loop.call_later(min(wait, self.header_timeout / 2), self._resume)

    def _resume(self) -> None:
        if not self.transport.is_closing():
            self.transport.resume_reading()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._header_timeout)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return  # closed already, or a request's headers arrived (its body: Guard's timeout)
        if self.cycle is not None and not self.cycle.response_complete:
            return  # still answering the previous request
        if self.conn.trailing_data[0]:  # part of a request: say why it is cut off
            self._send_error(408, b"Request Timeout", "the request headers did not arrive in time")
        else:
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        if len(self.conn.trailing_data[0]) > self.max_header_bytes:  # h11's "buffer too long"
            message = f"request line and headers over {self.max_header_bytes:,} bytes"
            self._send_error(431, b"Request Header Fields Too Large", message)
        else:
            self._send_error(400, b"Bad Request", "malformed HTTP request")

    def _send_error(self, status: int, reason: bytes, message: str) -> None:
        """Write a JSON error and close (as raw bytes: h11 answers only a request it parsed)."""
        body = json.dumps({"error": message}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *((k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
        ]
        head = b"HTTP/1.1 %d %s\r\n" % (status, reason)
        head += b"".join(b"%s: %s\r\n" % header for header in headers)
        self.transport.write(head + b"\r\n" + body)
        self.transport.close()
