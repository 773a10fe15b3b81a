"""The suite's pytest-xdist groups (tests/conftest.py): a module per worker, the packages that
index real books once kept whole, the heaviest groups first, and a scheduler that keeps them —
pytest 9.2's test ids no longer take pytest-xdist 3.8's ``@group`` suffix, and without it every
test was scheduled alone (module-scoped private nodes started in each worker)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict

from tests.conftest import GROUP_SECONDS, REPO, _group


def test_a_group_is_a_module_or_an_index_sharing_package() -> None:
    assert _group("tests/store/test_bulk.py::test_x[a-b]") == "store/test_bulk.py"
    assert _group("tests/query/test_read_api.py::test_y") == "query"
    assert _group("tests/server/test_api.py::test_z") == "server"


def test_every_timed_group_exists() -> None:
    """A renamed or removed module would leave its weight behind and its successor last."""
    assert all((REPO / "tests" / group).exists() for group in GROUP_SECONDS)


def test_a_module_runs_in_one_worker() -> None:
    modules = ["tests/bookdup/test_text.py", "tests/bookdup/test_titles.py"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOKDUP_")}
    env.update(PYTHONPATH=str(REPO), ELASTICSEARCH_URL="http://127.0.0.1:9")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "3"]
    command += ["--dist", "loadgroup", "-v", *modules]
    out = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    ).stdout
    workers = defaultdict(set)
    for worker, module in re.findall(r"^\[(gw\d+)\].* PASSED (tests/\S+?\.py)::", out, re.M):
        workers[module].add(worker)
    assert set(workers) == set(modules), out
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
