"""Secured clusters: TLS with a CA file, API-key and basic auth, end to end through the CLI.

The integ-test distribution of Elasticsearch has no security module, so the test node speaks
plain HTTP and asks for nothing. Here Debian's nginx (``tests/tls_proxy.py``) terminates TLS in
front of it, with a CA and certificate made for the test, and demands an API key on one port and
basic auth on another, answering 401 like Elasticsearch otherwise. What this proves: bookdup's
client verifies the server against a CA file, sends the key or the user and password, keeps
Elasticsearch's product check, explains a refused credential or an untrusted certificate in one
line, and never shows a secret. What it does not prove: anything of Elasticsearch's own security
(its TLS and realms, roles and index privileges, API-key creation and expiry, mutual TLS,
certificate fingerprints), since the node never sees a credential (README, "Secured clusters").
"""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from elasticsearch import AuthenticationException, Elasticsearch

from bookdup_cli.main import cli
from store.connection import ConnectionSettings, ElasticsearchUnavailable, connect
from store.schema import IndexNames
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt
from tests.tls_proxy import NGINX, Credentials, TlsProxy, new_credentials, start_proxy

pytestmark = pytest.mark.es  # starts Elasticsearch nodes of its own

#: Unset for every CLI call, so the developer's or CI's variables never mix in.
ES_VARIABLES = (
    "ELASTICSEARCH_URL",
    "ELASTICSEARCH_API_KEY",
    "ELASTICSEARCH_USERNAME",
    "ELASTICSEARCH_PASSWORD",
    "ELASTICSEARCH_CA_CERTS",
    "ELASTICSEARCH_TIMEOUT",
)


@pytest.fixture(scope="module")
def creds() -> Credentials:
    return new_credentials()


@pytest.fixture(scope="module")
def proxy(es_client, es_settings, creds, tmp_path_factory) -> Iterator[TlsProxy]:
    """nginx in front of the test node (``ELASTICSEARCH_URL``), stopped at the end."""
    if not Path(NGINX).exists():
        pytest.fail(
            "nginx is missing: run `bash scripts/install_nginx.sh` (Debian package nginx)",
            pytrace=False,
        )
    running = start_proxy(tmp_path_factory.mktemp("tls-proxy"), es_settings.url, creds)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Two paginations of one text and an unrelated book: one DIFFERENT_PAGINATION pair."""
    root = tmp_path_factory.mktemp("secured-corpus")
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 4000, 2000)
    write_txt(root / "pride.txt", paginate(lines, 40), title="Pride and Prejudice")
    write_txt(root / "pride-reset.txt", paginate(lines, 29), title="Pride and Prejudice")
    walden = word_slice(gutenberg_body("walden-en-pg205"), 4000, 2000)
    write_txt(root / "walden.txt", paginate(walden, 40), title="Walden")
    return root


def run_cli(args: list[str], env: dict[str, str] | None = None) -> Result:
    """``bookdup ARGS`` in process, with only the ELASTICSEARCH_* variables given in ``env``."""
    clean: dict[str, str | None] = dict.fromkeys(ES_VARIABLES)
    clean.update(env or {})
    return CliRunner().invoke(cli, args, env=clean)


def everything_said(result: Result) -> str:
    """stdout, stderr and any exception other than click's exit."""
    raised = "" if isinstance(result.exception, SystemExit | None) else repr(result.exception)
    return f"{result.stdout}\n{result.stderr}\n{raised}"


def assert_no_secret(text: str, secrets: dict[str, str], where: str) -> None:
    for name, secret in secrets.items():
        if secret in text:  # pytest.fail, not assert: the failure must not print the secret
            pytest.fail(f"the {name} appears in {where}", pytrace=False)


def assert_one_line_error(result: Result, *expected: str) -> str:
    """Exit code 1 and one line (click's ``Error: ...``), no traceback."""
    assert result.exit_code == 1, everything_said(result)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in everything_said(result).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    for part in expected:
        assert part in lines[0], lines[0]
    return lines[0]


