"""`bookdup serve`: the read side as a read-only HTTP JSON API, and one review page at ``/``.

Paths clients can rely on (the OpenAPI document is at ``/openapi.json``):

- ``GET /api/search?q=&collapse=edition|work|none&page=&per_page=&language=``
- ``GET /api/books/{id}/related`` (404 for an unknown id)
- ``GET /api/explain?a=&b=`` and ``GET /api/explain/plot?a=&b=&format=png|svg``
- ``POST /api/match``: a text (``text/plain``, or JSON ``{"text": ...}``) or a file
  (``multipart/form-data``, field ``file``, any format the readers know)

Safety: the indices are fixed when the app is made (no request names an index, and no answer
names one); ``server.limits.Guard`` in front of it allows loopback Host names (and
``allowed_hosts``), refuses cross-origin POSTs (403) and bodies over ``max_body`` bytes (413),
and puts the security headers on every answer; every error is a JSON ``{"error": ...}`` with a
4xx or 5xx status and never a stack trace, a server path, an Elasticsearch URL or a
credential; ``server.admission`` bounds the work in flight (429 with ``Retry-After`` beyond it)
and gives each request a deadline (504 when the node is too slow, 503 when it is down);
related and match answer public fields only (an allow-list); the OpenAPI document lists
every status and match's request body; the interactive ``/docs`` page is off (it loads
scripts from a CDN).
"""

from __future__ import annotations

import codecs
import json
import logging
import re
import tempfile
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from elasticsearch import ApiError, ConnectionTimeout, TransportError
from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from query.context import BadRequest, NotFound, ReadSide
from query.explain import explain
from query.match import book_from_text, match, read_one_book
from query.plots import FORMATS, render_explain
from query.related import related
from query.search import search
from server.admission import RETRY_AFTER_S, Admission, Busy, Limits
from server.limits import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_MAX_HEADER_BYTES,
    SECURITY_HEADERS,
    Guard,
)
from server.workers import Workers
from store.schema import IndexNames

log = logging.getLogger("bookdup.server")

DEFAULT_MAX_BODY = 25 * 1024 * 1024
MAX_ID_CHARS = 512
#: Elasticsearch refuses an id over 512 bytes: a longer one (334 emoji) is a 400 here.
MAX_ID_BYTES = 512
#: Suffixes an uploaded file may keep (the readers pick the format from it).
UPLOAD_SUFFIXES = {".txt", ".jsonl", ".ndjson", ".xml", ".html", ".htm", ".hocr"}
BookId = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)]
#: A path's book id: the same 1–512 characters, stated in the document (byte length is checked
#: in _check_id: JSON Schema counts characters).
PathBookId = Annotated[str, PathParam(min_length=1, max_length=MAX_ID_CHARS)]
#: A character that is not whitespace to ``str.split`` (what query.search strips), spelled out:
#: a regex's ``\S`` differs between engines (JSON Schema's ECMA one keeps ``\x1c``–``\x1f``).
NOT_BLANK = "[^\\t-\\r\\x1c- \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
#: A query: some words, at most 500 characters. The document states that it is not blank;
#: query.search refuses a blank one itself, with a message that says so.
SearchQuery = Annotated[
    str, Query(max_length=500, json_schema_extra={"minLength": 1, "pattern": NOT_BLANK})
]


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _scrubber(names: IndexNames) -> Callable[[str], str]:
    """A message without the deployment's index names ("no book with id 'x' in p-books" →
    "no book with id 'x'"): no answer says which indices the server reads."""
    named = re.compile(r"(\s+in\s+)?\b" + re.escape(names.prefix) + r"-[\w.-]*")
    return lambda message: named.sub(lambda m: "" if m.group(1) else "the index", message)


