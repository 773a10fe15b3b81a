"""The Elasticsearch node SIGKILLed under a running job: a clear end, then a clean resume.

Each case runs the real CLI (`bookdup index` / `bookdup dedup`) in its own process against a
private node, stops the job at a chosen stage boundary (``BOOKDUP_FAILPOINT=<place>:stop``, a
SIGSTOP), SIGKILLs the node's JVM there and lets the job go on into the dead node. The job must
end within its retry budget with one clear line and a non-zero exit — no hang, no traceback.
Then the node is started again on the same data, the same command is run again, and the books,
relations and clusters must equal those of a run on which nothing went wrong.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from devnode.config import LocalNodeConfig
from devnode.localnode import start
from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from store.connection import ConnectionSettings, connect
from store.schema import IndexNames
from tests.fixtures_books import REPO, build_corpus
from tests.indexer.test_faults import books_state, relations_state
from tests.private_node import private_node

pytestmark = pytest.mark.es  # starts Elasticsearch nodes of its own

BUDGET_S = 8  # BOOKDUP_RETRY_SECONDS for the jobs: how long they retry a dead node
ENDS_WITHIN_S = BUDGET_S + 45  # the budget, plus the request timeout and the exit


@pytest.fixture(scope="module")
def node() -> Iterator[LocalNodeConfig]:
    with private_node() as cfg:
        yield cfg


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    # resuming does not depend on the relation: no translated pair, whose verification
    # (whole Alice against its German) would take most of each kill-and-rerun
    return build_corpus(tmp_path_factory.mktemp("corpus"), with_translation=False)


@pytest.fixture(scope="module")
def clean(node, corpus) -> dict[str, dict]:
    """Books after indexing, then books and relations after dedup, with nothing killed."""
    client = connect(ConnectionSettings(url=node.url))
    names = IndexNames("clean")
    run_index(client, names, corpus.paths, IndexOptions(workers=2, bulk_chunk=2))
    indexed = books_state(client, names)
    run_dedup(client, names)
    return {
        "indexed": indexed,
        "books": books_state(client, names),
        "relations": relations_state(client, names),
    }


def bookdup(
    node: LocalNodeConfig, prefix: str, *args: str, failpoint: str = "", budget: float = BUDGET_S
) -> subprocess.Popen:
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        BOOKDUP_RETRY_SECONDS=str(budget),
        BOOKDUP_FAILPOINT=failpoint,
    )
    command = [sys.executable, "-c", "from bookdup_cli.main import cli; cli()"]
    command += ["--es-url", node.url, "--index-prefix", prefix, "--timeout", "10", *args]
    return subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_stopped(proc: subprocess.Popen, timeout: float = 180) -> None:
    """Until the job has stopped itself at its failpoint (process state T)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the job ended before its failpoint: {proc.communicate()}"
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "T":
            return
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the job never reached its failpoint")


def kill_node(node: LocalNodeConfig) -> None:
    pid = int(node.pidfile.read_text())
    os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.1)
    raise AssertionError("the node survived SIGKILL")


def killed_under(node: LocalNodeConfig, proc: subprocess.Popen) -> tuple[float, str]:
    """Kill the node under the stopped job, let the job go on; its run time and stderr."""
    wait_stopped(proc)
    kill_node(node)
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGCONT)
    try:
        _, err = proc.communicate(timeout=ENDS_WITHIN_S + 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the job hung on the dead node") from None
    return time.monotonic() - started, err


def assert_clear_end(proc: subprocess.Popen, seconds: float, err: str, url: str) -> None:
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, err
    assert url in errors[0] or "Elasticsearch" in errors[0]
    assert seconds < ENDS_WITHIN_S, f"took {seconds:.0f} s to give up"


def rerun(node: LocalNodeConfig, prefix: str, *args: str) -> str:
    start(node)  # the same data folder: what the node acknowledged before dying is there
    proc = bookdup(node, prefix, *args)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "resumed the work of interrupted run" in err
    return out


def test_node_killed_during_indexing(node, corpus, clean) -> None:
    paths = [str(p) for p in corpus.paths]
    args = ["index", "--workers", "2", "--bulk-chunk", "2", *paths]
    proc = bookdup(node, "index-killed", *args, failpoint="index.chunk:2:stop")
    seconds, err = killed_under(node, proc)
    assert_clear_end(proc, seconds, err, node.url)
    rerun(node, "index-killed", *args)
    client = connect(ConnectionSettings(url=node.url))
    assert books_state(client, IndexNames("index-killed")) == clean["indexed"]


@pytest.mark.parametrize("place", ["dedup.batch:1", "clusters.computed"])
def test_node_killed_during_dedup_write_back(node, corpus, clean, place) -> None:
    prefix = f"dedup-killed-{place.split('.')[0]}"
    client = connect(ConnectionSettings(url=node.url))
    run_index(client, IndexNames(prefix), corpus.paths, IndexOptions(workers=2))
    proc = bookdup(node, prefix, "dedup", failpoint=f"{place}:stop")
    seconds, err = killed_under(node, proc)
    assert_clear_end(proc, seconds, err, node.url)
    rerun(node, prefix, "dedup")
    client = connect(ConnectionSettings(url=node.url))
    assert relations_state(client, IndexNames(prefix)) == clean["relations"]
    assert books_state(client, IndexNames(prefix)) == clean["books"]


def test_a_node_back_within_the_budget_is_ridden_through(node, corpus, clean) -> None:
    """Killed and started again while the job waits at the cluster write-back: the job retries
    through the restart and finishes as if nothing had happened."""
    prefix = "dedup-restarted"
    client = connect(ConnectionSettings(url=node.url))
    run_index(client, IndexNames(prefix), corpus.paths, IndexOptions(workers=2))
    proc = bookdup(node, prefix, "dedup", failpoint="clusters.computed:stop", budget=240)
    wait_stopped(proc)
    kill_node(node)
    os.kill(proc.pid, signal.SIGCONT)
    start(node)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    client = connect(ConnectionSettings(url=node.url))
    assert relations_state(client, IndexNames(prefix)) == clean["relations"]
    assert books_state(client, IndexNames(prefix)) == clean["books"]
