"""Issue 30, the error contract of `bookdup serve` over a real node: every error is JSON with
the security headers; no server path, index name or internal field in any answer; 400 for
every malformed input; the Host allow-list; no cross-origin POST; an OpenAPI document that
lists what the server answers."""

from __future__ import annotations

import json
import re
import sys

import pytest
from fastapi.testclient import TestClient

from server.app import (
    NOT_BLANK,
    PUBLIC_BOOK_FIELDS,
    PUBLIC_RELATION_FIELDS,
    PUBLIC_STORED_FIELDS,
    create_app,
)
from server.limits import SECURITY_HEADERS
from store.keys import CANDIDATE_KEY_FIELDS
from tests.fixtures_books import gutenberg_body
from tests.server.conftest import ALICE, TOM, TOM_PART1

LOCAL = "http://127.0.0.1:8000"
#: Internal fields no answer names: every candidate-key field (store.keys) and the internals.
INTERNAL = (
    *CANDIDATE_KEY_FIELDS,
    "content_hash",
    "index_run",
    "features_version",
    "flags",
    "raw_hash",
)
TEXT = {"content-type": "text/plain"}
JSON = {"content-type": "application/json"}
ROT13 = {"content-type": "text/plain; charset=rot13"}


@pytest.fixture(scope="module")
def api(served) -> TestClient:
    return TestClient(
        create_app(served[1], max_body=100_000, allowed_hosts=["books.example.org"]),
        base_url=LOCAL,
        raise_server_exceptions=False,
    )


