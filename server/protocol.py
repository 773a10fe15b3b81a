"""uvicorn's HTTP/1.1 protocol with the server's error contract for requests uvicorn refuses
itself (a malformed request line or header, headers over its size limit): a JSON
``{"error": ...}`` 400 with the security headers instead of its plain-text one."""

from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from server.limits import SECURITY_HEADERS


class GuardedH11Protocol(H11Protocol):
    """``uvicorn.run(..., http=GuardedH11Protocol)``."""

    def send_400_response(self, msg: str) -> None:
        body = json.dumps({"error": "malformed HTTP request"}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *((k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()
