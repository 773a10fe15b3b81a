"""Index creation from mappings/ behind aliases, and a mapping migration by alias swap."""

from __future__ import annotations

import json
import uuid

import pytest

from store.schema import (
    LOGICAL_INDICES,
    MAX_PREFIX_BYTES,
    IndexLayout,
    IndexNames,
    drop_indices,
    ensure_indices,
    load_definition,
    merge_segments,
    migrate,
)


@pytest.mark.parametrize(
    "prefix", ["Books", "", "-books", "+b", "a*b", "a,b", "a#b", "a:b", "x" * 201]
)
def test_a_prefix_no_index_name_may_start_with_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="index prefix"):
        IndexNames(prefix)


def test_a_valid_prefix_names_every_index_the_node_accepts(es_client) -> None:
    """The longest prefix allowed, with a dot and digits, still gives names the node takes."""
    names = IndexNames(f"t.{uuid.uuid4().hex[:8]}-" + "x" * (MAX_PREFIX_BYTES - 11))
    try:
        ensure_indices(es_client, names)
        assert es_client.indices.exists_alias(name=names.relations)
    finally:
        drop_indices(es_client, names)


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


def _book_document(book_id: str) -> dict:
    """The document the index worker builds for a 500-word English book (it has winnowed keys)."""
    from bookdup.features import FeatureParams
    from bookdup.model import Book
    from indexer.index_worker import build_document

    text = "The houses of the village stood along the river where the children played. " * 40
    book = Book(id=book_id, pages=[text + "Tom Sawyer whitewashed the fence."], language="en")
    document = build_document(book, 1, FeatureParams())
    assert document["winnows"], "a book of 500 words has winnowed keys"
    return document


def _books_index_of_version(es_client, index_names, version: int, drop: tuple[str, ...]) -> None:
    """The books alias on a fresh index of an older ``version``, its mapping without ``drop``."""
    definition = load_definition("books")
    mappings = json.loads(json.dumps(definition["mappings"]))
    for name in drop:
        del mappings["properties"][name]
    mappings["_meta"]["schema_version"] = version
    alias, old = index_names.books, index_names.concrete("books", version)
    es_client.indices.delete(index=index_names.concrete("books", definition["version"]))
    es_client.indices.create(index=old, settings=definition["settings"], mappings=mappings)
    es_client.indices.update_aliases(actions=[{"add": {"index": old, "alias": alias}}])


#: Fields a books v1 index did not have (stems: v2; found_title, edition_rank, partial: v3;
#: winnows: v4).
V1_LACKS = ("stems", "found_title", "edition_rank", "partial", "winnows")


def test_books_v2_gain_a_found_title_from_their_excerpt_when_migrated(
    es_client, index_names
) -> None:
    """A v2 catalogue (no found_title, no ranks) is upgraded in place: a book whose text opens
    with a digitiser's header gets the title the header names, not the header."""
    _books_index_of_version(
        es_client, index_names, 2, drop=("found_title", "edition_rank", "partial", "winnows")
    )
    alias, v2 = index_names.books, index_names.concrete("books", 2)
    excerpt = (
        "The Project Gutenberg Etext of Die Leiden des jungen Werther--Buch 1 #26 in our "
        "series by Johann Wolfgang von Goethe Copyright laws are changing"
    )
    doc = {"book_id": "w1", "excerpt": excerpt, "edition_cluster": "c-1", "work_cluster": "c-1"}
    es_client.index(index=alias, id="w1", document=doc, refresh=True)

    ensure_indices(es_client, index_names)

    migrated = es_client.get(index=alias, id="w1")["_source"]
    title = "Die Leiden des jungen Werther--Buch 1"
    assert migrated == {**doc, "found_title": title, "display_title": f"[{title}]"}
    es_client.indices.delete(index=v2)


def test_books_v1_gain_stems_when_migrated(es_client, index_names) -> None:
    """A catalogue indexed before the stems field existed is upgraded in place: its books get
    the stems a fresh index would give them, computed from their stored features."""
    from bookdup.features import FeatureParams
    from bookdup.model import Book
    from indexer.index_worker import build_document

    current = load_definition("books")["version"]
    assert current == 5
    _books_index_of_version(es_client, index_names, 1, drop=V1_LACKS)
    alias, v1 = index_names.books, index_names.concrete("books", 1)
    text = "The houses of the village stood along the river where the children played. " * 3
    book = Book(
        id="b1",
        pages=[text + "Tom Sawyer whitewashed the fence while Huck watched."],
        language="en",
    )
    fresh = build_document(book, 1, FeatureParams())
    assert fresh["stems"], "an English book has stems"
    old = {k: v for k, v in fresh.items() if k not in V1_LACKS}
    es_client.index(index=alias, id="b1", document=old, refresh=True)

    ensure_indices(es_client, index_names)

    target = index_names.concrete("books", current)
    assert list(es_client.indices.get_alias(name=alias).body) == [target]
    migrated = es_client.get(index=alias, id="b1")["_source"]
    assert migrated["stems"] == fresh["stems"]
    assert migrated["found_title"] == fresh["found_title"]
    # the rank fields are the next dedup run's to write
    assert {k: v for k, v in migrated.items() if k not in V1_LACKS} == old
    assert "edition_rank" not in migrated and "partial" not in migrated
    es_client.indices.delete(index=v1)