def refused(response, status: int, served=None) -> str:
    """The error message of a JSON refusal with ``status`` and every security header."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, name
    body = response.json()
    assert set(body) == {"error"}, body
    assert "Traceback" not in response.text and "/tmp" not in response.text
    if served is not None:
        assert served[0].prefix not in response.text  # no index name
    return body["error"]


def test_errors_before_routing_are_json_with_headers(api) -> None:
    refused(api.get("/no/such/path"), 404)
    wrong = api.delete("/api/search")
    assert "method" in refused(wrong, 405).lower()
    assert wrong.headers["allow"] == "GET"
    assert api.put("/api/match", content=b"x").headers["allow"] == "POST"
    big = api.post("/api/match", content=b"w " * 60_000, headers=TEXT)
    assert "over 100,000 bytes" in refused(big, 413)
    assert "Content-Length" in refused(
        api.post("/api/match", content=b"x", headers={**TEXT, "content-length": "x1"}), 400
    )


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 1000 + b"]" * 1000,
        b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"text": "a b c", "title": ' + b"1" * 4301 + b"}",
        b'{"text": "' + b"word " * 100 + b'\\ud800"}',
        b"\xff\xfe{}",
    ],
)
def test_malformed_json_is_a_400(api, served, body: bytes) -> None:
    response = api.post("/api/match", content=body, headers={"content-type": "application/json"})
    assert "JSON" in refused(response, 400, served)


@pytest.mark.parametrize(
    "path",
    [
        "/api/search?q=alice&page=" + "9" * 4301,
        "/api/search?q=alice&per_page=1e400",
        "/api/search?q=alice&page=NaN",
        "/api/books/" + "😀" * 334 + "/related",
        "/api/books/" + "😀" * 512 + "/related",
        "/api/books/" + "a" * 513 + "/related",
        f"/api/explain?a={TOM}&b=" + "😀" * 400,
        f"/api/explain/plot?a={'é' * 300}&b={TOM}",
    ],
)
def test_malformed_parameters_are_a_400(api, served, path: str) -> None:
    refused(api.get(path), 400, served)


def test_an_id_of_512_bytes_is_looked_up(api, served) -> None:
    response = api.get("/api/books/" + "😀" * 128 + "/related")  # 512 bytes: a 404, not a 400
    assert "no book" in refused(response, 404, served)


def test_404_names_the_id_not_the_index(api, served) -> None:
    message = refused(api.get("/api/books/no-such-book/related"), 404, served)
    assert message == "no book with id 'no-such-book'"
    assert "no book with id 'nope'" in refused(api.get(f"/api/explain?a={TOM}&b=nope"), 404, served)


def test_no_candidate_key_is_a_public_field() -> None:
    """The allow-lists never name a candidate key, whatever the registry adds."""
    assert not set(CANDIDATE_KEY_FIELDS) & PUBLIC_BOOK_FIELDS
    assert not set(CANDIDATE_KEY_FIELDS) & PUBLIC_RELATION_FIELDS


def test_related_and_match_serve_public_fields_only(api, served) -> None:
    related = api.get(f"/api/books/{TOM}/related")
    assert related.status_code == 200
    body = related.json()
    assert set(body) == {"book", "relations", "groups", "counts"}
    assert set(body["book"]) <= PUBLIC_BOOK_FIELDS
    assert {"book_id", "title", "edition_cluster", "display_title"} <= set(body["book"])
    rows = body["relations"] + [b for g in body["groups"] for b in g["books"]]
    assert rows and all(set(r) <= PUBLIC_RELATION_FIELDS for r in rows)
    for name in INTERNAL:
        assert f'"{name}"' not in related.text, name
    stave = "\n".join(gutenberg_body(TOM)[:600])
    matched = api.post("/api/match", content=stave.encode(), headers=TEXT)
    assert matched.status_code == 200, matched.text
    assert set(matched.json()["book"]) <= PUBLIC_BOOK_FIELDS
    assert all(set(r) <= PUBLIC_RELATION_FIELDS for r in matched.json()["relations"])
    for name in INTERNAL:
        assert f'"{name}"' not in matched.text, name
    assert TOM_PART1 in {r["book_id"] for r in matched.json()["relations"]}


def test_explain_serves_no_run_id(api, served) -> None:
    explained = api.get(f"/api/explain?a={TOM}&b={TOM_PART1}")
    assert explained.status_code == 200, explained.text[:300]
    stored = explained.json()["stored"]
    assert stored is not None and stored["relation"]  # the dedup run stored this pair
    assert set(stored) <= PUBLIC_STORED_FIELDS
    assert "run_id" not in explained.text and served[0].prefix not in explained.text


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bomb.txt", b""),
        ("bomb.txt", b"\x00\x01\x02" * 200),
        ("pages.jsonl", b'{"not": "a book"}\n'),
        ("broken.xml", b"<TEI><text><body><p>unclosed"),
        ("evil.hocr", b"<html><body><div class='ocr_page'>" + b"<span>" * 5000),
    ],
)
def test_upload_errors_name_the_file_not_the_server_path(api, name: str, data: bytes) -> None:
    response = api.post("/api/match", files={"file": (name, data)})
    message = refused(response, 400)
    assert "bookdup-match-" not in message and "/tmp" not in message
    assert name in message or "file" in message or "text" in message


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8000", "localhost:9", "LOCALHOST", "[::1]:8000"]
)
def test_loopback_hosts_are_served(api, host: str) -> None:
    assert api.get("/api/search?q=alice", headers={"host": host}).status_code == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "127.0.0.1.evil.example:8000", "localhost.", "10.0.0.1", "[::2]"]
)
def test_other_hosts_are_refused(api, served, host: str) -> None:
    message = refused(api.get("/api/search?q=alice", headers={"host": host}), 400, served)
    assert "--allowed-host" in message
    assert api.post("/api/match", content=b"x", headers={**TEXT, "host": host}).status_code == 400


def test_an_allowed_host_is_served_on_any_port(api) -> None:
    for host in ("books.example.org", "Books.Example.org:8443"):
        assert api.get("/api/search?q=alice", headers={"host": host}).status_code == 200


def test_cross_origin_posts_are_refused(api, served) -> None:
    stave = "\n".join(gutenberg_body(ALICE)[:300]).encode()
    for headers in (
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},  # another port is another origin
        {"origin": "https://127.0.0.1:8000"},  # another scheme too
        {"origin": "http://localhost:8000"},  # another name for the same server too
        {"sec-fetch-site": "cross-site"},
    ):
        for kind in ("text/plain", "application/x-www-form-urlencoded", "application/json"):
            response = api.post(
                "/api/match", content=stave, headers={"content-type": kind, **headers}
            )
            assert "another origin" in refused(response, 403, served), headers
    upload = api.post(
        "/api/match", files={"file": ("a.txt", stave)}, headers={"origin": "http://evil.example"}
    )
    refused(upload, 403)
    # the same origin, or none (curl, programs): the request is served
    for headers in ({"origin": LOCAL}, {"origin": "http://127.0.0.1:8000/"}, {}):
        ok = api.post("/api/match", content=stave, headers={**TEXT, **headers})
        assert ok.status_code == 200, (headers, ok.text[:200])
    # reads are not refused for an Origin (a browser does not let the page read the answer)
    assert (
        api.get("/api/search?q=alice", headers={"origin": "http://evil.example"}).status_code == 200
    )


def test_openapi_lists_what_the_server_answers(api) -> None:
    spec = api.get("/openapi.json").json()
    assert "422" not in json.dumps(spec["paths"])
    match_body = spec["paths"]["/api/match"]["post"]["requestBody"]
    assert set(match_body["content"]) == {"text/plain", "application/json", "multipart/form-data"}
    assert "file" in match_body["content"]["multipart/form-data"]["schema"]["properties"]
    expected = {
        ("/api/search", "get"): {"200", "400", "413", "429", "503", "504"},
        ("/api/books/{book_id}/related", "get"): {"200", "400", "404", "413", "429", "503", "504"},
        ("/api/explain", "get"): {"200", "400", "404", "413", "429", "503", "504"},
        ("/api/explain/plot", "get"): {"200", "400", "404", "413", "429", "503", "504"},
        ("/api/match", "post"): {"200", "400", "403", "413", "415", "429", "503", "504"},
    }
    for (path, method), statuses in expected.items():
        assert statuses <= set(spec["paths"][path][method]["responses"]), path
    plot = spec["paths"]["/api/explain/plot"]["get"]["responses"]["200"]["content"]
    assert set(plot) == {"image/png", "image/svg+xml"}


ALICE_TEXT = " ".join(gutenberg_body(ALICE)[:300])
# (operation, request) probes: every answer's status and media type must be in the document
PROBES = [
    ("/api/search", "get", dict(url="/api/search?q=alice")),
    ("/api/search", "get", dict(url="/api/search?q=")),
    ("/api/search", "get", dict(url="/api/search?q=alice&page=0")),
    ("/api/search", "get", dict(url="/api/search?q=alice&collapse=x")),
    ("/api/search", "get", dict(url="/api/search?q=alice", headers={"host": "evil.example"})),
    ("/api/search", "get", dict(url="/api/search?q=a", content=b"x" * 200_000)),
    ("/api/books/{book_id}/related", "get", dict(url=f"/api/books/{TOM}/related")),
    ("/api/books/{book_id}/related", "get", dict(url="/api/books/nope/related")),
    ("/api/books/{book_id}/related", "get", dict(url="/api/books/" + "😀" * 400 + "/related")),
    ("/api/explain", "get", dict(url=f"/api/explain?a={TOM}&b={TOM_PART1}")),
    ("/api/explain", "get", dict(url=f"/api/explain?a={TOM}")),
    ("/api/explain", "get", dict(url=f"/api/explain?a={TOM}&b=nope")),
    ("/api/explain/plot", "get", dict(url=f"/api/explain/plot?a={TOM}&b={TOM_PART1}")),
    ("/api/explain/plot", "get", dict(url=f"/api/explain/plot?a={TOM}&b={TOM_PART1}&format=svg")),
    ("/api/explain/plot", "get", dict(url=f"/api/explain/plot?a={TOM}&b={TOM}&format=gif")),
    ("/api/explain/plot", "get", dict(url=f"/api/explain/plot?a=nope&b={TOM}")),
    ("/api/match", "post", dict(url="/api/match", content=b"few words", headers=TEXT)),
    ("/api/match", "post", dict(url="/api/match", json={"text": 1})),
    ("/api/match", "post", dict(url="/api/match", content=b"{", headers=JSON)),
    ("/api/match", "post", dict(url="/api/match", content=b"x", headers=ROT13)),
    ("/api/match", "post", dict(url="/api/match", content=b"w " * 60_000, headers=TEXT)),
    ("/api/match", "post", dict(url="/api/match", content=b"x", headers={**TEXT, "origin": "http://e.org"})),
    ("/api/match", "post", dict(url="/api/match", files={"file": ("a.txt", b"")})),
    ("/api/match", "post", dict(url="/api/match", json={"text": ALICE_TEXT})),
]  # fmt: skip


def test_every_answer_is_in_the_openapi_document(api) -> None:
    spec = api.get("/openapi.json").json()
    seen: dict[tuple[str, str], set[int]] = {}
    for path, method, request in PROBES:
        request = dict(request)
        response = api.request(method.upper(), request.pop("url"), **request)
        documented = spec["paths"][path][method]["responses"]
        assert str(response.status_code) in documented, (path, response.status_code)
        media = response.headers["content-type"].split(";")[0]
        assert media in documented[str(response.status_code)].get("content", {}), (path, media)
        seen.setdefault((path, method), set()).add(response.status_code)
    assert all(200 in statuses for statuses in seen.values()), seen
    assert {s for statuses in seen.values() for s in statuses} >= {200, 400, 403, 404, 413, 415}


def test_the_document_states_the_limits_schemathesis_found(api) -> None:
    """What tests/server/test_schemathesis.py found the document allowed and the server
    refused: a missing or blank query, a path id over 512 characters, a form's other fields."""
    spec = api.get("/openapi.json").json()
    (q,) = [p for p in spec["paths"]["/api/search"]["get"]["parameters"] if p["name"] == "q"]
    assert q["required"] and q["schema"]["minLength"] == 1 and q["schema"]["pattern"] == NOT_BLANK
    (book_id,) = spec["paths"]["/api/books/{book_id}/related"]["get"]["parameters"]
    assert book_id["schema"]["maxLength"] == 512
    form = spec["paths"]["/api/match"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert form["schema"]["additionalProperties"] is False
    for url in ("/api/search", "/api/search?q=%20%1E", "/api/search?q=" + "a" * 501):
        refused(api.get(url), 400)
    upload = {"file": ("alice.txt", "\n".join(gutenberg_body(ALICE)[:300]).encode())}
    extra = api.post("/api/match", files=upload, data={"note": "x"})
    assert "unknown form field 'note'" in refused(extra, 400)
    assert api.post("/api/match", files=upload).status_code == 200


def test_not_blank_is_what_str_split_keeps() -> None:
    """The document's NOT_BLANK refuses exactly the characters str.split() splits at (a lone
    U+001E passed a backslash-S pattern and was refused as an empty query)."""
    pattern = re.compile(NOT_BLANK)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert bool(pattern.fullmatch(char)) is not char.isspace(), hex(code)
