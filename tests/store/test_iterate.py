"""Point-in-time iteration survives losing its point in time, as a node restart makes it."""

from __future__ import annotations

import pytest
from elasticsearch import NotFoundError

from store.bulk import bulk_write
from store.iterate import iter_documents


def test_a_lost_point_in_time_is_replaced_and_no_document_repeats(es_client, index_names):
    ids = [f"b{i:02d}" for i in range(25)]
    actions = [{"_index": index_names.books, "_id": i, "_source": {"book_id": i}} for i in ids]
    assert not bulk_write(es_client, actions, refresh="wait_for").failures
    opened: list[str] = []
    real_open = es_client.open_point_in_time

    def recording_open(**kwargs):
        response = real_open(**kwargs)
        opened.append(response.body["id"])
        return response

    es_client.open_point_in_time = recording_open  # see which PIT to close, nothing faked
    try:
        walk = iter_documents(es_client, index_names.books, source=False, page_size=4)
        first = [next(walk)["_id"] for _ in range(6)]  # two pages read
        es_client.close_point_in_time(id=opened[0])  # what a node restart does to it
        rest = [hit["_id"] for hit in walk]
    finally:
        del es_client.open_point_in_time
    assert len(opened) == 2  # a second point in time was opened
    assert sorted(first + rest) == ids  # every document once


def test_doc_values_are_read_without_the_source(es_client, index_names):
    """What the cluster stage reads: doc values as the source holds them, none when missing."""
    docs = [
        {"book_id": "a", "edition_cluster": "c-a", "edition_rank": 2, "partial": True},
        {"book_id": "b", "n_words": 7, "partial": False},
    ]
    actions = [{"_index": index_names.books, "_id": d["book_id"], "_source": d} for d in docs]
    assert not bulk_write(es_client, actions, refresh="wait_for").failures
    fields = ["edition_cluster", "edition_rank", "partial", "n_words"]
    hits = {
        h["_id"]: h
        for h in iter_documents(es_client, index_names.books, source=False, doc_values=fields)
    }
    assert all("_source" not in h for h in hits.values())
    assert hits["a"]["fields"] == {
        "edition_cluster": ["c-a"],
        "edition_rank": [2],
        "partial": [True],
    }
    assert hits["b"]["fields"] == {"n_words": [7], "partial": [False]}


def test_a_missing_index_is_not_retried(es_client) -> None:
    with pytest.raises(NotFoundError):
        list(iter_documents(es_client, "bookdup-no-such-index"))
