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


def test_a_missing_index_is_not_retried(es_client) -> None:
    with pytest.raises(NotFoundError):
        list(iter_documents(es_client, "bookdup-no-such-index"))