def log_text(caplog: pytest.LogCaptureFixture) -> str:
    """Every captured record: formatted, with its arguments, exceptions and stack."""
    parts = [caplog.text]
    for record in caplog.records:
        parts += [record.getMessage(), repr(record.args), str(record.exc_text or "")]
    return "\n".join(parts)


def stored_documents(client: Elasticsearch, names: IndexNames) -> str:
    """Every document bookdup wrote under this prefix (books, relations, runs, locks), read
    straight from the node, as one JSON text."""
    client.indices.refresh(index=f"{names.prefix}-*")
    hits = client.search(index=f"{names.prefix}-*", size=1000, query={"match_all": {}})
    docs = hits["hits"]["hits"]
    assert docs, "nothing was written"
    return json.dumps(docs, ensure_ascii=False)


# --- the proxy itself ----------------------------------------------------------------------


def test_proxy_demands_credentials_and_keeps_the_product_header(proxy, creds) -> None:
    """Through the proxy: no credentials, 401 (Elasticsearch's JSON); the key or the user and
    password, the node's answer with its ``X-Elastic-Product`` header, so the client's product
    check passes; with that header hidden, the product check refuses the server."""
    ca = str(proxy.ca_file)
    bare = Elasticsearch(proxy.url(proxy.api_key_port), ca_certs=ca, max_retries=0)
    with pytest.raises(AuthenticationException) as refused:
        bare.cluster.health()
    assert refused.value.meta.status == 401
    assert refused.value.body["error"]["type"] == "security_exception"

    for settings in (
        ConnectionSettings(url=proxy.url(proxy.api_key_port), ca_certs=ca, api_key=creds.api_key),
        ConnectionSettings(
            url=proxy.url(proxy.basic_port),
            ca_certs=ca,
            username=creds.username,
            password=creds.password,
        ),
    ):
        client = connect(settings)
        answer = client.nodes.info(node_id="_local", metric="_none")
        assert answer.meta.headers.get("X-Elastic-Product") == "Elasticsearch"
        assert client.cluster.health()["status"] in {"green", "yellow"}

    # the key on the basic-auth port, the password on the key port: both refused
    with pytest.raises(ElasticsearchUnavailable, match="401"):
        connect(
            ConnectionSettings(url=proxy.url(proxy.basic_port), ca_certs=ca, api_key=creds.api_key)
        )
    with pytest.raises(ElasticsearchUnavailable, match="401"):
        connect(
            ConnectionSettings(
                url=proxy.url(proxy.api_key_port),
                ca_certs=ca,
                username=creds.username,
                password=creds.password,
            )
        )
    unbranded = ConnectionSettings(
        url=proxy.url(proxy.unbranded_port), ca_certs=ca, api_key=creds.api_key
    )
    with pytest.raises(ElasticsearchUnavailable, match="is not Elasticsearch"):
        connect(unbranded)


# --- the CLI end to end --------------------------------------------------------------------


def _auth_modes(proxy: TlsProxy, creds: Credentials) -> dict[str, tuple[list[str], dict]]:
    """Flags for the API key, environment variables for basic auth: both ways of configuring."""
    ca = str(proxy.ca_file)
    return {
        "api-key-flags": (
            [
                "--es-url",
                proxy.url(proxy.api_key_port),
                "--ca-certs",
                ca,
                "--api-key",
                creds.api_key,
            ],
            {},
        ),
        "basic-env": (
            [],
            {
                "ELASTICSEARCH_URL": proxy.url(proxy.basic_port),
                "ELASTICSEARCH_CA_CERTS": ca,
                "ELASTICSEARCH_USERNAME": creds.username,
                "ELASTICSEARCH_PASSWORD": creds.password,
            },
        ),
    }


