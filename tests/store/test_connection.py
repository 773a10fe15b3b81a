"""Bad configuration gives one line that says what to do; the node restarting mid-bulk loses
nothing."""

from __future__ import annotations

import functools
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from elasticsearch import Elasticsearch

from bookdup_cli.main import cli
from store.bulk import bulk_write
from store.connection import ConnectionSettings, ElasticsearchUnavailable, connect, missing_ok


class _Handler(http.server.BaseHTTPRequestHandler):
    status = 401
    product = True

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        body = b'{"error":{"type":"security_exception","reason":"missing authentication"}}'
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        if self.product:
            self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass  # keep the test output clean


@pytest.fixture
def fake_server(request) -> Iterator[str]:
    """A local HTTP server that answers like a secured cluster (401) or like something else."""
    status, product = request.param
    handler = type("H", (_Handler,), {"status": status, "product": product})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _HtmlHandler(http.server.BaseHTTPRequestHandler):
    """A web server that is not Elasticsearch: an HTML page of several lines, any status."""

    status = 200

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        body = b"<!DOCTYPE html>\n<html>\n<body>\n<h1>It works</h1>\n</body>\n</html>\n"
        self.send_response(self.status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _QuietFileHandler(http.server.SimpleHTTPRequestHandler):
    """What `python -m http.server` runs, without its request log (CliRunner captures stderr)."""

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web_server(request, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A real local web server that is not Elasticsearch, and the status it answers with:
    ``python -m http.server`` over an empty folder (404 pages), or HTML pages with a status."""
    if request.param == "http.server":
        handler = functools.partial(_QuietFileHandler, directory=str(tmp_path))
        expected = 404
    else:
        handler = type("H", (_HtmlHandler,), {"status": request.param})
        expected = request.param
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", expected
    server.shutdown()
    server.server_close()


def _assert_names_the_server_not_its_page(message: str, url: str, status: int) -> None:
    assert "\n" not in message
    assert f"the server at {url} is not Elasticsearch (it answered HTTP {status}, text/html)" in (
        message
    )
    assert "<" not in message and "It works" not in message and "Error response" not in message


@pytest.mark.parametrize("web_server", ["http.server", 404, 200, 500], indirect=True)
def test_a_web_server_is_named_in_one_line_without_its_page(web_server):
    url, status = web_server
    with pytest.raises(ElasticsearchUnavailable) as err:
        connect(ConnectionSettings(url=url, timeout=5))
    _assert_names_the_server_not_its_page(str(err.value), url, status)


@pytest.mark.parametrize("web_server", ["http.server", 404], indirect=True)
def test_cli_against_a_web_server_exits_1_with_one_line(web_server):
    url, status = web_server
    result = CliRunner().invoke(cli, ["--es-url", url, "--timeout", "5", "status"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    _assert_names_the_server_not_its_page(lines[0], url, status)


def test_unreachable_node_is_one_line_with_remedy():
    with pytest.raises(ElasticsearchUnavailable) as err:
        connect(ConnectionSettings(url="http://127.0.0.1:1", timeout=2))
    message = str(err.value)
    assert "\n" not in message
    assert "cannot reach Elasticsearch at http://127.0.0.1:1" in message
    assert "bookdup es up" in message


@pytest.mark.parametrize("fake_server", [(401, True)], indirect=True)
def test_wrong_credentials_name_the_settings(fake_server):
    with pytest.raises(ElasticsearchUnavailable) as err:
        connect(ConnectionSettings(url=fake_server, username="u", password="sekrit", timeout=2))
    message = str(err.value)
    assert "401" in message and "ELASTICSEARCH_API_KEY" in message
    assert "sekrit" not in message


@pytest.mark.parametrize("fake_server", [(200, False)], indirect=True)
def test_not_elasticsearch_is_detected(fake_server):
    with pytest.raises(ElasticsearchUnavailable) as err:
        connect(ConnectionSettings(url=fake_server, timeout=2))
    assert "not Elasticsearch" in str(err.value)


def test_secrets_never_in_repr_or_safe_url():
    settings = ConnectionSettings(url="https://user:pw@host:9200", api_key="KEY", password="pw")
    assert "KEY" not in repr(settings) and "pw" not in repr(settings).replace("password", "")
    assert settings.safe_url == "https://host:9200"


def test_cli_exit_code_and_single_line_for_down_node():
    result = CliRunner().invoke(cli, ["--es-url", "http://127.0.0.1:1", "--timeout", "2", "status"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "bookdup es up" in lines[0]


@pytest.mark.es  # starts a node of its own
def test_bulk_survives_a_node_restart():
    """Restart a real node during a bulk: every document lands exactly once.

    A private node: restarting the suite's shared node would fail whatever the other pytest
    workers are doing with it at that moment (one CI run lost a candidate search that way)."""
    from devnode import localnode
    from store.schema import IndexNames, ensure_indices
    from tests.private_node import private_node

    with private_node() as cfg:
        client = connect(ConnectionSettings(url=cfg.url))
        names = IndexNames(prefix="restart")
        ensure_indices(client, names)
        n = 3000
        started = threading.Event()

        def actions():
            for i in range(n):
                if i == 200:
                    started.set()
                    time.sleep(0.5)  # let the restart begin while chunks are still pending
                yield {"_index": names.runs, "_id": f"r{i}", "_source": {"run_id": f"r{i}"}}

        restarter = threading.Thread(target=lambda: (started.wait(), localnode.restart(cfg)))
        restarter.start()
        report = bulk_write(client, actions(), chunk_size=50, max_seconds=240)
        restarter.join()
        assert report.failures == []
        assert report.ok == n
        client.indices.refresh(index=names.runs)
        assert client.count(index=names.runs)["count"] == n


def test_the_404_tolerant_client_is_made_once_per_client_and_shares_its_transport():
    """``missing_ok``: one ``options(ignore_status=404)`` client per client, not one per read;
    another client gets its own."""
    one, other = Elasticsearch("http://127.0.0.1:9"), Elasticsearch("http://127.0.0.1:9")
    tolerant = missing_ok(one)
    assert missing_ok(one) is tolerant and missing_ok(other) is not tolerant
    assert tolerant._ignore_status == (404,) and tolerant.transport is one.transport
    assert one._ignore_status != (404,)  # the client itself still raises on a 404
