"""A cluster that fails in the middle of a command: one line, exit code 1, no traceback."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from bookdup_cli.main import cli
from store.connection import ConnectionSettings


def test_a_failing_index_ends_a_command_with_one_line(es_client, index_names) -> None:
    """The books index closed under the job (a real 400 from the node, after connecting)."""
    concrete = next(iter(es_client.indices.get_alias(name=index_names.books).body))
    es_client.indices.close(index=concrete)
    try:
        url = ConnectionSettings.from_env().url
        result = CliRunner().invoke(
            cli, ["--es-url", url, "--index-prefix", index_names.prefix, "dedup"]
        )
    finally:
        es_client.indices.open(index=concrete)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1 and "answered 400" in errors[0]
    assert "a rerun resumes" in errors[0]
    assert "Traceback" not in result.output


def test_dedup_refuses_fewer_than_one_worker() -> None:
    """``--workers`` is checked before any node is reached (1 = verify in-process)."""
    result = CliRunner().invoke(cli, ["--es-url", "http://127.0.0.1:1", "dedup", "--workers", "0"])
    assert result.exit_code == 2 and "--workers" in result.output


@pytest.mark.parametrize(
    ("prefix", "why"),
    [("MyBooks", "lowercase"), ("my books", "' '"), ("_books", "start with"), ("a/b", "'/'")],
)
def test_a_prefix_elasticsearch_refuses_is_told_before_any_node(prefix: str, why: str) -> None:
    """A prefix no index name may start with: exit 2 naming the option and the rule, where the
    node would have answered 400 in the middle of the job (the port is closed: no node)."""
    result = CliRunner().invoke(
        cli, ["--es-url", "http://127.0.0.1:1", "--index-prefix", prefix, "dedup"]
    )
    assert result.exit_code == 2
    assert "--index-prefix" in result.output and why in result.output


def test_the_prefix_in_the_environment_is_checked_too(monkeypatch) -> None:
    monkeypatch.setenv("BOOKDUP_INDEX_PREFIX", "Books")
    result = CliRunner().invoke(cli, ["--es-url", "http://127.0.0.1:1", "status"])
    assert result.exit_code == 2 and "lowercase" in result.output


@pytest.mark.parametrize("command", [["dedup"], ["index", "some/books"]])
def test_dask_without_distributed_says_what_to_install(monkeypatch, command) -> None:
    """``--scheduler`` without the 'dask' extra: one line naming it, before any node is reached
    (dedup verifies on Dask, index extracts on Dask)."""
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    result = CliRunner().invoke(
        cli, ["--es-url", "http://127.0.0.1:1", *command, "--scheduler", "local"]
    )
    assert result.exit_code == 1
    assert "pip install 'bookdup[dask]'" in result.output
    assert "Traceback" not in result.output