@pytest.mark.parametrize("mode", ["api-key-flags", "basic-env"])
def test_cli_end_to_end_through_tls_and_auth(
    mode: str, proxy, creds, corpus, index_names, es_client, caplog
) -> None:
    """index, dedup --json, status, search (table and --json) through the proxy; then no
    secret in anything they printed, logged (DEBUG, the client's request logs included),
    stored in the node (books, relations, run records) or in nginx's logs."""
    caplog.set_level(logging.DEBUG)
    # an earlier CLI run in this process may have quietened the client's logger (no -v)
    caplog.set_level(logging.DEBUG, logger="elastic_transport")
    conn_args, env = _auth_modes(proxy, creds)[mode]
    base = [*conn_args, "-v", "--timeout", "60", "--index-prefix", index_names.prefix]
    said: list[str] = []

    def bookdup(*args: str) -> Result:
        result = run_cli([*base, *args], env)
        said.append(everything_said(result))
        assert result.exit_code == 0, everything_said(result)
        return result

    result = bookdup("index", "--workers", "2", str(corpus))
    assert "3 indexed, 0 unchanged, 0 failed" in result.stdout
    summary = json.loads(bookdup("dedup", "--json").stdout)
    assert summary["relations"] == {"DIFFERENT_PAGINATION": 1}
    assert (summary["edition_clusters"], summary["work_clusters"]) == (2, 2)
    out = bookdup("status").stdout
    assert f"{index_names.books}: 3 documents" in out
    assert f"{index_names.relations}: 1 documents" in out
    assert out.count("finished") == 2
    hits = bookdup("search", "Prejudice").stdout.splitlines()
    assert len(hits) == 1 and "(2 in cluster)" in hits[0]
    found = json.loads(bookdup("search", "Prejudice", "--collapse", "none", "--json").stdout)
    assert sorted(r["book_id"] for r in found) == ["pride", "pride-reset"]
    # and once as a real process: its own stderr logging (-v: INFO), warnings, exit path
    process = subprocess.run(
        [sys.executable, "-c", "from bookdup_cli.main import cli; cli()", *base, "status"],
        env={**{k: v for k, v in os.environ.items() if k not in ES_VARIABLES}, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    assert f"{index_names.books}: 3 documents" in process.stdout
    assert "[status:200" in process.stderr  # the client's request log really was on
    said += [process.stdout, process.stderr]

    # the jobs went through the proxy: nginx logged the writes and reads, all authorized
    access = proxy.access_log.read_text()
    assert '/_bulk" 200' in access and '/_msearch" 200' in access
    assert f'"PUT /{index_names.runs}/_doc/{summary["run_id"]}" 200' in access

    secrets = creds.secrets()
    assert_no_secret("\n".join(said), secrets, "the CLI's output")
    assert any(r.name.startswith("elastic_transport") for r in caplog.records)
    assert_no_secret(log_text(caplog), secrets, "the log records")
    assert_no_secret(stored_documents(es_client, index_names), secrets, "the stored documents")
    assert_no_secret(proxy.logs(), secrets, "nginx's access and error logs")


# --- refused credentials and untrusted certificates: one line, no secret -----------------------


def test_wrong_credentials_end_in_one_line_without_the_secret(proxy, creds, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    ca = str(proxy.ca_file)
    wrong_key = base64.b64encode(b"wrongid:" + os.urandom(8).hex().encode()).decode()
    wrong_password = "not-" + os.urandom(8).hex()
    shown = {
        **creds.secrets(),
        "wrong key": wrong_key,
        "wrong password": wrong_password,
        "wrong basic token": base64.b64encode(
            f"{creds.username}:{wrong_password}".encode()
        ).decode(),
    }
    key_url = proxy.url(proxy.api_key_port)
    basic_url = proxy.url(proxy.basic_port)
    calls = [
        (["--es-url", key_url, "--ca-certs", ca, "--api-key", wrong_key, "status"], {}),
        (
            ["status"],
            {
                "ELASTICSEARCH_URL": basic_url,
                "ELASTICSEARCH_CA_CERTS": ca,
                "ELASTICSEARCH_USERNAME": creds.username,
                "ELASTICSEARCH_PASSWORD": wrong_password,
            },
        ),
        (["--es-url", key_url, "--ca-certs", ca, "dedup", "--json"], {}),  # no credentials
        (["--es-url", basic_url, "--ca-certs", ca, "--api-key", creds.api_key, "search", "x"], {}),
    ]
    for args, env in calls:
        result = run_cli(["-v", "--timeout", "20", *args], env)
        line = assert_one_line_error(result, "401", "rejected the credentials")
        assert line.startswith("Error: Elasticsearch at https://127.0.0.1:"), line
        assert_no_secret(everything_said(result), shown, f"`bookdup {args[-1]}`")
    assert_no_secret(log_text(caplog), shown, "the log records")
    assert_no_secret(proxy.logs(), shown, "nginx's logs")


def test_tls_errors_end_in_one_clear_line(proxy, creds, tmp_path) -> None:
    """No CA file: the system's trust store refuses the test CA; a CA file that is missing or
    is not a certificate; --ca-certs with an http:// URL: one line each, no traceback."""
    url = proxy.url(proxy.api_key_port)
    key = ["--api-key", creds.api_key, "--timeout", "20"]
    not_a_cert = tmp_path / "not-a-cert.pem"
    not_a_cert.write_text("hello\n")

    said = []
    result = run_cli(["--es-url", url, *key, "status"])
    said.append(everything_said(result))
    assert_one_line_error(
        result, "TLS", url, "certificate verify failed", "--ca-certs / ELASTICSEARCH_CA_CERTS"
    )
    for bad in (tmp_path / "missing.pem", not_a_cert):
        result = run_cli(["--es-url", url, "--ca-certs", str(bad), *key, "status"])
        said.append(everything_said(result))
        assert_one_line_error(result, "TLS", f"check the CA file {bad}")
    result = run_cli(["--es-url", "http://127.0.0.1:9", "--ca-certs", str(proxy.ca_file), "status"])
    said.append(everything_said(result))
    assert_one_line_error(result, "TLS options require scheme to be 'https'")
    assert_no_secret("\n".join(said) + proxy.logs(), creds.secrets(), "the TLS errors")


# --- a password written into the URL ------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:secret@host:9200", "https://host:9200"),
        ("https://user:secret@host:9200/prefix", "https://host:9200/prefix"),
        ("https://user:se@cr/et@host:9200", "https://host:9200"),  # '@' and '/' in the password
        ("http://user:secret@127.0.0.1:9200", "http://127.0.0.1:9200"),
        ("https://host:9200", "https://host:9200"),
    ],
)
def test_url_password_never_in_repr_or_safe_url(url: str, shown: str) -> None:
    settings = ConnectionSettings(url=url, api_key="KEY-secret", password="pw-secret")
    assert settings.safe_url == shown
    text = repr(settings) + str(settings) + settings.safe_url
    for secret in ("secret", "se@cr/et", "KEY-", "pw-"):
        assert secret not in text, text


def test_url_with_embedded_password_works_and_is_never_shown(proxy, creds) -> None:
    """``https://user:password@host`` is basic auth for the client: it works through the proxy,
    and neither the status output, a refusal, nor a URL the client cannot parse shows it."""
    ca = str(proxy.ca_file)
    embedded = f"https://{creds.username}:{creds.password}@127.0.0.1:{proxy.basic_port}"
    result = run_cli(["--es-url", embedded, "--ca-certs", ca, "status", "--runs", "1"])
    assert result.exit_code == 0, everything_said(result)
    assert_no_secret(everything_said(result), creds.secrets(), "status with a URL password")

    wrong = embedded.replace(creds.password, "x" + creds.password[::-1])
    result = run_cli(["--es-url", wrong, "--ca-certs", ca, "--timeout", "20", "status"])
    line = assert_one_line_error(result, "401", f"https://127.0.0.1:{proxy.basic_port}")
    assert creds.password[::-1] not in line and creds.username not in line

    unparsable = f"https://{creds.username}:{creds.password}@127.0.0.1:99999"
    result = run_cli(["--es-url", unparsable, "status"])
    line = assert_one_line_error(result, "cannot use https://127.0.0.1:99999")
    assert_no_secret(everything_said(result), creds.secrets(), "an unparsable URL's error")
    assert_no_secret(proxy.logs(), creds.secrets(), "nginx's logs")
