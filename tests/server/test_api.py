"""The HTTP API (`bookdup serve`) over a real node: paths, answers, refusals, no leaks."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from fastapi.testclient import TestClient

import query.match
from bookdup.cluster import cluster_id
from query.context import ReadSide
from query.match import book_from_text, match
from server.app import create_app, public
from store.connection import ConnectionSettings, make_client
from tests.fixtures_books import gutenberg_body, paginate
from tests.server.conftest import ALICE, ALICE_DE, ALICE_RACKHAM, BOOKS, TOM, TOM_PART1, WALDEN

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LOCAL = "http://127.0.0.1:8000"  # a loopback Host: the server refuses others


@pytest.fixture(scope="module")
def api(served) -> TestClient:
    return TestClient(
        create_app(served[1], max_body=2_000_000),
        base_url=LOCAL,
        raise_server_exceptions=False,
    )


def error_of(response) -> str:
    body = response.json()
    assert set(body) == {"error"}, body
    assert "Traceback" not in response.text and 'File "' not in response.text
    return body["error"]


def test_search_collapses_and_pages_by_cluster(api) -> None:
    first = api.get("/api/search", params={"q": "Project Gutenberg", "per_page": 3}).json()
    # six books, four edition clusters: {Tom, Part 1}, {Alice, Rackham}, {Alice de}, {Walden}
    assert (first["total_books"], first["total_groups"], first["pages"]) == (6, 4, 2)
    second = api.get("/api/search?q=Project+Gutenberg&per_page=3&page=2").json()
    clusters = [h["edition_cluster"] for h in first["hits"] + second["hits"]]
    assert len(clusters) == len(set(clusters)) == 4
    sizes = {h["edition_cluster"]: h["cluster_size"] for h in first["hits"] + second["hits"]}
    assert sizes[cluster_id([TOM, TOM_PART1])] == 2 and sizes[cluster_id([WALDEN])] == 1
    works = api.get("/api/search?q=Alice&collapse=work").json()
    (alice,) = [h for h in works["hits"] if h["book_id"] in (ALICE, ALICE_RACKHAM, ALICE_DE)]
    assert alice["cluster_size"] == 3 and alice["languages"] == {"en": 2, "de": 1}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("q=", "empty"),
        ("q=%20%20", "empty"),
        ("q=alice&collapse=author", "collapse"),
        ("q=alice&page=0", "page"),
        ("q=alice&page=x", "page"),
        ("q=alice&per_page=1000", "per_page"),
        ("q=" + "a" * 600, "q"),
    ],
)
def test_search_refuses_bad_parameters_with_400(api, query: str, message: str) -> None:
    response = api.get(f"/api/search?{query}")
    assert response.status_code == 400
    assert message in error_of(response)


def test_related_by_path_and_404(api, served) -> None:
    response = api.get(f"/api/books/{TOM}/related")
    assert response.status_code == 200
    body = response.json()
    assert [g["relation"] for g in body["groups"]] == ["CONTIGUOUS_SUBSET"]
    (part,) = body["groups"][0]["books"]
    assert (part["book_id"], part["direction"]) == (TOM_PART1, "other_in_this")
    assert part["direction_text"] == "the other book is contained in this one"  # the page's words
    # what the page shows, and nothing of the server's files or stored features
    assert "source" not in body["book"] and "features" not in body["book"]
    assert "/work/" not in response.text

    missing = api.get("/api/books/no-such-book/related")
    assert missing.status_code == 404 and "no-such-book" in error_of(missing)
    # an id of another bookdup index (a run) is not a book: only the books index is read
    runs = served[1].client.search(index=served[0].runs, size=1)["hits"]["hits"]
    assert api.get(f"/api/books/{runs[0]['_id']}/related").status_code == 404


def test_explain_json_and_pictures(api) -> None:
    e = api.get("/api/explain", params={"a": TOM_PART1, "b": TOM}).json()
    assert (e["relation"], e["direction"]) == ("CONTIGUOUS_SUBSET", "this_in_other")
    assert e["verdict"].startswith("A is contained in B: it is pages") and e["decision"]
    png = api.get("/api/explain/plot", params={"a": TOM_PART1, "b": TOM, "format": "png"})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(PNG_SIGNATURE)
    svg = api.get("/api/explain/plot", params={"a": TOM_PART1, "b": TOM, "format": "svg"})
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert ET.fromstring(svg.content).tag == "{http://www.w3.org/2000/svg}svg"

    assert api.get(f"/api/explain?a={TOM}&b=nope").status_code == 404
    assert api.get(f"/api/explain?a={TOM}").status_code == 400
    assert api.get(f"/api/explain?a={TOM}&b={TOM}").status_code == 400
    bad = api.get(f"/api/explain/plot?a={TOM}&b={TOM_PART1}&format=gif")
    assert bad.status_code == 400 and "format" in error_of(bad)


def test_match_text_json_and_file(api) -> None:
    stave = "\n".join(gutenberg_body(TOM)[:1500])
    as_text = api.post("/api/match", content=stave.encode(), headers={"content-type": "text/plain"})
    assert as_text.status_code == 200
    found = {r["book_id"]: r for r in as_text.json()["relations"]}
    assert found[TOM]["relation"] == "CONTIGUOUS_SUBSET"
    assert found[TOM]["direction"] == "this_in_other"
    assert as_text.json()["book"]["edition_cluster"] == cluster_id([TOM, TOM_PART1])

    as_json = api.post("/api/match", json={"text": stave, "title": "A stave"}).json()
    assert as_json["book"]["title"] == "A stave" and TOM in {
        r["book_id"] for r in as_json["relations"]
    }

    pages = "\f".join(paginate(gutenberg_body(TOM)[:1500], 30))
    upload = api.post("/api/match", files={"file": ("../../etc/passwd.txt", pages.encode())})
    assert upload.status_code == 200
    assert upload.json()["book"]["book_id"] == "passwd"  # the name's path is dropped
    assert TOM in {r["book_id"] for r in upload.json()["relations"]}


def test_match_computes_in_worker_processes_with_the_same_answer(api, served, monkeypatch) -> None:
    """Feature extraction and verification of a match run in the server's worker processes
    (issue 30: out of its GIL), and answer what the same match computed in-process does (the
    classification stays in the server: it asks the index about shared text at the books'
    edges, as the dedup job's does)."""
    texts = {
        "edition": "\n".join(gutenberg_body(TOM)[:1500]),
        "translation": "\n".join(gutenberg_body(ALICE)[:1200]),
    }
    here = {k: public(match(served[1], book_from_text(t))) for k, t in texts.items()}
    assert TOM in {r["book_id"] for r in here["edition"]["relations"]}
    assert here["translation"]["counts"].get("TRANSLATION")  # the worker's lexicons are used

    def not_here(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("computed in the server's own process")

    # in this process (the server's), extraction and verification now fail: a worker's do not
    monkeypatch.setattr(query.match, "extract_features", not_here)
    monkeypatch.setattr(query.match, "verify_detached", not_here)
    for kind, text in texts.items():
        response = api.post(
            "/api/match", content=text.encode(), headers={"content-type": "text/plain"}
        )
        assert response.status_code == 200, response.text
        assert response.json() == json.loads(json.dumps(here[kind])), kind


def test_match_refuses_bad_bodies(api, served) -> None:
    cases = [
        (dict(content=b"{not json", headers={"content-type": "application/json"}), 400, "JSON"),
        (dict(json={"txt": "x"}), 400, "text"),
        (dict(json=["a"]), 400, "text"),
        (dict(content=b"few words", headers={"content-type": "text/plain"}), 400, "too short"),
        (dict(content=b"\xff\xfe" * 100, headers={"content-type": "text/plain"}), 400, "UTF-8"),
        (dict(content=b"<a/>", headers={"content-type": "application/xml"}), 400, "content type"),
        (dict(data={"other": "x"}, files={"x": ("a", b"b")}), 400, "file"),
    ]
    for kwargs, status, message in cases:
        response = api.post("/api/match", **kwargs)
        assert response.status_code == status, (kwargs, response.text)
        assert message in error_of(response)
    huge = api.post(
        "/api/match", content=b"word " * 500_000, headers={"content-type": "text/plain"}
    )
    assert huge.status_code == 413 and "over 2,000,000 bytes" in error_of(huge)
    assert api.get("/api/match").status_code == 405


def test_backend_failures_leak_no_url_credentials_or_trace(served) -> None:
    secret = "s3cr3t-pw"
    settings = ConnectionSettings(url=f"http://elastic:{secret}@127.0.0.1:1", timeout=2)
    dead = ReadSide(make_client(settings), served[0])
    client = TestClient(create_app(dead), base_url=LOCAL, raise_server_exceptions=False)
    # each waits out the read side's short retry budget (query.context.READ_RETRY_S)
    for path in ("/api/search?q=alice", f"/api/explain?a={TOM}&b={WALDEN}"):
        response = client.get(path)
        assert response.status_code == 503, path
        text = response.text
        assert secret not in text and "127.0.0.1:1" not in text and "elastic:" not in text
        assert "unavailable" in error_of(response)


def test_openapi_page_static_and_headers(api) -> None:
    spec = api.get("/openapi.json").json()
    assert {
        "/api/search",
        "/api/books/{book_id}/related",
        "/api/explain",
        "/api/explain/plot",
        "/api/match",
    } <= set(spec["paths"])
    assert set(spec["paths"]["/api/match"]) == {"post"}
    assert all(set(v) == {"get"} for k, v in spec["paths"].items() if k != "/api/match")
    page = api.get("/")
    assert page.status_code == 200 and 'id="search-form"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert api.get("/static/app.js").status_code == 200
    assert api.get("/docs").status_code == 404  # the docs page would load a CDN's scripts
    # no request names an index: an index parameter is ignored, not obeyed
    other = api.get("/api/search?q=Project+Gutenberg&index=bookdup-runs").json()
    assert other["total_books"] == len(BOOKS)
    assert json.dumps(other).count("book_id") >= 4


def test_match_honours_a_declared_charset(api) -> None:
    """Issue 26: a Latin-1 body declared as such is read, not refused as "not UTF-8"."""
    stave = "\n".join(gutenberg_body(TOM)[:1500]) + "\nGrüße aus Hannibal, Tom Sawyer déjà vu\n"
    stave = stave.encode("iso-8859-1", "replace").decode("iso-8859-1")  # no curly quotes
    utf8 = api.post(
        "/api/match", content=stave.encode(), headers={"content-type": "text/plain"}
    ).json()
    for declared in ("iso-8859-1", '"ISO-8859-1"', "latin1", "windows-1252"):
        latin = api.post(
            "/api/match",
            content=stave.encode("iso-8859-1"),
            headers={"content-type": f"text/plain; charset={declared}"},
        )
        assert latin.status_code == 200, (declared, latin.text)
        body = latin.json()
        assert body["book"]["n_words"] == utf8["book"]["n_words"]
        assert [(r["book_id"], r["relation"]) for r in body["relations"]] == [
            (r["book_id"], r["relation"]) for r in utf8["relations"]
        ]
    # the same Latin-1 bytes undeclared are still refused, with the way out named
    undeclared = api.post(
        "/api/match", content=stave.encode("iso-8859-1"), headers={"content-type": "text/plain"}
    )
    assert undeclared.status_code == 400 and "declare its charset" in error_of(undeclared)
    for unknown in ("klingon-8", "rot13"):  # no such codec; a codec that is no text encoding
        refused = api.post(
            "/api/match",
            content=stave.encode(),
            headers={"content-type": f"text/plain; charset={unknown}"},
        )
        assert refused.status_code == 415, refused.text
        assert f"unsupported charset '{unknown}'" in error_of(refused)


def test_a_page_past_the_last_one_is_a_400(api) -> None:
    """Issue 26: the README promises 400 for a page out of range, past the last one too."""
    first = api.get("/api/search", params={"q": "Project Gutenberg", "per_page": 3}).json()
    assert first["pages"] == 2
    last = api.get("/api/search", params={"q": "Project Gutenberg", "per_page": 3, "page": 2})
    assert last.status_code == 200 and last.json()["hits"]
    past = api.get("/api/search", params={"q": "Project Gutenberg", "per_page": 3, "page": 3})
    assert past.status_code == 400
    assert "page 3 is past the last page" in error_of(past) and "2 pages" in error_of(past)
    # no hits at all: page 1 is an empty answer, page 2 is past the end
    nothing = api.get("/api/search", params={"q": "zebracorn"})
    assert nothing.status_code == 200 and nothing.json()["hits"] == []
    assert api.get("/api/search", params={"q": "zebracorn", "page": 2}).status_code == 400


def test_match_of_an_indexed_file_names_it_and_leaves_it_out(api, gutenberg) -> None:
    """Issue 26: the same text as an indexed book is "already indexed as" it, and the book is
    not among its own related books (its part is)."""
    data = (gutenberg / f"{TOM}.txt").read_bytes()
    response = api.post("/api/match", files={"file": ("my-scan.txt", data)})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["book"]["indexed"], body["book"]["indexed_as"]) == (True, TOM)
    assert body["book"]["edition_cluster"] == cluster_id([TOM, TOM_PART1])
    listed = [r["book_id"] for r in body["relations"]]
    assert TOM not in listed and TOM_PART1 in listed
