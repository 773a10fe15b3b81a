"""Bad configuration gives one line that says what to do; the node restarting mid-bulk loses
nothing."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from bookdup_cli.main import cli
from store.bulk import bulk_write
from store.connection import ConnectionSettings, ElasticsearchUnavailable, connect


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


def test_bulk_survives_a_node_restart(es_client, index_names):
    """Restart the real node during a bulk: every document lands exactly once."""
    from devnode import localnode

    cfg = localnode.LocalNodeConfig.from_env()
    if not cfg.pidfile.exists() or cfg.url.rstrip(
        "/"
    ) != es_client.transport.node_pool.get().base_url.rstrip("/"):
        pytest.skip("the test node is not a local node this process can restart")
    n = 3000
    started = threading.Event()

    def actions():
        for i in range(n):
            if i == 200:
                started.set()
                time.sleep(0.5)  # let the restart begin while chunks are still pending
            yield {"_index": index_names.runs, "_id": f"r{i}", "_source": {"run_id": f"r{i}"}}

    restarter = threading.Thread(target=lambda: (started.wait(), localnode.restart(cfg)))
    restarter.start()
    report = bulk_write(es_client, actions(), chunk_size=50, max_seconds=240)
    restarter.join()
    assert report.failures == []
    assert report.ok == n
    es_client.indices.refresh(index=index_names.runs)
    assert es_client.count(index=index_names.runs)["count"] == n
