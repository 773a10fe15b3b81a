"""`bookdup serve`: the read side as a read-only HTTP JSON API, and one review page at ``/``.

Paths clients can rely on (the OpenAPI document is at ``/openapi.json``):

- ``GET /api/search?q=&collapse=edition|work|none&page=&per_page=&language=``
- ``GET /api/books/{id}/related`` (404 for an unknown id)
- ``GET /api/explain?a=&b=`` and ``GET /api/explain/plot?a=&b=&format=png|svg``
- ``POST /api/match``: a text (``text/plain``, or JSON ``{"text": ...}``) or a file
  (``multipart/form-data``, field ``file``, any format the readers know)

Safety: the indices are fixed when the app is made (no request names an index); bodies over
``max_body`` bytes are refused (413); every error is a JSON ``{"error": ...}`` with a 4xx or
5xx status and never a stack trace, an Elasticsearch URL or a credential; the interactive
``/docs`` page is off (it loads scripts from a CDN).
"""

from __future__ import annotations

import codecs
import json
import logging
import re
import tempfile
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from elasticsearch import ApiError, TransportError
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from query.context import BadRequest, NotFound, ReadSide
from query.explain import explain
from query.match import book_from_text, match, read_one_book
from query.plots import FORMATS, render_explain
from query.related import related
from query.search import search
from server.limits import BodyLimit, BodyTooLarge

log = logging.getLogger("bookdup.server")

DEFAULT_MAX_BODY = 25 * 1024 * 1024
MAX_ID_CHARS = 512
#: Suffixes an uploaded file may keep (the readers pick the format from it).
UPLOAD_SUFFIXES = {".txt", ".jsonl", ".ndjson", ".xml", ".html", ".htm", ".hocr"}
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; frame-ancestors 'none'"
    ),
}

