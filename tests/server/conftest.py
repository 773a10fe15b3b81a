"""A small real-book index for the server's tests (package scope) and an app over it."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from indexer.dedup_job import run_dedup
from indexer.index_job import IndexOptions, run_index
from query.context import ReadSide
from store.schema import IndexNames, drop_indices

TOM, TOM_PART1 = "tomsawyer-en-pg74", "tomsawyer-en-part1-pg7193"
ALICE, ALICE_RACKHAM, ALICE_DE = (
    "alice-en-pg11",
    "alice-en-rackham-pg28885",
    "alice-de-zimmermann-pg19778",
)
WALDEN = "walden-en-pg205"
BOOKS = (TOM, TOM_PART1, ALICE, ALICE_RACKHAM, ALICE_DE, WALDEN)


@pytest.fixture(scope="package")
def served(es_client, gutenberg):
    """(index names, ReadSide) over six indexed and deduplicated real books."""
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    run_index(es_client, names, [gutenberg / f"{b}.txt" for b in BOOKS], IndexOptions(workers=2))
    run_dedup(es_client, names)
    es_client.indices.refresh(index=[names.books, names.relations])
    yield names, ReadSide(es_client, names)
    drop_indices(es_client, names)


@contextlib.contextmanager
def serving(config: Any) -> Iterator[int]:
    """uvicorn with ``config`` (``port=0``: any free one) in a thread; yields its port."""
    import uvicorn

    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