def test_books_v3_are_copied_as_they_are_without_winnowed_keys(es_client, index_names) -> None:
    """A v3 catalogue is upgraded in place with its books unchanged: the winnowed keys need the
    whole text, so a book has none until its file is indexed again (its features_version is
    behind, so ``bookdup index`` re-extracts it); meanwhile it is queried by its unique words."""
    from bookdup.features import FEATURES_VERSION

    _books_index_of_version(es_client, index_names, 3, drop=("winnows",))
    old = {k: v for k, v in _book_document("b3").items() if k != "winnows"}
    old["features_version"] = FEATURES_VERSION - 2
    es_client.index(index=index_names.books, id="b3", document=old, refresh=True)

    ensure_indices(es_client, index_names)

    current = index_names.concrete("books", load_definition("books")["version"])
    assert list(es_client.indices.get_alias(name=index_names.books).body) == [current]
    assert es_client.get(index=index_names.books, id="b3")["_source"] == old
    es_client.indices.delete(index=index_names.concrete("books", 3))


def test_books_v4_lose_their_word_3_gram_keys_in_v5(es_client, index_names) -> None:
    """v5's winnowed keys are word-prefix 5-grams: a v4 book's 3-gram keys would match no
    new book's, so they are dropped (the book is queried by its unique words until its file is
    indexed again); a book already extracted with prefix keys keeps them."""
    from bookdup.features import FEATURES_VERSION

    assert load_definition("books")["version"] == 5
    _books_index_of_version(es_client, index_names, 4, drop=())
    word_keys = {**_book_document("old"), "features_version": FEATURES_VERSION - 1}
    prefix_keys = _book_document("new")
    for book_id, document in (("old", word_keys), ("new", prefix_keys)):
        es_client.index(index=index_names.books, id=book_id, document=document, refresh=True)

    ensure_indices(es_client, index_names)

    old = es_client.get(index=index_names.books, id="old")["_source"]
    assert "winnows" not in old
    assert old == {k: v for k, v in word_keys.items() if k != "winnows"}
    assert es_client.get(index=index_names.books, id="new")["_source"] == prefix_keys
    es_client.indices.delete(index=index_names.concrete("books", 4))


def _shards_and_replicas(client, index: str) -> tuple[int, int]:
    settings = client.indices.get_settings(index=index).body[index]["settings"]["index"]
    return int(settings["number_of_shards"]), int(settings["number_of_replicas"])


def test_layout_defaults_keep_the_mapping_files_values() -> None:
    layout = IndexLayout.from_env({})
    for name in LOGICAL_INDICES:
        settings = load_definition(name)["settings"]
        assert layout.settings(name, settings) == settings
        assert (settings["number_of_shards"], settings["number_of_replicas"]) == (1, 0)


def test_layout_from_env_and_flags() -> None:
    env = {"BOOKDUP_SHARDS": "4", "BOOKDUP_REPLICAS": "1"}
    assert IndexLayout.from_env(env) == IndexLayout(4, 1)
    assert IndexLayout.from_env(env, shards=2, replicas=None) == IndexLayout(2, 1)
    layout = IndexLayout(3, 1)
    assert layout.settings("books", {"number_of_shards": 1})["number_of_shards"] == 3
    assert layout.settings("relations", {})["number_of_shards"] == 3
    assert layout.settings("runs", {"number_of_shards": 1}) == {
        "number_of_shards": 1,
        "number_of_replicas": 1,
    }
    with pytest.raises(ValueError, match="BOOKDUP_SHARDS must be a whole number"):
        IndexLayout.from_env({"BOOKDUP_SHARDS": "two"})
    with pytest.raises(ValueError, match="at least 1"):
        IndexLayout(shards=0)
    with pytest.raises(ValueError, match="0 or more"):
        IndexLayout(replicas=-1)


def test_indices_are_created_with_the_layout_asked_for(es_client) -> None:
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    try:
        ensure_indices(es_client, names, IndexLayout(shards=2, replicas=0))
        for name in LOGICAL_INDICES:
            index = names.concrete(name, load_definition(name)["version"])
            shards = 2 if name in ("books", "relations") else 1
            assert _shards_and_replicas(es_client, index) == (shards, 0)
        # replicas change on a live index (1 cannot be assigned on one node: yellow, not red)
        ensure_indices(es_client, names, IndexLayout(replicas=1))
        books = names.concrete("books", load_definition("books")["version"])
        assert _shards_and_replicas(es_client, books) == (2, 1)
    finally:
        drop_indices(es_client, names)


