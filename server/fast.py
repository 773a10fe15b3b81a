"""A thin path for the cheap reads: ``GET /api/search`` and ``GET /api/books/{id}/related``
served in front of FastAPI, with the answers its routes give.

Under attack (issue 30) the event loop was half the server's GIL-held time, and FastAPI's stack
for each read (middleware, routing, dependency solving and validation) ~18 % of it. ``FastReads``
answers a well-formed search or related request itself: it runs the same read functions
(admission, deadline, public fields) and serializes with the same pydantic adapter as FastAPI's
``dict[str, Any]`` return type, and answers an exception as the app's handlers do. Anything it
does not recognise as well-formed (a missing or out-of-range parameter, a repeated one, another
method or path) goes to FastAPI unchanged, so its validation and its 400 messages stay the only
ones.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter
from starlette.datastructures import QueryParams
from starlette.responses import Response

from server.limits import ASGIApp, Receive, Scope, Send

#: What FastAPI does with a route's ``dict[str, Any]`` answer: validate it, then dump it as JSON.
_ANSWER = TypeAdapter(dict[str, Any])
_RELATED = re.compile(r"/api/books/([^/]+)/related")
#: A page or per_page FastAPI would read as the same int: digits, no sign, no leading zero.
_COUNT = re.compile(r"[1-9][0-9]{0,3}")
COLLAPSES = frozenset({"edition", "work", "none"})
SEARCH_PARAMS = ("q", "collapse", "page", "per_page", "language")


@dataclass(frozen=True)
class Reads:
    """The read functions the FastAPI routes call, and how the app answers an exception."""

    search: Callable[..., Awaitable[dict[str, Any]]]
    related: Callable[[str], Awaitable[dict[str, Any]]]
    error: Callable[[Exception], Response]


def _count(value: str | None, default: int, top: int) -> int | None:
    if value is None:
        return default
    return int(value) if _COUNT.fullmatch(value) and int(value) <= top else None


def search_args(query_string: bytes) -> dict[str, Any] | None:
    """The search's arguments when FastAPI would accept them as they are; None otherwise."""
    params = QueryParams(query_string)
    for name in SEARCH_PARAMS:
        if len(params.getlist(name)) > 1:
            return None
    q, collapse = params.get("q"), params.get("collapse", "edition")
    language = params.get("language")
    page, per_page = _count(params.get("page"), 1, 1000), _count(params.get("per_page"), 10, 100)
    if q is None or len(q) > 500 or collapse not in COLLAPSES or page is None or per_page is None:
        return None
    if language is not None and len(language) > 8:
        return None
    return {"q": q, "collapse": collapse, "page": page, "per_page": per_page, "language": language}


def related_id(path: str) -> str | None:
    """The book id of a related request whose id FastAPI would accept (1–512 characters)."""
    found = _RELATED.fullmatch(path)
    return found.group(1) if found and len(found.group(1)) <= 512 else None


class FastReads:
    """ASGI: well-formed GET search and related requests answered here, the rest by ``app``."""

    def __init__(self, app: ASGIApp, reads: Reads) -> None:
        self.app = app
        self.reads = reads

    def _call(self, scope: Scope) -> Callable[[], Awaitable[dict[str, Any]]] | None:
        if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("root_path"):
            return None
        path = scope.get("path", "")
        if path == "/api/search":
            args = search_args(scope.get("query_string", b""))
            return None if args is None else lambda: self.reads.search(**args)
        book_id = related_id(path) if path.startswith("/api/books/") else None
        return None if book_id is None else lambda: self.reads.related(book_id)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        call = self._call(scope)
        if call is None:
            await self.app(scope, receive, send)
            return
        try:
            answer = _ANSWER.validate_python(await call())
            response = Response(_ANSWER.dump_json(answer), media_type="application/json")
        except Exception as exc:
            response = self.reads.error(exc)
        await response(scope, receive, send)
