"""Jobs killed (SIGKILL) at every stage boundary, then run again: the clean run's state.

Each case starts the job in its own process with ``BOOKDUP_FAILPOINT`` naming where it must
die (`indexer.failpoints`: a real SIGKILL, at a chosen place), checks that it died there, runs
the job again and compares books, relations and clusters with a run that was never killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from bookdup.cluster import cluster_id
from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from store.bulk import bulk_write
from store.iterate import iter_documents
from store.schema import IndexNames, drop_indices
from tests.fixtures_books import REPO, build_corpus

INDEX_OPTIONS = IndexOptions(workers=2, bulk_chunk=1, lookup_batch=4)
JOB = """
import sys
from pathlib import Path
from store.connection import ConnectionSettings, connect
from store.schema import IndexNames
client = connect(ConnectionSettings.from_env())
names = IndexNames(sys.argv[2])
if sys.argv[1] == "index":
    from indexer.index_job import IndexOptions, run_index
    options = IndexOptions(workers=2, bulk_chunk=1, lookup_batch=4)
    run_index(client, names, [Path(p) for p in sys.argv[3:]], options)
else:
    from indexer.dedup_job import DedupParams, run_dedup
    run_dedup(client, names, params=DedupParams(batch_size=2))
"""
INDEX_POINTS = [
    "index.batch:1",
    "index.batch:2",
    "index.batch:3",
    "index.chunk:1",
    "index.chunk:2",
    "index.chunk:3",
    "index.chunk:4",
    "index.chunk:5",
    "index.chunk:6",
    "index.finish",
]
DEDUP_POINTS = [
    "dedup.prepared",
    "dedup.batch:1",
    "dedup.batch:2",
    "dedup.batch:3",
    "dedup.batch:4",
    "dedup.written",
    "dedup.stale",
    "clusters.computed",
    "clusters.applied",
    "dedup.finish",
]


def books_state(client, names: IndexNames) -> dict[str, tuple]:
    client.indices.refresh(index=names.books)
    fields = ["raw_hash", "content_hash", "n_unique", "edition_cluster", "work_cluster"]
    hits = iter_documents(client, names.books, source=fields)
    return {h["_id"]: tuple(h["_source"].get(f) for f in fields) for h in hits}


def relations_state(client, names: IndexNames) -> dict[str, tuple]:
    client.indices.refresh(index=names.relations)
    fields = ["relation", "direction", "lcs", "its", "cs", "confidence"]
    hits = iter_documents(client, names.relations, source=fields)
    return {h["_id"]: tuple(h["_source"].get(f) for f in fields) for h in hits}


def killed(es_settings, failpoint: str, job: str, prefix: str, *args: str) -> None:
    """Run ``job`` in its own process until the failpoint kills it."""
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        ELASTICSEARCH_URL=es_settings.url,
        BOOKDUP_FAILPOINT=failpoint,
    )
    done = subprocess.run(
        [sys.executable, "-c", JOB, job, prefix, *args], cwd=REPO, env=env, timeout=300
    )
    assert done.returncode == -signal.SIGKILL, f"the job did not die at {failpoint}"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    # resuming does not depend on the relation: no translated pair, whose verification
    # (whole Alice against its German) would take most of each kill-and-rerun
    return build_corpus(tmp_path_factory.mktemp("corpus"), with_translation=False)


@pytest.fixture(scope="module")
def clean(es_client, corpus):
    """A run never killed: the books after indexing, then books and relations after dedup."""
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    run_index(es_client, names, corpus.paths, INDEX_OPTIONS)
    indexed = books_state(es_client, names)
    run_dedup(es_client, names)
    yield names, indexed, books_state(es_client, names), relations_state(es_client, names)
    drop_indices(es_client, names)


@pytest.mark.parametrize("failpoint", INDEX_POINTS)
def test_index_killed_then_rerun_equals_a_clean_run(
    es_client, es_settings, index_names, corpus, clean, failpoint
) -> None:
    paths = list(map(str, corpus.paths))
    killed(es_settings, failpoint, "index", index_names.prefix, *paths)
    rerun = run_index(es_client, index_names, corpus.paths, INDEX_OPTIONS)
    assert rerun.failures == []
    assert rerun.resumed_from is not None and rerun.resumed_from.startswith("index-")
    assert rerun.indexed + rerun.unchanged == len(corpus.ids)
    assert books_state(es_client, index_names) == clean[1]  # nothing lost, nothing twice


@pytest.fixture(scope="module")
def indexed(es_client, corpus):
    """The corpus indexed once; each dedup case starts from it with no relations."""
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    run_index(es_client, names, corpus.paths, INDEX_OPTIONS)
    yield names
    drop_indices(es_client, names)


def undo_dedup(client, names: IndexNames) -> None:
    """Back to an index with no relations and one cluster per book."""
    relations = iter_documents(client, names.relations, source=False)
    actions = [
        {"_op_type": "delete", "_index": names.relations, "_id": h["_id"]} for h in relations
    ]
    for hit in iter_documents(client, names.books, source=False):
        own = cluster_id([hit["_id"]])
        doc = {"edition_cluster": own, "work_cluster": own}
        actions.append({"_op_type": "update", "_index": names.books, "_id": hit["_id"], "doc": doc})
    assert not bulk_write(client, actions, refresh="wait_for").failures


@pytest.mark.parametrize("failpoint", DEDUP_POINTS)
def test_dedup_killed_then_rerun_equals_a_clean_run(
    es_client, es_settings, indexed, clean, failpoint
) -> None:
    undo_dedup(es_client, indexed)
    killed(es_settings, failpoint, "dedup", indexed.prefix)
    rerun = run_dedup(es_client, indexed)
    assert rerun.resumed_from is not None and rerun.resumed_from.startswith("dedup-")
    assert relations_state(es_client, indexed) == clean[3]
    assert books_state(es_client, indexed) == clean[2]