def test_the_pivot_field_is_added_only_by_jobs_that_fill_it(es_client, index_names) -> None:
    """Issue 27: the books mapping (strict) refuses a document with pivot pair keys until an
    index job with ``pivot_pairs`` adds the field; then the keys are searchable, without doc
    values (no stop list aggregates them), and kept by partial updates."""
    from store.bulk import bulk_write
    from store.schema import add_pivot_field

    def write(i: int) -> list:
        doc = {"book_id": f"b{i}", "pivots": ["00000000000000aa", f"{i:016x}"]}
        action = {"_index": index_names.books, "_id": doc["book_id"], "_source": doc}
        return bulk_write(es_client, [action], refresh="wait_for").failures

    assert write(0)  # strict mapping: no such field
    add_pivot_field(es_client, index_names)
    add_pivot_field(es_client, index_names)  # idempotent: every such job adds it
    assert not write(1) and not write(2)
    shared = {"term": {"pivots": "00000000000000aa"}}
    assert es_client.count(index=index_names.books, query=shared)["count"] == 2
    mapping = es_client.indices.get_mapping(index=index_names.books).body
    spec = next(iter(mapping.values()))["mappings"]["properties"]["pivots"]
    assert spec["doc_values"] is False
    # kept in _source: a partial update (the dedup job's cluster ids) keeps them
    es_client.update(index=index_names.books, id="b1", doc={"edition_rank": 0}, refresh=True)
    assert es_client.count(index=index_names.books, query=shared)["count"] == 2


def test_an_index_that_keeps_pivots_out_of_source_is_refused(es_client, index_names) -> None:
    """Issue 27: a books index created while the mapping excluded ``pivots`` from ``_source``
    would lose them at the dedup job's first cluster update: a pivot job refuses it, unchanged."""
    from store.schema import add_pivot_field

    definition = load_definition("books")
    books = index_names.concrete("books", definition["version"])
    es_client.indices.delete(index=books)
    es_client.indices.create(
        index=books,
        mappings={**definition["mappings"], "_source": {"excludes": ["pivots"]}},
        aliases={index_names.alias("books"): {}},
    )
    with pytest.raises(ValueError, match="bookdup reset"):
        add_pivot_field(es_client, index_names)
    mapping = es_client.indices.get_mapping(index=books).body[books]["mappings"]
    assert "pivots" not in mapping["properties"]


def test_fields_added_to_the_definition_are_mapped_in_place(es_client, index_names) -> None:
    """An index of the current version made before a field (or a multi-field) was added to the
    definition gains it at the next job start, with its documents kept, and no copy."""
    definition = load_definition("books")
    mappings = json.loads(json.dumps(definition["mappings"]))
    del mappings["properties"]["display_title"]
    del mappings["properties"]["found_title"]["fields"]["raw"]
    concrete = index_names.concrete("books", definition["version"])
    es_client.indices.delete(index=concrete)
    es_client.indices.create(index=concrete, settings=definition["settings"], mappings=mappings)
    es_client.indices.update_aliases(
        actions=[{"add": {"index": concrete, "alias": index_names.books}}]
    )
    doc = {"book_id": "w1", "found_title": "Walden"}
    es_client.index(index=index_names.books, id="w1", document=doc, refresh=True)

    ensure_indices(es_client, index_names)

    assert list(es_client.indices.get_alias(name=index_names.books).body) == [concrete]
    props = es_client.indices.get_mapping(index=concrete).body[concrete]["mappings"]["properties"]
    assert props["display_title"] == definition["mappings"]["properties"]["display_title"]
    assert props["found_title"]["fields"]["raw"]["type"] == "keyword"
    assert es_client.get(index=index_names.books, id="w1")["_source"] == doc
    # an added field is searchable for documents written after it
    es_client.index(index=index_names.books, id="w2", document=doc, refresh=True)
    hits = es_client.search(
        index=index_names.books, docvalue_fields=["found_title.raw"], query={"match_all": {}}
    )["hits"]["hits"]
    assert {h["_id"]: h.get("fields") for h in hits} == {
        "w1": None,
        "w2": {"found_title.raw": ["Walden"]},
    }


def _segment_count(client, index: str) -> int:
    return client.indices.stats(index=index, metric="segments")["_all"]["primaries"]["segments"][
        "count"
    ]


def _three_segments(client, names: IndexNames) -> None:
    """Three refreshes after three writes: three segments in the books index's one shard."""
    for i in range(3):
        client.index(index=names.books, id=f"b{i}", document={"book_id": f"b{i}"})
        client.indices.refresh(index=names.books)
    assert _segment_count(client, names.books) == 3


def test_a_small_books_index_is_merged_into_one_segment(es_client, index_names) -> None:
    _three_segments(es_client, index_names)
    assert merge_segments(es_client, index_names.books) is True
    assert _segment_count(es_client, index_names.books) == 1
    # nothing left to merge: no second rewrite
    assert merge_segments(es_client, index_names.books) is False


def test_a_big_books_index_keeps_the_nodes_merge_policy(
    es_client, index_names, monkeypatch
) -> None:
    _three_segments(es_client, index_names)
    monkeypatch.setattr("store.schema.MERGE_MAX_SHARD_BYTES", 1)
    assert merge_segments(es_client, index_names.books) is False
    assert _segment_count(es_client, index_names.books) == 3