BookId = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(BadRequest)
    async def bad_request(_r: Request, exc: BadRequest) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(NotFound)
    async def not_found(_r: Request, exc: NotFound) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(UnsupportedCharset)
    async def bad_charset(_r: Request, exc: UnsupportedCharset) -> JSONResponse:
        return _error(415, str(exc))

    @app.exception_handler(BodyTooLarge)
    async def too_large(_r: Request, exc: BodyTooLarge) -> JSONResponse:
        return _error(413, f"request body over {exc.args[0]:,} bytes")

    @app.exception_handler(RequestValidationError)
    async def invalid(_r: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
            for e in exc.errors()
        ]
        return _error(400, "; ".join(problems) or "malformed request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_r: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(ApiError)
    @app.exception_handler(TransportError)
    async def backend(_r: Request, exc: Exception) -> JSONResponse:
        log.warning("Elasticsearch failed: %s", type(exc).__name__)
        return _error(503, "the search backend is unavailable or its indices are missing")

    @app.exception_handler(Exception)
    async def internal(_r: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s", type(exc).__name__, exc_info=exc)
        return _error(500, "internal error")


def _safe_name(filename: str | None) -> tuple[str, str]:
    """(book id, suffix) from an uploaded file name: no path, only a known suffix."""
    name = Path(filename or "upload.txt").name
    suffix = Path(name).suffix.lower()
    stem = re.sub(r"[^\w.-]+", "_", Path(name).stem)[:100] or "upload"
    return stem, suffix if suffix in UPLOAD_SUFFIXES else ".txt"


class UnsupportedCharset(ValueError):
    """A declared charset Python cannot decode (answered 415)."""


_CHARSET = re.compile(r";\s*charset\s*=\s*\"?([^\";\s]+)\"?", re.IGNORECASE)


def _charset(content_type: str) -> str:
    """The charset a text/plain body declares (UTF-8 when none); UnsupportedCharset when
    Python has no codec of that name, or it is not a text encoding."""
    found = _CHARSET.search(content_type)
    if not found:
        return "utf-8"
    name = found.group(1).strip().lower()
    try:
        info = codecs.lookup(name)
    except LookupError:
        info = None
    if info is None or not getattr(info, "_is_text_encoding", True):
        raise UnsupportedCharset(
            f"unsupported charset {name[:40]!r}: send UTF-8, or a charset such as iso-8859-1, "
            "windows-1252 or utf-16"
        )
    return info.name


async def _book_from_request(request: Request) -> Any:
    """The book a match request carries: plain text, JSON {"text", "title"}, or a file."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=4)
        upload, text = form.get("file"), form.get("text")
        if isinstance(upload, UploadFile):
            stem, suffix = _safe_name(upload.filename)
            data = await upload.read()
            with tempfile.TemporaryDirectory(prefix="bookdup-match-") as tmp:
                path = Path(tmp) / f"{stem}{suffix}"
                path.write_bytes(data)
                return read_one_book(path)
        if isinstance(text, str):
            return book_from_text(text)
        raise BadRequest("a multipart match request needs a 'file' or a 'text' field")
    body = await request.body()
    if kind == "application/json":
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest("the body is not valid JSON") from exc
        if not isinstance(payload, dict) or not isinstance(payload.get("text"), str):
            raise BadRequest('a JSON match request looks like {"text": "...", "title": "..."}')
        title = payload.get("title")
        return book_from_text(payload["text"], title=title if isinstance(title, str) else None)
    if kind in ("text/plain", ""):
        charset = _charset(request.headers.get("content-type", ""))
        try:
            return book_from_text(body.decode(charset))
        except UnicodeDecodeError as exc:
            raise BadRequest(
                f"the text is not valid {charset.upper()}: declare its charset "
                "(text/plain; charset=...)"
            ) from exc
    raise BadRequest(f"unsupported content type {kind!r}: send text/plain, JSON or a file")


def _routes(app: FastAPI, rs: ReadSide) -> None:
    names = rs.names

    @app.get("/api/search", summary="Catalog search, one hit per cluster")
    def api_search(
        q: Annotated[str, Query(max_length=500)] = "",
        collapse: Annotated[str, Query(pattern="^(edition|work|none)$")] = "edition",
        page: Annotated[int, Query(ge=1, le=1000)] = 1,
        per_page: Annotated[int, Query(ge=1, le=100)] = 10,
        language: Annotated[str | None, Query(max_length=8)] = None,
    ) -> dict[str, Any]:
        filters = {"language": language} if language else None
        return search(
            rs.client,
            names.books,
            q,
            collapse=collapse,
            filters=filters,
            page=page,
            per_page=per_page,
        )

    @app.get("/api/books/{book_id}/related", summary="Other editions and translations")
    def api_related(book_id: str) -> dict[str, Any]:
        if len(book_id) > MAX_ID_CHARS:
            raise BadRequest("book id too long")
        return related(rs.client, names.books, names.relations, book_id)

    @app.get("/api/explain", summary="Every signal and confidence for a pair")
    def api_explain(a: BookId, b: BookId) -> dict[str, Any]:
        return explain(rs, a, b)

    @app.get("/api/explain/plot", summary="The pair's alignment picture (PNG or SVG)")
    def api_plot(
        a: BookId, b: BookId, format: Annotated[str, Query(pattern="^(png|svg)$")] = "png"
    ) -> Response:
        picture = render_explain(explain(rs, a, b), format)
        return Response(picture, media_type=FORMATS[format])

    @app.post("/api/match", summary="Related books of a text that is not indexed")
    async def api_match(request: Request) -> JSONResponse:
        book = await _book_from_request(request)
        return JSONResponse(await run_in_threadpool(match, rs, book))


def create_app(rs: ReadSide, *, max_body: int = DEFAULT_MAX_BODY) -> Any:
    """The ASGI application over ``rs`` (its client and index names, nothing else)."""
    app = FastAPI(
        title="bookdup",
        summary="Editions, partial duplicates and translations of books (read-only)",
        docs_url=None,
        redoc_url=None,
    )
    _install_handlers(app)
    _routes(app, rs)
    static = resources.files("server") / "static"

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    return BodyLimit(app, max_body)
