"""``server.fast``: the thin path answers search and related exactly as FastAPI's routes do.

Each request goes to the server twice: once through ``create_app`` (the thin path in front) and
once straight to the FastAPI app behind it (the same routes, handlers, admission and Guard), with
the read functions replaced by fakes that answer or fail as the node would. Status, headers
and body bytes must be the same.
"""

from __future__ import annotations

from typing import Any

import pytest
from elastic_transport import ConnectionError as NodeDown
from elastic_transport import ConnectionTimeout
from fastapi.testclient import TestClient

import server.app
from query.context import BadRequest, NotFound, ReadSide
from server.admission import Busy
from server.fast import FastReads, Reads, related_id, search_args
from server.limits import Guard
from store.schema import IndexNames

LOCAL = "http://127.0.0.1:8000"
NAMES = IndexNames(prefix="fastpath-test")
HIT = {
    "book_id": "alice-de",
    "title": "Alices Abenteuer im Wunderland — ü",
    "score": 12.345678901234567,
    "big": 1e16,
    "small": 1.5e-7,
    "languages": {"en": 2, "de": 1},
    "cluster_size": 3,
    "none": None,
    "pair": (1, 2),
}
RELATED = {
    "book": {"book_id": "alice-en", "title": "Alice", "content_hash": "secret", "stems": [1]},
    "relations": [{"book_id": "alice-de", "relation": "TRANSLATION", "confidence": 0.91,
                   "index_run": "r1"}],
    "groups": [{"relation": "TRANSLATION", "label": "Translations",
                "books": [{"book_id": "alice-de", "flags": 3, "confidence": 0.91}]}],
    "counts": {"TRANSLATION": 1},
}  # fmt: skip
#: What a fake read does for a query or an id: answer, or raise what the node or read side would.
FAILURES: dict[str, Exception] = {
    "empty": BadRequest("the query is empty in fastpath-test-books-v4"),
    "missing": NotFound("no book with id 'missing' in fastpath-test-books-v4"),
    "down": NodeDown("connection refused to http://elastic:pw@10.0.0.1:9200"),
    "slow": ConnectionTimeout("timed out"),
    "busy": Busy("the server is busy (reads): retry in 1 s"),
    "bug": RuntimeError("a bug in /srv/bookdup/query"),
    "nan": float("nan"),  # type: ignore[dict-item]
}


@pytest.fixture()
def calls(monkeypatch) -> list[tuple[Any, ...]]:
    """The fakes' calls, (query or id, arguments)."""
    seen: list[tuple[Any, ...]] = []

    def fake_search(_client, _index, q, **kwargs):
        seen.append((q, kwargs))
        failure = FAILURES.get(q.strip() or "empty")
        if isinstance(failure, Exception):
            raise failure
        return {"hits": [HIT], "total_books": 1, "page": kwargs["page"], "odd": failure or 0.5}

    def fake_related(_client, _books, _relations, book_id):
        seen.append((book_id, {}))
        if book_id in FAILURES and isinstance(FAILURES[book_id], Exception):
            raise FAILURES[book_id]
        return {**RELATED, "book": {**RELATED["book"], "book_id": book_id}}

    monkeypatch.setattr(server.app, "search", fake_search)
    monkeypatch.setattr(server.app, "related", fake_related)
    return seen


@pytest.fixture()
def both(calls) -> tuple[TestClient, TestClient]:
    """(the server as it runs, the same app without the thin path)."""
    rs = ReadSide(None, NAMES)  # type: ignore[arg-type]  # the fakes never touch a client
    guarded = server.app.create_app(rs)
    assert isinstance(guarded.app, FastReads)
    routes_only = Guard(guarded.app.app, guarded.limit)

    def client(app: Any) -> TestClient:
        return TestClient(app, base_url=LOCAL, raise_server_exceptions=False)

    return client(guarded), client(routes_only)


