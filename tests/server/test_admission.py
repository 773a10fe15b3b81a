"""Issue 30's admission control and deadlines against a real node: a full server answers 429
with ``Retry-After`` (never an unbounded queue), a slow node 504 within ``--request-timeout``,
a node that is down 503 within 10 s, and normal requests are unaffected."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from query.context import ReadSide
from server.admission import Admission, Busy, Gate, Limits
from server.app import create_app
from server.limits import SECURITY_HEADERS, Guard
from store.connection import ConnectionSettings, serving_client
from store.schema import IndexNames
from tests.server.conftest import ALICE, ALICE_DE, TOM
from tests.slow_proxy import SlowProxy

LOCAL = "http://127.0.0.1:8000"
SEARCH = "/api/search?q=Alice"


@pytest.fixture
def proxy(es_settings) -> Iterator[SlowProxy]:
    slow = SlowProxy(es_settings.url)
    yield slow
    slow.close()


def api_over(url: str, names: IndexNames, limits: Limits) -> TestClient:
    """The app over a node at ``url`` through the client ``bookdup serve`` builds."""
    client = serving_client(ConnectionSettings(url=url), limits.request_timeout)
    app = create_app(ReadSide(client, names), limits=limits)
    return TestClient(app, base_url=LOCAL, raise_server_exceptions=False)


def gate_of(api: TestClient, name: str = "reads") -> Gate:
    return getattr(api.app.app.state.admission, name)  # type: ignore[attr-defined]


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def in_background(api: TestClient, path: str) -> tuple[threading.Thread, list]:
    answers: list = []
    thread = threading.Thread(target=lambda: answers.append(api.get(path)), daemon=True)
    thread.start()
    return thread, answers


def test_a_full_server_answers_429_with_retry_after(served, proxy) -> None:
    # a long deadline: the admitted slow search (3 s per call to the node) must succeed
    api = api_over(proxy.url, served[0], Limits(max_inflight=1, queue_wait=0.2, request_timeout=30))
    assert api.get(SEARCH).status_code == 200  # warm: the client's connection is open
    proxy.delay = 3.0
    slow, answers = in_background(api, SEARCH)
    wait_until(lambda: gate_of(api).holding == 1)  # the slow search holds the only place
    started = time.monotonic()
    refused = api.get(SEARCH)
    assert time.monotonic() - started < 2.5  # waited queue_wait, not the slow search's 3 s
    assert refused.status_code == 429, refused.text
    assert refused.headers["Retry-After"] == "1"
    assert set(refused.json()) == {"error"} and "busy" in refused.json()["error"]
    assert all(refused.headers[h] == v for h, v in SECURITY_HEADERS.items())
    slow.join(timeout=30)
    assert answers and answers[0].status_code == 200  # the admitted one was served
    proxy.delay = 0.0
    assert api.get(SEARCH).status_code == 200  # its place was given back


def test_a_request_waits_briefly_for_a_place_and_heavy_work_leaves_reads_alone(
    served, proxy
) -> None:
    api = api_over(proxy.url, served[0], Limits(max_inflight=1, max_heavy=1, queue_wait=3.0))
    assert api.get(SEARCH).status_code == 200
    proxy.delay = 0.6
    first, first_answer = in_background(api, SEARCH)
    wait_until(lambda: gate_of(api).holding == 1)
    assert api.get(SEARCH).status_code == 200  # waited under queue_wait for the place
    first.join(timeout=10)
    assert first_answer[0].status_code == 200
    # a slow explain holds the only heavy place: a search still finds one of its own
    heavy, heavy_answer = in_background(api, f"/api/explain?a={ALICE}&b={ALICE_DE}")
    wait_until(lambda: gate_of(api, "heavy").holding == 1)
    proxy.delay = 0.0
    assert api.get(SEARCH).status_code == 200
    heavy.join(timeout=30)
    assert heavy_answer[0].status_code == 200


def test_a_slow_node_answers_504_within_the_request_timeout(served, proxy) -> None:
    api = api_over(proxy.url, served[0], Limits(request_timeout=1.0))
    assert api.get(f"/api/books/{TOM}/related").status_code == 200
    proxy.delay = 4.0
    for path in (SEARCH, f"/api/books/{TOM}/related"):
        started = time.monotonic()
        answer = api.get(path)
        assert time.monotonic() - started < 3.5, path  # the node would take 4 s
        assert answer.status_code == 504, answer.text
        assert answer.json() == {"error": "the search backend did not answer in time"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_node_that_is_down_answers_503_within_10_s_on_every_endpoint() -> None:
    # default request timeout; room for the three heavy endpoints at once
    api = api_over(
        f"http://127.0.0.1:{free_port()}", IndexNames(prefix="down"), Limits(max_heavy=3)
    )
    requests = {
        "search": lambda: api.get(SEARCH),
        "related": lambda: api.get(f"/api/books/{TOM}/related"),
        "explain": lambda: api.get(f"/api/explain?a={ALICE}&b={TOM}"),
        "plot": lambda: api.get(f"/api/explain/plot?a={ALICE}&b={TOM}"),
        "match": lambda: api.post(
            "/api/match", content="the rabbit hole " * 500, headers={"content-type": "text/plain"}
        ),
    }

    def timed(name: str) -> tuple[str, int, float]:
        started = time.monotonic()
        answer = requests[name]()
        return name, answer.status_code, time.monotonic() - started

    with ThreadPoolExecutor(len(requests)) as pool:
        results = list(pool.map(timed, requests))
    for name, status, seconds in results:
        assert status == 503, name
        assert seconds <= 10.0, (name, seconds)


def test_normal_requests_are_answered_as_without_a_proxy(served, proxy, es_client) -> None:
    direct = TestClient(create_app(served[1]), base_url=LOCAL)
    api = api_over(proxy.url, served[0], Limits())
    with ThreadPoolExecutor(8) as pool:  # as many as --max-inflight: none refused
        answers = list(pool.map(lambda _i: api.get(SEARCH), range(8)))
    assert [a.status_code for a in answers] == [200] * 8
    assert answers[0].json() == direct.get(SEARCH).json()


def test_the_queue_is_bounded_in_length_not_only_in_time() -> None:
    gate = Gate("reads", size=1, wait=5.0, max_waiting=1)
    release = threading.Event()
    holder = threading.Thread(target=gate.run, args=(release.wait,), daemon=True)
    holder.start()
    time.sleep(0.1)
    waiter = threading.Thread(target=gate.run, args=(lambda: None,), daemon=True)
    waiter.start()  # the one allowed to wait
    time.sleep(0.1)
    started = time.monotonic()
    with pytest.raises(Busy):
        gate.run(lambda: None)
    assert time.monotonic() - started < 0.5  # refused at once, not after the 5-second wait
    release.set()
    holder.join(timeout=5)
    waiter.join(timeout=5)
    assert gate.run(lambda: 42) == 42  # every place was given back


def test_bodies_held_at_once_stay_within_their_byte_budget() -> None:
    entered, release = threading.Event(), threading.Event()

    async def holding_app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        message = await receive()
        if message["body"].startswith(b"a"):  # the first request holds its body
            entered.set()
            while not release.is_set():
                await asyncio.sleep(0.02)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guard = Guard(holding_app, limit=1_000, bodies=1_500)
    first, second = (TestClient(guard, base_url=LOCAL) for _ in range(2))
    holder = threading.Thread(target=first.post, args=("/x",), kwargs={"content": b"a" * 1_000})
    holder.start()
    assert entered.wait(5)
    refused = second.post("/x", content=b"b" * 1_000)  # 2,000 bytes held would pass 1,500
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
    assert set(refused.json()) == {"error"}
    assert all(refused.headers[h] == v for h, v in SECURITY_HEADERS.items())
    assert second.post("/x", content=b"c" * 400).status_code == 200  # fits beside the first
    release.set()
    holder.join(timeout=5)
    assert guard.budget.held == 0  # every body's bytes were given back
    assert second.post("/x", content=b"d" * 1_000).status_code == 200


def test_a_full_gate_refuses_on_the_event_loop_without_a_thread() -> None:
    gate = Gate("heavy", size=1, wait=5.0, max_waiting=1)
    release = threading.Event()

    async def scenario() -> None:
        holder = asyncio.ensure_future(gate.run_async(release.wait))
        waiter = asyncio.ensure_future(gate.run_async(lambda: 7))
        for _ in range(100):  # both given their thread: one holds the place, one waits
            if gate.holding == 1 and gate.full():
                break
            await asyncio.sleep(0.01)
        assert gate.full()
        started = time.monotonic()
        with pytest.raises(Busy):
            await gate.run_async(lambda: None)
        assert time.monotonic() - started < 0.1  # refused at once, no thread taken
        release.set()
        assert await waiter == 7 and await holder is True

    asyncio.run(scenario())
    assert not gate.full() and gate.holding == 0


def test_a_match_is_refused_before_its_body_is_read_while_heavy_work_is_full() -> None:
    called: list[bytes] = []
    full = [True]

    async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        called.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def early(scope) -> str | None:  # type: ignore[no-untyped-def]
        return "the server is busy (heavy): retry in 1 s" if full[0] else None

    api = TestClient(Guard(app, limit=200_000, refuse_early=early), base_url=LOCAL)
    refused = api.post("/api/match", content=b"w " * 50_000)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
    assert refused.json() == {"error": "the server is busy (heavy): retry in 1 s"}
    assert all(refused.headers[h] == v for h, v in SECURITY_HEADERS.items())
    assert called == []  # the app never saw it
    full[0] = False
    assert api.post("/api/match", content=b"w " * 10).status_code == 200


def test_admission_refuses_early_only_heavy_requests_and_only_when_full() -> None:
    admission = Admission(Limits(max_heavy=1))
    match = {"method": "POST", "path": "/api/match"}
    plot = {"method": "GET", "path": "/api/explain/plot"}
    assert admission.refuse_early(match) is None and admission.refuse_early(plot) is None
    admission.heavy._claimed = admission.heavy.size + admission.heavy.max_waiting
    assert "busy (heavy)" in (admission.refuse_early(match) or "")
    assert "busy (heavy)" in (admission.refuse_early(plot) or "")
    assert admission.refuse_early({"method": "GET", "path": "/api/search"}) is None
    assert admission.refuse_early({"method": "GET", "path": "/api/match"}) is None  # a 405
