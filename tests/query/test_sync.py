"""`sync`: cluster ids written into a catalog index that bookdup did not create, on a real node.

The catalog documents are read back as raw bytes (``GET <index>/_source/<id>`` over plain
HTTP) to show that a synced document is its old bytes plus the new fields, and that a document
with nothing to change is not written at all (same bytes, same ``_version``).
"""

from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

from bookdup.cluster import cluster_id
from query.context import BadRequest
from query.sync import SyncOptions, sync_clusters
from store.connection import ConnectionSettings
from tests.query.corpus import ALICE, ALICE_DE, BOOKS, CAROL, FULL_ALICE, TOM, TOM_PART1, WALDEN

CATALOG_MAPPING = {
    "dynamic": "strict",
    "properties": {
        "title": {"type": "text"},
        "price": {"type": "float"},
        "tags": {"type": "keyword"},
        "shelf": {"properties": {"room": {"type": "keyword"}, "row": {"type": "integer"}}},
        "bookdup_id": {"type": "keyword"},
    },
}
IN_CATALOG = (ALICE[0], ALICE[1], TOM, TOM_PART1, CAROL[0], WALDEN)


def raw_source(index: str, doc_id: str) -> bytes:
    url = f"{ConnectionSettings.from_env().url}/{index}/_source/{doc_id}"
    with urllib.request.urlopen(url) as response:  # noqa: S310 - the test node
        return response.read()


def record(n: int, **extra) -> dict:
    return {
        "title": f"Catalogue record {n} — café",
        "price": 12.5 + n,
        "tags": ["novel", f"t{n}"],
        "shelf": {"room": "A", "row": n},
        **extra,
    }


@pytest.fixture
def catalog(es_client):
    name = f"catalog-{uuid.uuid4().hex[:8]}"
    es_client.indices.create(index=name, mappings=CATALOG_MAPPING)
    yield name
    es_client.indices.delete(index=name)


def versions(es_client, index: str) -> dict[str, int]:
    hits = es_client.search(index=index, size=100, version=True)["hits"]["hits"]
    return {h["_id"]: h["_version"] for h in hits}


def test_sync_writes_only_changed_documents_and_leaves_other_fields(
    es_client, real, catalog
) -> None:
    names = real[0]
    for n, book in enumerate(IN_CATALOG):
        es_client.index(index=catalog, id=book, document=record(n))
    es_client.index(index=catalog, id="not-a-bookdup-book", document=record(99))
    es_client.indices.refresh(index=catalog)
    before = {doc_id: raw_source(catalog, doc_id) for doc_id in versions(es_client, catalog)}

    summary = sync_clusters(es_client, names, catalog)
    assert summary.fields_added == ["edition_cluster", "work_cluster"]
    assert (summary.matched, summary.updated, summary.unchanged) == (6, 6, 0)
    assert summary.unmatched == len(BOOKS) - len(IN_CATALOG) and summary.failures == []
    props = es_client.indices.get_mapping(index=catalog)[catalog]["mappings"]["properties"]
    assert props["edition_cluster"] == props["work_cluster"] == {"type": "keyword"}
    assert {k: v for k, v in props.items() if k in CATALOG_MAPPING["properties"]} == (
        CATALOG_MAPPING["properties"]
    )

    expected = {
        ALICE[0]: (cluster_id(FULL_ALICE), cluster_id([*ALICE, ALICE_DE])),
        TOM_PART1: (cluster_id([TOM, TOM_PART1]),) * 2,
        WALDEN: (cluster_id([WALDEN]),) * 2,
    }
    for doc_id, (edition, work) in expected.items():
        added = json.dumps(
            {"edition_cluster": edition, "work_cluster": work}, separators=(",", ":")
        )
        # the old bytes, then the two fields: nothing else in the document was rewritten
        assert raw_source(catalog, doc_id) == before[doc_id][:-1] + b"," + added[1:].encode()
    assert raw_source(catalog, "not-a-bookdup-book") == before["not-a-bookdup-book"]

    settled = versions(es_client, catalog)
    assert settled["not-a-bookdup-book"] == 1 and settled[WALDEN] == 2
    again = sync_clusters(es_client, names, catalog)
    assert (again.updated, again.unchanged, again.fields_added) == (0, 6, [])
    assert versions(es_client, catalog) == settled  # nothing written the second time

    es_client.update(index=catalog, id=WALDEN, doc={"edition_cluster": "c-stale"}, refresh=True)
    settled = versions(es_client, catalog)
    fixed = sync_clusters(es_client, names, catalog)
    assert (fixed.updated, fixed.unchanged) == (1, 5)
    now = versions(es_client, catalog)
    assert {k for k in now if now[k] != settled[k]} == {WALDEN}


def test_sync_by_id_field_with_related_ids(es_client, real, catalog) -> None:
    names = real[0]
    rows = [("rec-1", ALICE[0]), ("rec-2", ALICE[0]), ("rec-3", TOM), ("rec-4", "unknown")]
    for n, (doc_id, book) in enumerate(rows):
        es_client.index(index=catalog, id=doc_id, document=record(n, bookdup_id=book))
    es_client.indices.refresh(index=catalog)

    options = SyncOptions(id_field="bookdup_id", related=True)
    summary = sync_clusters(es_client, names, catalog, options)
    assert (summary.matched, summary.updated) == (3, 3)  # two records of one book, both synced
    assert "related_books" in summary.fields_added
    docs = {
        d["_id"]: d["_source"]
        for d in es_client.mget(index=catalog, ids=[r[0] for r in rows])["docs"]
    }
    for doc_id in ("rec-1", "rec-2"):
        assert docs[doc_id]["edition_cluster"] == cluster_id(FULL_ALICE)
        assert docs[doc_id]["related_books"] == sorted([ALICE[1], ALICE[2], ALICE_DE])
    assert docs["rec-3"]["related_books"] == [TOM_PART1]
    assert "edition_cluster" not in docs["rec-4"]
    assert docs["rec-1"]["shelf"] == {"room": "A", "row": 0} and docs["rec-1"]["price"] == 12.5

    # the plain request a catalog sends to collapse on the synced field (README)
    hits = es_client.search(
        index=catalog,
        query={"match": {"title": "café"}},
        collapse={"field": "edition_cluster"},
        size=10,
    )["hits"]["hits"]
    assert sorted(h["_id"] for h in hits if "edition_cluster" in h["_source"])[:1] == ["rec-1"]


def test_sync_refuses_bookdup_indices_missing_indices_and_clashing_fields(
    es_client, real, catalog
) -> None:
    names = real[0]
    with pytest.raises(BadRequest, match="bookdup's own"):
        sync_clusters(es_client, names, names.books)
    with pytest.raises(BadRequest, match="no index"):
        sync_clusters(es_client, names, f"missing-{uuid.uuid4().hex[:6]}")
    with pytest.raises(BadRequest, match="one index"):
        sync_clusters(es_client, names, "catalog-*")
    es_client.indices.put_mapping(index=catalog, properties={"edition_cluster": {"type": "text"}})
    with pytest.raises(BadRequest, match="as text, not keyword"):
        sync_clusters(es_client, names, catalog)
