"""Shared fixtures. Tests that touch the index talk to a real Elasticsearch node.

The node comes from ELASTICSEARCH_URL (the README's test command starts one with
`bookdup es up`); if none answers, those tests fail loudly instead of being skipped, because a
green run that never touched Elasticsearch proves nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUTENBERG = (REPO / ".." / "shared" / "data" / "gutenberg").resolve()


@pytest.fixture(scope="session")
def gutenberg() -> Path:
    """The real books shipped beside the repository (../shared/data/gutenberg)."""
    if not (GUTENBERG / "manifest.jsonl").exists():
        pytest.skip(f"real data not found at {GUTENBERG}")
    return GUTENBERG


@pytest.fixture(scope="session")
def es_settings():
    from store.connection import ConnectionSettings

    return ConnectionSettings.from_env()


@pytest.fixture(scope="session")
def es_client(es_settings):
    from store.connection import ElasticsearchUnavailable, connect

    try:
        return connect(es_settings)
    except ElasticsearchUnavailable as exc:
        pytest.fail(f"{exc} (run `bookdup es up` first)", pytrace=False)


@pytest.fixture(scope="session")
def es_url_args(es_client, es_settings) -> list[str]:
    """CLI arguments that point `bookdup` at the test node."""
    return ["--es-url", es_settings.url]


@pytest.fixture
def index_names(es_client) -> Iterator[object]:
    """A fresh index prefix per test, dropped afterwards."""
    from store.schema import IndexNames, drop_indices, ensure_indices

    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    ensure_indices(es_client, names)
    yield names
    drop_indices(es_client, names)