def _same(both: tuple[TestClient, TestClient], calls: list, url: str) -> int:
    """The answer of ``url`` both ways (status, headers, bytes) must match; its status."""
    fast, routes = both
    first = fast.get(url)
    fast_calls = list(calls)
    calls.clear()
    second = routes.get(url)
    assert (first.status_code, first.content) == (second.status_code, second.content), url
    assert sorted(first.headers.items()) == sorted(second.headers.items()), url
    assert fast_calls == calls, url  # the read ran with the same arguments (or not at all)
    calls.clear()
    return first.status_code


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/search?q=alice", 200),
        ("/api/search?q=alice+in&collapse=work&page=3&per_page=100&language=de", 200),
        ("/api/search?q=alice&collapse=none&page=1000&per_page=1&language=", 200),
        ("/api/search?q=alice&other=1&x=%FF", 200),
        ("/api/search?q=%C3%BC%E2%80%94" + "a" * 496, 200),
        ("/api/search?q=nan", 200),  # NaN: null both ways (pydantic)
        ("/api/search?q=", 400),
        ("/api/search?q=%20%20", 400),
        ("/api/search", 400),
        ("/api/search?q=" + "a" * 501, 400),
        ("/api/search?q=a&q=b", 200),
        ("/api/search?q=alice&collapse=author", 400),
        ("/api/search?q=alice&collapse=edition%0A", 400),
        ("/api/search?q=alice&page=0", 400),
        ("/api/search?q=alice&page=01", 200),
        ("/api/search?q=alice&page=+1", 200),
        ("/api/search?q=alice&page=1001", 400),
        ("/api/search?q=alice&page=x", 400),
        ("/api/search?q=alice&page=1.0", 200),  # pydantic reads "1.0" as 1
        ("/api/search?q=alice&per_page=101", 400),
        ("/api/search?q=alice&language=abcdefghi", 400),
        ("/api/search?q=down", 503),
        ("/api/search?q=slow", 504),
        ("/api/search?q=busy", 429),
        ("/api/search?q=bug", 500),
        ("/api/search/?q=alice", 200),
    ],
)
def test_search_answers_as_the_route_does(both, calls, url: str, status: int) -> None:
    assert _same(both, calls, url) == status


@pytest.mark.parametrize(
    ("book_id", "status"),
    [
        ("alice-en", 200),
        ("%C3%BC%20b", 200),
        ("missing", 404),
        ("down", 503),
        ("slow", 504),
        ("busy", 429),
        ("bug", 500),
        ("a" * 512, 200),
        ("a" * 513, 400),
        ("%F0%9F%93%9A" * 200, 400),  # 200 characters, 800 bytes: _check_id's 400
        ("%ED%A0%80", 200),  # an invalid UTF-8 escape, decoded as U+FFFD by the server
    ],
)
def test_related_answers_as_the_route_does(both, calls, book_id: str, status: int) -> None:
    assert _same(both, calls, f"/api/books/{book_id}/related") == status


def test_other_methods_and_paths_are_the_routes(both, calls) -> None:
    fast, routes = both
    for method, url in [
        ("POST", "/api/search?q=a"),
        ("HEAD", "/api/search?q=a"),
        ("GET", "/api/books/a/related/"),
        ("GET", "/api/books//related"),
        ("GET", "/api/books/a/b/related"),
    ]:
        first = fast.request(method, url, follow_redirects=False)
        second = routes.request(method, url, follow_redirects=False)
        assert (first.status_code, first.content) == (second.status_code, second.content)
        assert first.headers.get("allow") == second.headers.get("allow")
    assert calls == []


def test_the_thin_path_answers_without_the_app() -> None:
    async def no_app(_scope, _receive, _send) -> None:
        raise AssertionError("reached the app")

    async def search(**kwargs: Any) -> dict[str, Any]:
        return {"args": kwargs}

    async def related(book_id: str) -> dict[str, Any]:
        return {"book": book_id}

    reads = Reads(search, related, lambda exc: server.app._answer_error(exc, str))
    client = TestClient(FastReads(no_app, reads), base_url=LOCAL)
    answer = client.get("/api/search?q=x&per_page=5")
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "args": {"q": "x", "collapse": "edition", "page": 1, "per_page": 5, "language": None}
    }
    assert client.get("/api/books/b c/related").json() == {"book": "b c"}


def test_what_the_thin_path_leaves_to_fastapi() -> None:
    assert search_args(b"q=a&page=1000&per_page=100")["page"] == 1000  # type: ignore[index]
    for query in (b"", b"q=a&page=01", b"q=a&page=-1", b"q=a&q=b", b"q=a&per_page=%EF%BC%91"):
        assert search_args(query) is None, query
    assert related_id("/api/books/x/related") == "x"
    assert related_id("/api/books/x/related\n") is None
    assert related_id("/api/books/" + "a" * 513 + "/related") is None