def _install_handlers(app: FastAPI, scrub: Callable[[str], str]) -> None:
    @app.exception_handler(BadRequest)
    async def bad_request(_r: Request, exc: BadRequest) -> JSONResponse:
        return _error(400, scrub(str(exc)))

    @app.exception_handler(NotFound)
    async def not_found(_r: Request, exc: NotFound) -> JSONResponse:
        return _error(404, scrub(str(exc)))

    @app.exception_handler(UnsupportedCharset)
    async def bad_charset(_r: Request, exc: UnsupportedCharset) -> JSONResponse:
        return _error(415, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(_r: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
            for e in exc.errors()
        ]
        return _error(400, scrub("; ".join(problems)[:1000]) or "malformed request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_r: Request, exc: StarletteHTTPException) -> JSONResponse:
        # a 405 keeps its Allow header
        return _error(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))

    @app.exception_handler(Busy)
    async def busy(_r: Request, exc: Busy) -> JSONResponse:
        return _error(429, str(exc), headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(ConnectionTimeout)
    async def too_slow(_r: Request, _exc: ConnectionTimeout) -> JSONResponse:
        log.warning("Elasticsearch did not answer within the request's deadline")
        return _error(504, "the search backend did not answer in time")

    @app.exception_handler(ApiError)
    @app.exception_handler(TransportError)
    async def backend(_r: Request, exc: Exception) -> JSONResponse:
        log.warning("Elasticsearch failed: %s", type(exc).__name__)
        return _error(503, "the search backend is unavailable or its indices are missing")

    @app.exception_handler(Exception)
    async def internal(_r: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s", type(exc).__name__, exc_info=exc)
        return _error(500, "internal error")


def _check_id(book_id: str, name: str = "book id") -> str:
    """A book id the index can hold: 1–512 characters and at most 512 bytes in UTF-8."""
    if not book_id or len(book_id) > MAX_ID_CHARS:
        raise BadRequest(f"{name}: 1 to {MAX_ID_CHARS} characters")
    try:
        size = len(book_id.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate
        raise BadRequest(f"{name}: not valid Unicode") from exc
    if size > MAX_ID_BYTES:
        raise BadRequest(f"{name} too long: {size:,} bytes in UTF-8, at most {MAX_ID_BYTES}")
    return book_id


def _safe_name(filename: str | None) -> tuple[str, str]:
    """(book id, suffix) from an uploaded file name: no path, only a known suffix."""
    name = Path(filename or "upload.txt").name
    suffix = Path(name).suffix.lower()
    stem = re.sub(r"[^\w.-]+", "_", Path(name).stem)[:100] or "upload"
    return stem, suffix if suffix in UPLOAD_SUFFIXES else ".txt"


#: The fields of a multipart match request.
MATCH_FORM_FIELDS = frozenset({"file", "text"})


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


def _read_upload(filename: str | None, data: bytes) -> Any:
    """The first book of an uploaded file, read from a temporary copy; a refusal names the
    file as the client sent it (its safe name), never the server's temporary path."""
    stem, suffix = _safe_name(filename)
    with tempfile.TemporaryDirectory(prefix="bookdup-match-") as tmp:
        path = Path(tmp) / f"{stem}{suffix}"
        path.write_bytes(data)
        try:
            return read_one_book(path)
        except BadRequest as exc:
            message = str(exc).replace(str(path), path.name).replace(tmp, "")
            raise BadRequest(message) from None
        except Exception as exc:  # a reader's own error on a malformed file
            log.info("upload not readable: %s", type(exc).__name__)
            raise BadRequest(f"{path.name}: the file could not be read") from None


async def _book_reader(request: Request) -> Callable[[], Any]:
    """What makes the book a match request carries (plain text, JSON {"text", "title"}, or a
    file): the body is read here, on the event loop; parsing and splitting the text (seconds
    for a 20-MB text) is left to the returned function, run in an admitted worker thread."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=4)
        unknown = sorted(set(form.keys()) - MATCH_FORM_FIELDS)
        if unknown:  # as the document says (additionalProperties: false)
            raise BadRequest(f"unknown form field {unknown[0][:40]!r}: send 'file' or 'text'")
        upload, text = form.get("file"), form.get("text")
        if isinstance(upload, UploadFile):
            data, filename = await upload.read(), upload.filename
            return lambda: _read_upload(filename, data)
        if isinstance(text, str):
            return lambda: book_from_text(text)
        raise BadRequest("a multipart match request needs a 'file' or a 'text' field")
    body = await request.body()
    return lambda: _book_from_body(kind, request.headers.get("content-type", ""), body)


def _book_from_body(kind: str, content_type: str, body: bytes) -> Any:
    """The book of a text/plain or JSON match body."""
    if kind == "application/json":
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError) as exc:
            # not JSON, not UTF-8, nested too deep, a number of more than 4,300 digits
            raise BadRequest("the body is not valid JSON (or is nested too deep)") from exc
        if not isinstance(payload, dict) or not isinstance(payload.get("text"), str):
            raise BadRequest('a JSON match request looks like {"text": "...", "title": "..."}')
        title = payload.get("title")
        title = title if isinstance(title, str) else None
        try:  # JSON's \ud800 escapes decode to lone surrogates, no text
            payload["text"].encode("utf-8"), (title or "").encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BadRequest("the body is not valid JSON: a lone surrogate (\\ud800)") from exc
        return book_from_text(payload["text"], title=title)
    if kind in ("text/plain", ""):
        charset = _charset(content_type)
        try:
            return book_from_text(body.decode(charset))
        except UnicodeDecodeError as exc:
            raise BadRequest(
                f"the text is not valid {charset.upper()}: declare its charset "
                "(text/plain; charset=...)"
            ) from exc
    raise BadRequest(f"unsupported content type {kind!r}: send text/plain, JSON or a file")


#: What a related or match answer says of a book, and of each related book: an allow-list, so
#: a field added to the index (a hash, a run id, a feature) is not served until named here.
PUBLIC_BOOK_FIELDS = frozenset(
    {
        "book_id", "title", "author", "year", "language", "declared_language",
        "language_confidence", "n_words", "n_pages", "n_unique", "display_title",
        "edition_cluster", "work_cluster", "indexed", "indexed_as",
    }
)  # fmt: skip
PUBLIC_RELATION_FIELDS = frozenset(
    {
        "book_id", "relation", "label", "direction", "direction_text", "confidence", "cs",
        "its", "lcs", "shared", "translated", "languages", "page_mapping", "signals",
        "title", "author", "language", "year", "n_pages", "display_title",
        "edition_cluster", "work_cluster",
    }
)  # fmt: skip


def public(result: dict[str, Any]) -> dict[str, Any]:
    """A related or match answer with the public fields only (``book``, ``relations``,
    ``groups``, ``counts``)."""

    def row(r: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in r.items() if k in PUBLIC_RELATION_FIELDS}

    return {
        "book": {k: v for k, v in result["book"].items() if k in PUBLIC_BOOK_FIELDS},
        "relations": [row(r) for r in result["relations"]],
        "groups": [
            {"relation": g["relation"], "label": g["label"], "books": [row(b) for b in g["books"]]}
            for g in result["groups"]
        ],
        "counts": dict(result["counts"]),
    }


#: What an explain answer says of the relation the last dedup run stored (no run id).
PUBLIC_STORED_FIELDS = frozenset({"relation", "confidence", "direction", "its", "cs"})


def public_explain(result: dict[str, Any]) -> dict[str, Any]:
    """An explain answer whose ``stored`` relation has the public fields only."""
    stored = result.get("stored")
    if stored is None:
        return result
    return {**result, "stored": {k: v for k, v in stored.items() if k in PUBLIC_STORED_FIELDS}}


class ErrorBody(BaseModel):
    """Every refusal and failure: one message, never a path, an index or a trace."""

    error: str


def _answers(*statuses: int) -> dict[int | str, dict[str, Any]]:
    words = {
        400: "malformed input (a parameter, an id over 512 characters or bytes, a body), or "
        "a Host that is not served",
        403: "a request from another origin (Origin or Sec-Fetch-Site)",
        404: "no book with this id",
        408: "the request's body did not arrive within --body-timeout",
        405: "another method than the path's (Allow names it)",
        413: "a body over the server's --max-body-mb",
        431: "more than 100 header lines, or line and headers over --max-header-kb",
        415: "a text/plain body in a charset Python cannot decode",
        429: "the server is at its in-flight limit (--max-inflight, --max-heavy): retry after "
        "Retry-After seconds",
        500: "an internal error (a bug): no details",
        503: "the search backend does not answer, or its indices are missing",
        504: "the search backend did not answer within --request-timeout",
    }
    return {s: {"model": ErrorBody, "description": words[s]} for s in statuses}


#: What every endpoint can answer besides its own: a bad Host or input (400), a body too
#: slow (408) or over the limit (413, even on a GET), too many or too large headers (431), no
#: place in flight (429), an internal error (500), the backend down (503) or too slow (504).
COMMON = (400, 408, 413, 429, 431, 500, 503, 504)
MATCH_BODY = {
    "required": True,
    "content": {
        "text/plain": {"schema": {"type": "string"}},
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["text"],
                "properties": {"text": {"type": "string"}, "title": {"type": "string"}},
            }
        },
        "multipart/form-data": {
            "schema": {
                "type": "object",
                # a file or a text: a form with neither, or with another field, is a 400
                "anyOf": [{"required": ["file"]}, {"required": ["text"]}],
                "additionalProperties": False,
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "text": {"type": "string"},
                },
            }
        },
    },
}


def _routes(app: FastAPI, rs: ReadSide, admit: Admission) -> None:
    names = rs.names
    # pictures and match verification: CPU-bound, out of the server's GIL, in ONE process at
    # the lowest CPU priority (the admitted heavy requests queue to it), so that on a small
    # machine a core stays with the server and the node for the cheap reads
    workers = Workers(1)
    app.router.on_shutdown.append(workers.close)

    @app.get(
        "/api/search",
        summary="Catalog search, one hit per cluster",
        responses=_answers(*COMMON),
    )
    async def api_search(
        q: SearchQuery,
        collapse: Annotated[str, Query(pattern="^(edition|work|none)$")] = "edition",
        page: Annotated[int, Query(ge=1, le=1000)] = 1,
        per_page: Annotated[int, Query(ge=1, le=100)] = 10,
        language: Annotated[str | None, Query(max_length=8)] = None,
    ) -> dict[str, Any]:
        filters = {"language": language} if language else None
        return await admit.read(
            lambda: search(
                rs.client,
                names.books,
                q,
                collapse=collapse,
                filters=filters,
                page=page,
                per_page=per_page,
            )
        )

    @app.get(
        "/api/books/{book_id}/related",
        summary="Other editions and translations",
        responses=_answers(*COMMON, 404),
    )
    async def api_related(book_id: PathBookId) -> dict[str, Any]:
        _check_id(book_id)
        found = await admit.read(related, rs.client, names.books, names.relations, book_id)
        return public(found)

    @app.get(
        "/api/explain",
        summary="Every signal and confidence for a pair",
        responses=_answers(*COMMON, 404),
    )
    async def api_explain(a: BookId, b: BookId) -> dict[str, Any]:
        found = await admit.compute(explain, rs, _check_id(a, "a"), _check_id(b, "b"))
        return public_explain(found)

    @app.get(
        "/api/explain/plot",
        summary="The pair's alignment picture (PNG or SVG)",
        response_class=Response,
        responses={
            200: {
                "description": "the picture",
                "content": {media: {} for media in FORMATS.values()},
            },
            **_answers(*COMMON, 404),
        },
    )
    async def api_plot(
        a: BookId, b: BookId, format: Annotated[str, Query(pattern="^(png|svg)$")] = "png"
    ) -> Response:
        pair = _check_id(a, "a"), _check_id(b, "b")
        picture = await admit.compute(
            lambda: workers.run(render_explain, explain(rs, *pair), format)
        )
        return Response(picture, media_type=FORMATS[format])

    @app.post(
        "/api/match",
        summary="Related books of a text that is not indexed",
        responses={
            200: {"description": "the text's related books, as /related answers"},
            **_answers(*COMMON, 403, 415),
        },
        openapi_extra={"requestBody": MATCH_BODY},
    )
    async def api_match(request: Request) -> JSONResponse:
        book = await _book_reader(request)
        found = await admit.compute(lambda: match(rs, book(), workers.run))
        return JSONResponse(public(found))


def _document(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The OpenAPI document without FastAPI's default 422 (the server answers 400 instead)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title, version=app.version, summary=app.summary, routes=app.routes
            )
            for operations in spec.get("paths", {}).values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            schemas = spec.get("components", {}).get("schemas", {})
            for name in ("HTTPValidationError", "ValidationError"):
                schemas.pop(name, None)
            app.openapi_schema = spec
        return app.openapi_schema

    return openapi


def create_app(
    rs: ReadSide,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    allowed_hosts: Iterable[str] = (),
    limits: Limits | None = None,
    max_bodies: int | None = None,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
) -> Any:
    """The ASGI application over ``rs`` (its client and index names, nothing else), behind
    ``server.limits.Guard``: bodies up to ``max_body`` bytes, the loopback names and
    ``allowed_hosts`` as ``Host``, security headers on every answer; work admitted and timed
    by ``server.admission`` with ``limits``; all bodies held at once under ``max_bodies``
    bytes (default: four at ``max_body``); a body must arrive within ``body_timeout``
    seconds, a request's line and headers stay under ``max_header_bytes``."""
    app = FastAPI(
        title="bookdup",
        summary="Editions, partial duplicates and translations of books (read-only)",
        docs_url=None,
        redoc_url=None,
    )
    _install_handlers(app, _scrubber(rs.names))
    app.state.admission = admission = Admission(limits)
    _routes(app, rs, admission)
    app.openapi = _document(app)  # type: ignore[method-assign]
    static = resources.files("server") / "static"

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    return Guard(
        app,
        max_body,
        allowed_hosts,
        bodies=max_bodies,
        body_timeout=body_timeout,
        max_header_bytes=max_header_bytes,
        refuse_early=admission.refuse_early,
    )


__all__ = ["SECURITY_HEADERS", "create_app"]
