"""Request limits enforced before any endpoint runs: the size of a request body."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(Exception):
    """A request body went past the limit while it was being read (chunked uploads)."""


class _Counter:
    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self._limit = limit
        self.seen = 0

    async def __call__(self) -> Message:
        message = await self._receive()
        if message.get("type") == "http.request":
            self.seen += len(message.get("body", b""))
            if self.seen > self._limit:
                raise BodyTooLarge(self._limit)
        return message


async def _refuse(send: Send, status: int, error: str) -> None:
    body = json.dumps({"error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """ASGI middleware: 413 for a declared Content-Length over ``limit``; a body that grows
    past it while streaming raises ``BodyTooLarge`` (answered 413 by the app's handler)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await _refuse(send, 400, "malformed Content-Length")
                return
            if int(declared) > self.limit:
                await _refuse(send, 413, f"request body over {self.limit:,} bytes")
                return
        await self.app(scope, _Counter(receive, self.limit), send)
