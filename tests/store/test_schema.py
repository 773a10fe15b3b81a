"""Index creation from mappings/ behind aliases, and a mapping migration by alias swap."""

from __future__ import annotations

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
