"""Streaming bulk against the real node: per-document errors, partial updates, retries."""

from __future__ import annotations

import json

from store.bulk import add_fields, bulk_write, bulk_write_concurrently, encode_source


def _book(i: int) -> dict:
    return {
        "_index": "",
        "_id": f"b{i}",
        "_source": {"book_id": f"b{i}", "bands": [f"0_{i % 7:x}", f"1_{i % 5:x}"], "uniq": []},
    }


def test_bulk_indexes_and_reports_per_document_errors(es_client, index_names):
    actions = []
    for i in range(40):
        action = _book(i)
        action["_index"] = index_names.books
        actions.append(action)
    bad = {"_index": index_names.books, "_id": "bad", "_source": {"no_such_field": 1}}
    report = bulk_write(es_client, [*actions, bad], chunk_size=7, refresh="wait_for")
    assert report.ok == 40
    assert [f.id for f in report.failures] == ["bad"]
    assert report.failures[0].status == 400
    assert "strict" in report.failures[0].reason or "dynamic" in report.failures[0].reason
    assert es_client.count(index=index_names.books)["count"] == 40


def test_partial_update_write_back_touches_only_given_field(es_client, index_names):
    action = _book(1)
    action["_index"] = index_names.books
    bulk_write(es_client, [action], refresh="wait_for")
    update = {
        "_op_type": "update",
        "_index": index_names.books,
        "_id": "b1",
        "doc": {"edition_cluster": "e-b1", "work_cluster": "w-b1"},
    }
    report = bulk_write(es_client, [update], refresh="wait_for")
    assert report.ok == 1 and not report.failures
    doc = es_client.get(index=index_names.books, id="b1")["_source"]
    assert doc["edition_cluster"] == "e-b1"
    assert doc["bands"] == ["0_1", "1_1"]


def test_concurrent_requests_write_every_update_once_and_report_each_failure(
    es_client, index_names
):
    books = [{**_book(i), "_index": index_names.books} for i in range(30)]
    bulk_write(es_client, books, refresh="wait_for")
    updates = [
        {"_op_type": "update", "_index": index_names.books, "_id": f"b{i}", "doc": {"year": i}}
        for i in [*range(30), 99]  # b99 does not exist: refused, whichever request sends it
    ]
    shares = [iter(updates[i::3]) for i in range(3)]  # consumed lazily, each on its thread
    report = bulk_write_concurrently(es_client, shares, chunk_size=4)
    assert report.ok == 30
    assert [(f.id, f.status) for f in report.failures] == [("b99", 404)]
    es_client.indices.refresh(index=index_names.books)
    hits = es_client.search(index=index_names.books, size=100, source=["year", "bands"]).body
    stored = {h["_id"]: h["_source"] for h in hits["hits"]["hits"]}
    assert {i: stored[i]["year"] for i in stored} == {f"b{i}": i for i in range(30)}
    assert stored["b3"]["bands"] == ["0_3", "1_3"]  # a partial update: the rest kept


def test_rewriting_same_ids_never_duplicates(es_client, index_names):
    actions = []
    for i in range(10):
        action = _book(i)
        action["_index"] = index_names.books
        actions.append(action)
    bulk_write(es_client, actions)
    bulk_write(es_client, actions, refresh="wait_for")
    assert es_client.count(index=index_names.books)["count"] == 10


def test_chunk_size_halves_under_rejections_and_recovers_a_quarter_at_a_time() -> None:
    from store.bulk import ChunkSize

    size = ChunkSize(500)
    for expected in (250, 125, 62, 31):
        size.back_off()
        assert size.current == expected
    for _ in range(20):
        size.back_off()
    assert size.current == 1  # never below one document
    size.recover()
    assert size.current == 126  # + a quarter of what was asked for
    for _ in range(5):
        size.recover()
    assert size.current == 500  # and never above it


def test_an_encoded_source_is_stored_as_the_document_would_be(es_client, index_names):
    """A worker's encoded ``_source`` with the job's fields added (`add_fields`) is the bytes of
    the whole document encoded at once, and the node stores the same ``_source`` for both."""
    doc = {"book_id": "b1", "title": "Über «naïve» 書", "n_words": 3, "flags": [], "extra": {}}
    run = {"index_run": "r-1", "indexed_at": "2026-11-26T05:00:00Z"}
    encoded = add_fields(encode_source(doc), run)
    assert encoded == encode_source({**doc, **run})
    assert add_fields(encode_source(doc), {}) == encode_source(doc)
    books = index_names.books
    actions = [
        {"_index": books, "_id": "as-dict", "_source": {**doc, **run}},
        {"_index": books, "_id": "as-bytes", "_source": encoded},
    ]
    assert bulk_write(es_client, actions, refresh="wait_for").ok == 2
    stored = [es_client.get(index=books, id=i)["_source"] for i in ("as-dict", "as-bytes")]
    assert stored[0] == stored[1] == json.loads(encoded)
