"""The real-book corpus the read-side tests share (package scope: indexed and deduplicated
once for tests/query), from ../shared/data/gutenberg. See test_catalog_editions.py for why the
Project Gutenberg licence does not make unrelated books related."""

from __future__ import annotations

import uuid

import pytest

from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from store.iterate import iter_documents
from store.schema import IndexNames, drop_indices
from tests.query.corpus import BOOKS


@pytest.fixture(scope="package")
def real(es_client, gutenberg):
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    indexed = run_index(
        es_client, names, [gutenberg / f"{b}.txt" for b in BOOKS], IndexOptions(workers=2)
    )
    summary = run_dedup(es_client, names)
    es_client.indices.refresh(index=[names.books, names.relations])
    rels = {h["_id"]: h["_source"] for h in iter_documents(es_client, names.relations)}
    yield names, indexed, summary, rels
    drop_indices(es_client, names)
