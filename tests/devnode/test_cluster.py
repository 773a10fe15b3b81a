"""A two-node cluster from the node tool gives what one node gives.

The fixture corpus (tests/fixtures_books.py, its translated pair included) is indexed and
deduplicated twice: on the suite's single node with the default layout (1 shard, 0 replicas)
and on a private cluster of two nodes (`bookdup es up --nodes 2`) with 2 shards and 1 replica
per index. Books, relations and cluster ids must be the same: candidates are counted term
matches broken by book id, and the idf-weighted translated queries are scored with the whole
index's statistics (``dfs_query_then_fetch``), so how books fall into shards changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from devnode.config import LocalNodeConfig
from devnode.localnode import start, status, stop
from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from store.connection import ConnectionSettings, connect
from store.iterate import iter_documents
from store.schema import LOGICAL_INDICES, IndexLayout, IndexNames, drop_indices
from tests.fixtures_books import build_corpus
from tests.private_node import private_config

pytestmark = pytest.mark.es  # starts a cluster of its own

OPTIONS = IndexOptions(workers=2)
#: Book fields that name the run or the time, which differ between any two runs.
RUN_FIELDS = frozenset({"indexed_at", "index_run", "dedup_run", "run_id", "created_at"})


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalNodeConfig]:
    with private_config(nodes=2, heap="512m") as cfg:
        start(cfg)
        yield cfg


def _state(client, names: IndexNames) -> dict[str, dict[str, dict]]:
    """Every book and relation, without the fields naming runs and times."""
    out: dict[str, dict[str, dict]] = {}
    for name in ("books", "relations"):
        index = names.alias(name)
        client.indices.refresh(index=index)
        out[name] = {
            hit["_id"]: {k: v for k, v in hit["_source"].items() if k not in RUN_FIELDS}
            for hit in iter_documents(client, index)
        }
    return out


def _index_and_dedup(client, corpus, layout: IndexLayout | None) -> dict[str, dict[str, dict]]:
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    try:
        options = IndexOptions(workers=OPTIONS.workers, layout=layout or IndexLayout())
        summary = run_index(client, names, corpus.paths, options)
        assert not summary.failures
        run_dedup(client, names)
        if layout is not None:
            _assert_layout(client, names, layout)
        return _state(client, names)
    finally:
        drop_indices(client, names)


def _assert_layout(client, names: IndexNames, layout: IndexLayout) -> None:
    """The indices have the shards and replicas asked for, every copy assigned (green), the
    copies of each index on both nodes."""
    health = client.cluster.health(wait_for_status="green", timeout="30s").body
    assert health["status"] == "green" and health["number_of_nodes"] == 2
    for name in LOGICAL_INDICES:
        index = names.alias(name)
        shards = client.cat.shards(index=index, format="json").body
        primaries = {s["shard"] for s in shards if s["prirep"] == "p"}
        expected = layout.shards if name in ("books", "relations") else 1
        assert len(primaries) == expected
        assert len(shards) == expected * (1 + (layout.replicas or 0))
        if layout.replicas:
            assert len({s["node"] for s in shards}) == 2  # a primary and its copy never share


def test_two_nodes_two_shards_one_replica_give_the_single_nodes_books_relations_and_clusters(
    es_client, cluster: LocalNodeConfig, tmp_path
) -> None:
    corpus = build_corpus(tmp_path / "corpus")
    st = status(cluster)
    assert st.running and st.nodes == 2 and len(st.members) == 2
    on_one = _index_and_dedup(es_client, corpus, None)
    client = connect(ConnectionSettings(url=cluster.url))
    on_two = _index_and_dedup(client, corpus, IndexLayout(shards=2, replicas=1))
    assert set(on_one["books"]) == set(on_two["books"]) and len(on_one["books"]) == 11
    assert on_one["relations"], "the corpus has related books"
    assert on_two["relations"] == on_one["relations"]
    assert on_two["books"] == on_one["books"]  # cluster ids, ranks, features, keys
    clusters = {b: (d["edition_cluster"], d["work_cluster"]) for b, d in on_two["books"].items()}
    assert len(set(clusters.values())) < len(clusters)  # some books share clusters
    assert stop(cluster) is True
    assert not status(cluster).running
