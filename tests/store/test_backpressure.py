"""Back-pressure from a real node that says "slow down": nothing lost, requests made smaller.

A private node is started with a 256 KB indexing-pressure limit (Elasticsearch refuses a whole
bulk request whose bytes do not fit, with 429) and one write thread with a queue of one (shard
requests beyond that are refused document by document, with 429). The writers must adapt —
split what does not fit, resend what was refused after a backoff — and every document must land
exactly once; a document that can never fit is one named failure, not a stopped job.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from elasticsearch import Elasticsearch

from generator import GeneratorConfig, generate_corpus
from indexer.index_job import IndexOptions, run_index
from store.bulk import BulkReport, bulk_write
from store.connection import ConnectionSettings, connect
from store.schema import IndexNames, ensure_indices
from tests.private_node import private_node

pytestmark = pytest.mark.es  # starts Elasticsearch nodes of its own

LIMIT_BYTES = 256 * 1024
SETTINGS = {
    "indexing_pressure.memory.limit": "256kb",
    "thread_pool.write.size": 1,
    "thread_pool.write.queue_size": 1,
}


@pytest.fixture(scope="module")
def small_node() -> Iterator[Elasticsearch]:
    with private_node(SETTINGS) as cfg:
        yield connect(ConnectionSettings(url=cfg.url, timeout=60))


def _pressure(client: Elasticsearch) -> dict[str, int]:
    stats = client.nodes.stats(metric="indexing_pressure,thread_pool")["nodes"]
    node = next(iter(stats.values()))
    memory = node["indexing_pressure"]["memory"]["total"]
    return {
        "coordinating_rejections": memory["coordinating_rejections"],
        "write_rejected": node["thread_pool"]["write"]["rejected"],
    }


def _docs(index: str, prefix: str, n: int, size: int) -> list[dict]:
    return [
        {"_index": index, "_id": f"{prefix}{i}", "_source": {"text": f"{i} " + "x" * size}}
        for i in range(n)
    ]


def _fresh(client: Elasticsearch, index: str) -> str:
    client.options(ignore_status=404).indices.delete(index=index)
    client.indices.create(index=index, settings={"number_of_shards": 1, "number_of_replicas": 0})
    return index


def _count(client: Elasticsearch, index: str) -> int:
    client.indices.refresh(index=index)
    return int(client.count(index=index)["count"])


def test_a_request_over_the_pressure_limit_is_split_until_it_fits(small_node) -> None:
    index = _fresh(small_node, "bp-split")
    before = _pressure(small_node)
    # 120 documents of 20 KB in chunks of 50: each request is ~4x the limit; ~12 documents fit.
    report = bulk_write(small_node, _docs(index, "d", 120, 20_000), chunk_size=50, max_seconds=60)
    assert report.failures == []
    assert report.ok == 120
    assert _count(small_node, index) == 120  # each exactly once
    assert _pressure(small_node)["coordinating_rejections"] > before["coordinating_rejections"]
    assert report.rejected > 0
    assert report.smallest_chunk <= LIMIT_BYTES // 20_000


def test_a_document_that_can_never_fit_is_one_failure_and_the_rest_is_written(small_node) -> None:
    index = _fresh(small_node, "bp-huge")
    docs = _docs(index, "s", 10, 1_000)
    huge = {"_index": index, "_id": "huge", "_source": {"text": "y" * (2 * LIMIT_BYTES)}}
    report = bulk_write(small_node, [*docs[:5], huge, *docs[5:]], chunk_size=20, max_seconds=3)
    assert report.ok == 10
    assert [(f.id, f.status) for f in report.failures] == [("huge", 429)]
    assert "retry budget" in report.failures[0].reason
    assert "coordinating" in report.failures[0].reason  # the node's own words, for the operator
    assert _count(small_node, index) == 10


def test_writers_at_once_on_a_full_write_queue_lose_nothing(small_node) -> None:
    """Eight writers against one write thread and a queue of one: shard requests are refused
    document by document; each writer backs off and resends until all of its documents land."""
    index = _fresh(small_node, "bp-queue")
    before = _pressure(small_node)
    reports: list[BulkReport] = []

    def writer(w: int) -> None:
        docs = _docs(index, f"w{w}-", 300, 300)
        reports.append(bulk_write(small_node, docs, chunk_size=25, max_seconds=120))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.failures for r in reports] == [[]] * 8
    assert sum(r.ok for r in reports) == 2400
    assert _count(small_node, index) == 2400
    after = _pressure(small_node)
    pushed_back = sum(after[k] - before[k] for k in after)
    assert pushed_back > 0, "the node never pushed back: the test proves nothing"
    assert sum(r.rejected for r in reports) > 0


def test_the_index_job_rides_back_pressure_and_says_so(small_node, tmp_path) -> None:
    corpus = tmp_path / "corpus"
    # 1K-2K words: a book with its winnowed and pivot keys plus the other worker's request in
    # flight fit under the limit; at 2K-4K words with the pivot keys (stop 49) they did not
    generate_corpus(GeneratorConfig(seed=5, n_books=30, words_min=1000, words_max=2000), corpus)
    names = IndexNames("bp-job")
    ensure_indices(small_node, names)
    options = IndexOptions(workers=2, bulk_chunk=30)
    summary = run_index(small_node, names, [corpus / "books"], options)
    assert summary.failures == []
    assert summary.indexed == 30
    assert _count(small_node, names.books) == 30
    counts = summary.as_counts()
    assert counts["resent"] > 0  # 30 books are ~4x the limit
    assert 1 <= counts["smallest_chunk"] < options.bulk_chunk
