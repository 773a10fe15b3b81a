"""Shared fixtures. Tests that touch the index talk to a real Elasticsearch node.

The node comes from ELASTICSEARCH_URL (the README's test command starts one with
`bookdup es up`); if none answers, those tests fail loudly instead of being skipped, because a
green run that never touched Elasticsearch proves nothing.

Tests are hermetic: every ``BOOKDUP_*`` variable (the developer's BOOKDUP_ES_HOME, the test
command's BOOKDUP_ES_PORT / BOOKDUP_ES_DATA, an index prefix, a cache folder) is removed for the
whole session and again around each test, so no result depends on them. ELASTICSEARCH_* stay:
they name the test node.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUTENBERG = (REPO / ".." / "shared" / "data" / "gutenberg").resolve()
OWN_PREFIX = "BOOKDUP_"
#: Fixtures whose use means a test talks to the suite's node: such tests are marked ``es``,
#: so the quick tier (`make check`: ``-m "not es"``) runs everything else without a node.
NODE_FIXTURES = frozenset({"es_client", "es_settings"})
#: Test packages whose package-scoped fixture indexes and deduplicates real books once.
SHARED_INDEX_PACKAGES = frozenset({"query", "server"})


def _drop_own_variables(mp: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(OWN_PREFIX)]:
        mp.delenv(name)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reaches the suite's node through a fixture; tests that start
    nodes of their own or read ELASTICSEARCH_URL directly carry ``pytestmark = es``."""
    for item in items:
        if NODE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.es)
        item.add_marker(pytest.mark.xdist_group(_group(item)))


def _group(item: pytest.Item) -> str:
    """The unit `make test` hands to one worker (``--dist loadgroup``): a module, or a whole
    package where a package-scoped fixture indexes real books, so each index is built once."""
    path = Path(str(item.fspath)).relative_to(REPO / "tests")
    shared = path.parts[0] in SHARED_INDEX_PACKAGES
    return path.parts[0] if shared else path.as_posix()


@pytest.fixture(scope="session", autouse=True)
def _hermetic_session() -> Iterator[None]:
    """Before any fixture of any scope reads them (module-scoped nodes, session clients)."""
    with pytest.MonkeyPatch.context() as mp:
        _drop_own_variables(mp)
        yield


@pytest.fixture(autouse=True)
def _hermetic_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """Again per test: a variable set without monkeypatch by an earlier test does not leak."""
    _drop_own_variables(monkeypatch)


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
