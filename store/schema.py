"""Versioned indices behind aliases, created from the JSON in ``mappings/``.

Each logical index (books, relations, runs) is a concrete index ``<prefix>-<name>-v<N>`` reached
through the alias ``<prefix>-<name>``. A mapping change bumps N; ``migrate`` copies documents
into the new index and swaps the alias atomically, so readers never see an outage. Copying is
done by scroll + bulk in Python because the server core has no reindex API. A field added by a
new version is computed for each copied document by that index's transform (``TRANSFORMS``)
from what the document stores, so an upgraded catalogue needs no re-index of the raw files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.features import stem_sample_from_doc
from bookdup.titles import title_from_text
from store.bulk import bulk_write
from store.iterate import iter_documents
from store.keys import PIVOTS, STEMS, WINNOWS
from store.retry import with_retries
from store.shown import MARKER, shown_fields

LOGICAL_INDICES = ("books", "relations", "runs")
DEFAULT_PREFIX = "bookdup"
#: The indices that grow with the collection, and so take ``IndexLayout.shards``; the runs
#: index (one small document per job) keeps one shard.
SHARDED_INDICES = frozenset({"books", "relations"})


class LayoutError(ValueError):
    """A shard or replica count that cannot be; the message is one line for the user."""


@dataclass(frozen=True)
class IndexLayout:
    """Primary shards and replicas of the indices a job creates; ``None`` keeps the mapping
    file's value (1 shard, 0 replicas: one node holds everything, and a replica could never be
    assigned there).

    Shards go to the books and relations indices (``SHARDED_INDICES``), replicas to all three.
    Both are read when an index is created (a job's first run, a mapping migration): a shard
    count is fixed for the index's life (`bookdup reset` and indexing again changes it); a
    replica count given for an existing index is applied to it, since Elasticsearch changes
    replicas on a live index.
    """

    shards: int | None = None
    replicas: int | None = None

    def __post_init__(self) -> None:
        if self.shards is not None and self.shards < 1:
            raise LayoutError(f"shards must be at least 1, not {self.shards}")
        if self.replicas is not None and self.replicas < 0:
            raise LayoutError(f"replicas must be 0 or more, not {self.replicas}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: int | None) -> IndexLayout:
        """``BOOKDUP_SHARDS`` / ``BOOKDUP_REPLICAS``, then non-None ``overrides``."""
        env = os.environ if env is None else env
        values: dict[str, int] = {}
        for key, name in (("shards", "BOOKDUP_SHARDS"), ("replicas", "BOOKDUP_REPLICAS")):
            if text := env.get(name, "").strip():
                try:
                    values[key] = int(text)
                except ValueError:
                    raise LayoutError(f"{name} must be a whole number, not {text!r}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def settings(self, name: str, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The mapping file's ``settings`` of logical index ``name`` with this layout."""
        out = dict(settings)
        if self.shards is not None and name in SHARDED_INDICES:
            out["number_of_shards"] = self.shards
        if self.replicas is not None:
            out["number_of_replicas"] = self.replicas
        return out


Transform = Callable[[dict[str, Any]], dict[str, Any]]


def add_stems(source: dict[str, Any]) -> dict[str, Any]:
    """Books v1 → v2: the sampled stem hashes (``stems``) from the stored features."""
    features = source.get("features")
    if STEMS.field in source or not isinstance(features, dict) or "language" not in features:
        return source
    return {**source, STEMS.field: stem_sample_from_doc(features)}


def add_found_title(source: dict[str, Any]) -> dict[str, Any]:
    """Books v2 → v3: the title the opening text names (``found_title``), from the excerpt.
    ``edition_rank`` and ``partial`` are left to the next dedup run's cluster stage."""
    if "found_title" in source:
        return source
    return {**source, "found_title": title_from_text(str(source.get("excerpt") or ""))}


def keep_without_winnows(source: dict[str, Any]) -> dict[str, Any]:
    """Books v3 → v4 copies books as they are: the winnowed keys (``winnows``) are hashed from
    the whole word stream, which the stored features do not keep. Such a book is queried by its
    unique words until ``bookdup index`` reads its file again (its features_version is behind,
    so the file is re-extracted even though it did not change)."""
    return source


#: The features version that first stored word-prefix keys in ``winnows`` (books v5).
PREFIX_KEYS_VERSION = 4


def drop_word_winnows(source: dict[str, Any]) -> dict[str, Any]:
    """Books v4 → v5: the winnowed keys became word-prefix 5-grams, which a book's 3-gram
    keys never equal; a book stored before loses them and is queried by its unique words until
    ``bookdup index`` reads its file again (its features_version is behind)."""
    if WINNOWS.field not in source or source.get("features_version", 1) >= PREFIX_KEYS_VERSION:
        return source
    return {k: v for k, v in source.items() if k != WINNOWS.field}


def add_display_title(source: dict[str, Any]) -> dict[str, Any]:
    """The title search shows (``store.shown``): the read side takes it from doc values."""
    if MARKER in source:
        return source
    shown = shown_fields(
        source.get("title"),
        source.get("author"),
        source.get("found_title"),
        str(source.get("excerpt") or ""),
    )
    return {**source, MARKER: shown[MARKER]}


def upgrade_book(source: dict[str, Any]) -> dict[str, Any]:
    """A books document of any older version brought to the current one."""
    return add_display_title(
        drop_word_winnows(keep_without_winnows(add_found_title(add_stems(source))))
    )


#: Per logical index, what a migrated document goes through on its way to the new version.
TRANSFORMS: dict[str, Transform] = {"books": upgrade_book}


def load_definition(name: str) -> dict[str, Any]:
    """The JSON definition for one logical index."""
    text = resources.files("mappings").joinpath(f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)


#: Characters an Elasticsearch index name cannot hold (and ':' it no longer accepts).
_FORBIDDEN = re.compile(r'[\\/*?"<>|, #:]')
#: Bytes left for the prefix once the longest suffix ("-relations-v12") is added: an index
#: name may hold 255.
MAX_PREFIX_BYTES = 200


def prefix_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot start Elasticsearch index names, or None: a bad prefix is told
    at once, not as the node's 400 in the middle of a job."""
    if not prefix:
        return "empty"
    if prefix != prefix.lower():
        return "index names must be lowercase"
    if prefix[0] in "-_+":
        return f"index names cannot start with {prefix[0]!r}"
    bad = _FORBIDDEN.search(prefix)
    if bad:
        return f"index names cannot hold {bad.group()!r}"
    if len(prefix.encode("utf-8")) > MAX_PREFIX_BYTES:
        return f"longer than {MAX_PREFIX_BYTES} bytes"
    return None


@dataclass(frozen=True)
class IndexNames:
    """Alias names for one deployment; a prefix lets tests and tenants share a cluster."""

    prefix: str = DEFAULT_PREFIX

    def __post_init__(self) -> None:
        problem = prefix_problem(self.prefix)
        if problem:
            raise ValueError(f"index prefix {self.prefix!r}: {problem}")

    @property
    def books(self) -> str:
        return f"{self.prefix}-books"

    @property
    def relations(self) -> str:
        return f"{self.prefix}-relations"

    @property
    def runs(self) -> str:
        return f"{self.prefix}-runs"

    def alias(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def concrete(self, name: str, version: int) -> str:
        return f"{self.prefix}-{name}-v{version}"


def _alias_target(client: Elasticsearch, alias: str) -> str | None:
    if not client.indices.exists_alias(name=alias):
        return None
    return next(iter(client.indices.get_alias(name=alias).body))


def ensure_indices(
    client: Elasticsearch, names: IndexNames, layout: IndexLayout | None = None
) -> dict[str, str]:
    """Create missing indices and aliases; migrate an index whose mapping version is behind.

    New indices get ``layout``'s shards and replicas (default: ``IndexLayout.from_env()``).
    Returns alias → concrete index. Safe to call on every job start.
    """
    layout = IndexLayout.from_env() if layout is None else layout
    result = {}
    for name in LOGICAL_INDICES:
        definition = load_definition(name)
        version = int(definition["version"])
        alias = names.alias(name)
        wanted = names.concrete(name, version)
        current = _alias_target(client, alias)
        if current == wanted:
            _resume_refresh(client, wanted)
            _add_new_fields(client, wanted, definition["mappings"]["properties"])
            _apply_replicas(client, wanted, layout)
            result[alias] = wanted
            continue
        if not client.indices.exists(index=wanted):
            client.indices.create(
                index=wanted,
                settings=layout.settings(name, definition["settings"]),
                mappings=definition["mappings"],
            )
        if current is None:
            client.indices.update_aliases(actions=[{"add": {"index": wanted, "alias": alias}}])
        else:
            migrate(client, current, wanted, alias, TRANSFORMS.get(name))
        result[alias] = wanted
    return result


def _new_fields(mapped: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """The fields (or a field's added multi-fields) ``wanted`` has and ``mapped`` lacks."""
    new = {}
    for name, spec in wanted.items():
        have = mapped.get(name)
        if have is None or set(spec.get("fields", {})) - set(have.get("fields", {})):
            new[name] = spec
    return new


def _add_new_fields(client: Elasticsearch, index: str, wanted: Mapping[str, Any]) -> None:
    """Map the fields a definition gained in place (an added field or multi-field needs no new
    version or copy): documents indexed before lack them, and their readers fall back."""
    body = client.indices.get_mapping(index=index).body
    mapped = body.get(index, {}).get("mappings", {}).get("properties", {})
    new = _new_fields(mapped, wanted)
    if new:
        with_retries()(client.indices.put_mapping)(index=index, properties=new)


def _apply_replicas(client: Elasticsearch, index: str, layout: IndexLayout) -> None:
    """Give an existing index the replica count asked for (a dynamic setting)."""
    if layout.replicas is None:
        return
    body = client.indices.get_settings(index=index, name="index.number_of_replicas").body
    current = body.get(index, {}).get("settings", {}).get("index", {}).get("number_of_replicas")
    if current is None or int(current) != layout.replicas:
        client.indices.put_settings(
            index=index, settings={"index": {"number_of_replicas": layout.replicas}}
        )


def migrate(
    client: Elasticsearch, old: str, new: str, alias: str, transform: Transform | None = None
) -> int:
    """Copy every document from ``old`` to ``new`` (through ``transform``, when given) and point
    ``alias`` at ``new`` atomically."""
    client.indices.refresh(index=old)
    keep: Transform = transform or (lambda source: source)
    actions = (
        {"_op_type": "index", "_index": new, "_id": hit["_id"], "_source": keep(hit["_source"])}
        for hit in iter_documents(client, old)
    )
    report = bulk_write(client, actions)
    client.indices.refresh(index=new)
    client.indices.update_aliases(
        actions=[
            {"remove": {"index": old, "alias": alias}},
            {"add": {"index": new, "alias": alias}},
        ]
    )
    return report.ok


def _prefix_indices(client: Elasticsearch, names: IndexNames) -> list[str]:
    """The concrete indices behind this prefix's aliases (every version), sorted."""
    pattern = ",".join(f"{names.alias(name)}-v*" for name in LOGICAL_INDICES)
    return sorted(client.indices.get(index=pattern, allow_no_indices=True).body)


def existing_indices(client: Elasticsearch, names: IndexNames) -> dict[str, int]:
    """Concrete index → document count, for every index `drop_indices` would delete."""
    return {
        index: int(client.count(index=index)["count"]) for index in _prefix_indices(client, names)
    }


def drop_indices(client: Elasticsearch, names: IndexNames) -> None:
    """Delete every concrete index behind this prefix's aliases (tests, `bookdup reset`)."""
    # Wildcard deletes are refused by default (destructive_requires_name); name each index.
    for index in _prefix_indices(client, names):
        client.indices.delete(index=index)


#: The refresh setting `paused_refresh` leaves behind when its job is killed mid-write.
_PAUSED = "-1"


@contextmanager
def paused_refresh(client: Elasticsearch, index: str) -> Iterator[None]:
    """Writes inside become searchable together, at the explicit refresh that follows.

    Automatic refreshes are switched off while the block runs, so a reader never searches a
    half-written batch of updates (each shard's refresh publishes all of them at once; with
    several shards (``IndexLayout``) the shards are refreshed one after another, a moment
    apart). A job killed inside leaves the setting paused: every job's
    `ensure_indices` resumes it.
    """
    put_settings = with_retries()(client.indices.put_settings)
    put_settings(index=index, settings={"index": {"refresh_interval": _PAUSED}})
    try:
        yield
    finally:
        put_settings(index=index, settings={"index": {"refresh_interval": None}})


def refresh(client: Elasticsearch, index: str | list[str]) -> None:
    """Make a job's writes searchable; retried like its writes, so that a node restarting
    under the job does not end it."""
    with_retries()(client.indices.refresh)(index=index)


def flush(client: Elasticsearch, index: str | list[str]) -> None:
    """Commit ``index``: a segment whose every document a job rewrote leaves the disk now, not
    at the node's next idle flush (a first dedup rewrites every book: twice the index on disk
    until then)."""
    with_retries()(client.indices.flush)(index=index)


#: The largest shard merged into one segment after an index job: far under the node's 5 GB
#: merged-segment ceiling (a bigger segment would be left out of later merges), and a rewrite
#: of seconds, not minutes; a bigger collection keeps the node's own merge policy.
MERGE_MAX_SHARD_BYTES = 2 << 30
#: A merge waits for the node's work, not the client's default request timeout.
MERGE_TIMEOUT_S = 900.0


def merge_segments(client: Elasticsearch, index: str) -> bool:
    """Merge each shard of ``index`` into one segment when it is small enough
    (``MERGE_MAX_SHARD_BYTES``) and holds more than one; whether it merged. A candidate query
    looks up its ~400 terms in every segment: at 1K-3K books a bulk-loaded index's 3-4
    segments cost the translated queries twice one segment's node time (docs/EVALUATION.md)."""
    body = client.indices.stats(index=index, metric="store,segments").body
    primaries = body["_all"]["primaries"]
    settings = client.indices.get_settings(index=index, name="index.number_of_shards").body
    shards = sum(int(v["settings"]["index"]["number_of_shards"]) for v in settings.values())
    too_big = primaries["store"]["size_in_bytes"] > MERGE_MAX_SHARD_BYTES * max(shards, 1)
    if too_big or primaries["segments"]["count"] <= shards:
        return False
    merge = client.options(request_timeout=MERGE_TIMEOUT_S).indices.forcemerge
    with_retries()(merge)(index=index, max_num_segments=1)
    return True


def _resume_refresh(client: Elasticsearch, index: str) -> None:
    """Undo a pause a killed job left behind (a reset to the default, as `paused_refresh` does)."""
    settings = client.indices.get_settings(index=index, name="index.refresh_interval").body
    if (
        settings.get(index, {}).get("settings", {}).get("index", {}).get("refresh_interval")
        == _PAUSED
    ):
        client.indices.put_settings(index=index, settings={"index": {"refresh_interval": None}})


def add_pivot_field(client: Elasticsearch, names: IndexNames) -> None:
    """Map the optional ``pivots`` key field (issue 27) in the books index: an added field
    needs no new mapping version or copy, and only index jobs with ``pivot_pairs`` add it.

    Raises ValueError for an index whose ``_source`` excludes the field (books v4 indices
    created by an earlier build): the dedup job's partial updates would drop the keys."""
    mapping = with_retries()(client.indices.get_mapping)(index=names.books).body
    source = next(iter(mapping.values()))["mappings"].get("_source", {})
    if PIVOTS.field in source.get("excludes", []):
        raise ValueError(
            f"{names.books} keeps pivot pair keys out of _source, so the dedup job's updates "
            "would drop them: `bookdup reset` and index again, or index with --no-pivot-pairs"
        )
    with_retries()(client.indices.put_mapping)(
        index=names.books,
        properties={
            PIVOTS.field: {
                "type": "keyword",
                "index_options": "docs",
                "doc_values": PIVOTS.doc_values,
                "eager_global_ordinals": False,
            }
        },
    )


def books_without_pivots(client: Elasticsearch, names: IndexNames) -> tuple[int, int]:
    """(books without pivot pair keys, books): what ``--pivot-pairs`` cannot reach — books
    indexed without the flag (an unchanged book is not indexed again) or in a language no
    lexicon maps into English; every book when the field was never added."""
    count = with_retries()(client.count)
    total = count(index=names.books)["count"]
    missing = count(
        index=names.books, query={"bool": {"must_not": [{"exists": {"field": PIVOTS.field}}]}}
    )["count"]
    return int(missing), int(total)
