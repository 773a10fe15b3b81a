"""Index creation from mappings/ behind aliases, and a mapping migration by alias swap."""

from __future__ import annotations

import json

from store.schema import LOGICAL_INDICES, ensure_indices, load_definition, migrate


def test_indices_created_behind_aliases(es_client, index_names):
    for name in LOGICAL_INDICES:
        alias = index_names.alias(name)
        version = load_definition(name)["version"]
        targets = list(es_client.indices.get_alias(name=alias).body)
        assert targets == [index_names.concrete(name, version)]
    mapping = es_client.indices.get_mapping(index=index_names.books).body
    props = next(iter(mapping.values()))["mappings"]["properties"]
    assert props["bands"]["type"] == "keyword"
    assert props["edition_cluster"]["type"] == "keyword"
    assert props["features"]["enabled"] is False


def test_ensure_is_idempotent(es_client, index_names):
    first = ensure_indices(es_client, index_names)
    second = ensure_indices(es_client, index_names)
    assert first == second


def test_migrate_copies_documents_and_swaps_alias(es_client, index_names):
    alias = index_names.runs
    old = next(iter(es_client.indices.get_alias(name=alias).body))
    for i in range(25):
        es_client.index(index=alias, id=f"r{i}", document={"run_id": f"r{i}", "kind": "index"})
    definition = load_definition("runs")
    new = index_names.concrete("runs", 99)
    es_client.indices.create(
        index=new, settings=definition["settings"], mappings=definition["mappings"]
    )
    copied = migrate(es_client, old, new, alias)
    assert copied == 25
    assert list(es_client.indices.get_alias(name=alias).body) == [new]
    assert es_client.count(index=alias)["count"] == 25
    es_client.indices.delete(index=old)


def test_books_v1_gain_stems_when_migrated(es_client, index_names) -> None:
    """A catalogue indexed before the stems field existed is upgraded in place: its books get
    the stems a fresh index would give them, computed from their stored features."""
    from bookdup.features import FeatureParams
    from bookdup.model import Book
    from indexer.index_worker import build_document

    definition = load_definition("books")
    current = int(definition["version"])
    assert current == 3  # v3 added the winnowed keys, which need the text: see add_stems
    mappings = json.loads(json.dumps(definition["mappings"]))
    del mappings["properties"]["stems"]
    del mappings["properties"]["winnows"]
    mappings["_meta"]["schema_version"] = 1
    alias, v1 = index_names.books, index_names.concrete("books", 1)
    es_client.indices.delete(index=index_names.concrete("books", current))
    es_client.indices.create(index=v1, settings=definition["settings"], mappings=mappings)
    es_client.indices.update_aliases(actions=[{"add": {"index": v1, "alias": alias}}])
    text = "The houses of the village stood along the river where the children played. " * 3
    book = Book(
        id="b1",
        pages=[text + "Tom Sawyer whitewashed the fence while Huck watched."],
        language="en",
    )
    fresh = build_document(book, 1, FeatureParams())
    assert fresh["stems"], "an English book has stems"
    old = {k: v for k, v in fresh.items() if k not in ("stems", "winnows")}
    es_client.index(index=alias, id="b1", document=old, refresh=True)

    ensure_indices(es_client, index_names)

    assert list(es_client.indices.get_alias(name=alias).body) == [
        index_names.concrete("books", current)
    ]
    migrated = es_client.get(index=alias, id="b1")["_source"]
    assert migrated["stems"] == fresh["stems"]
    assert {k: v for k, v in migrated.items() if k != "stems"} == old
    es_client.indices.delete(index=v1)
