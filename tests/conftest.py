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


def _drop_own_variables(mp: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(OWN_PREFIX)]:
        mp.delenv(name)


#: Test packages whose package-scoped fixture indexes and deduplicates real books once.
SHARED_INDEX_PACKAGES = frozenset({"query", "server"})
#: Seconds a group took (setup included) in `scripts/run_tests.sh --durations` on 2026-11-26,
#: 2 cores (the two packages: alone in 3 workers, grouped). The groups are handed out heaviest
#: first: with ``--dist loadgroup`` the wall time is the busiest worker's sum, and a long group
#: begun last runs alone at the end. Groups not named here are short; they follow in
#: collection order.
GROUP_SECONDS = {
    "indexer/test_node_killed.py": 300,
    "devnode/test_localnode.py": 140,
    "devnode/test_cluster.py": 130,
    "server": 115,
    "cli/test_eval_cmd.py": 105,
    "store/test_connection.py": 85,
    "store/test_backpressure.py": 80,
    "indexer/test_dedup_job.py": 75,
    "store/test_candidates_generated.py": 70,
    "bookdup/test_order_decision.py": 63,
    "readers/test_dictionaries.py": 50,
    "store/test_candidates_real.py": 50,
    "cli/test_cli_data_safety.py": 48,
    "query": 45,
    "indexer/test_faults.py": 40,
    "indexer/test_translations_real.py": 37,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reaches the suite's node through a fixture; tests that start
    nodes of their own or read ELASTICSEARCH_URL directly carry ``pytestmark = es``. Then
    order the tests by group, heaviest group first (``GROUP_SECONDS``)."""
    for item in items:
        if NODE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.es)
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(_group(item.nodeid), i)

    def cost(item: pytest.Item) -> tuple[int, int]:
        group = _group(item.nodeid)
        return -GROUP_SECONDS.get(group, 0), first[group]

    items.sort(key=cost)


def _group(nodeid: str) -> str:
    """The unit `make test` hands to one worker (``--dist loadgroup``): a module, or a whole
    package where a package-scoped fixture indexes real books, so each index is built once."""
    path = Path(nodeid.split("::")[0])
    parts = path.parts[1:] if path.parts[0] == "tests" else path.parts
    return parts[0] if parts[0] in SHARED_INDEX_PACKAGES else "/".join(parts)


def pytest_configure(config: pytest.Config) -> None:
    """In the xdist controller: keep the groups in the order the workers collected them
    (heaviest first, above) instead of reordering them by their number of tests."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadgroup`` with our groups (``_group``). pytest-xdist 3.8 would read them
    from ``xdist_group`` marks copied into each test's id, which pytest 9.2's ids no longer
    take: every test was then scheduled alone — a module's private node started in each
    worker, the package indexes built up to three times."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return ModuleGroups(config, log)


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
