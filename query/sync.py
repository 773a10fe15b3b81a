"""Cluster ids in the operator's own catalog index: ``bookdup sync --into INDEX``.

The catalog index is not bookdup's: it was made by the operator's application and holds its
own records. ``sync_clusters`` only ever sends partial updates (``doc`` with
``edition_cluster``, ``work_cluster`` and, if asked, ``related_books``) to documents whose
values differ from bookdup's, so every other field and every unchanged document is left as it
is (same ``_version``). The two keyword fields are added to the catalog's mapping when absent;
a field of that name with another type is an error, never overwritten.

A catalog document is linked to a bookdup book by its ``_id`` (default) or by the value of
``id_field`` (a keyword field of the catalog holding bookdup's book id; several catalog
records may hold the same book). bookdup's own indices are read, never written.

It lives on the read side because it publishes what the read side shows; the server does not
expose it (the API is read-only).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from elasticsearch import Elasticsearch

from query.context import BadRequest
from store.bulk import bulk_write
from store.iterate import batched, iter_documents
from store.retry import with_retries
from store.schema import IndexNames

CLUSTER_FIELDS = ("edition_cluster", "work_cluster")
RELATED_FIELD = "related_books"
BATCH = 500
#: Catalog records per book id looked up at most (one page of a terms query).
MAX_RECORDS_PER_BATCH = 10_000


@dataclass(frozen=True)
class SyncOptions:
    id_field: str | None = None
    related: bool = False
    dry_run: bool = False


@dataclass
class SyncSummary:
    matched: int = 0  # catalog documents linked to a bookdup book
    updated: int = 0  # of those, written (or to write, in a dry run)
    unchanged: int = 0
    unmatched: int = 0  # bookdup books with no catalog document
    fields_added: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fields(options: SyncOptions) -> list[str]:
    return [*CLUSTER_FIELDS, *([RELATED_FIELD] if options.related else [])]


def _check_target(client: Elasticsearch, names: IndexNames, target: str) -> None:
    if not target or any(c in target for c in "*?,") or target.startswith(("_", "-")):
        raise BadRequest(f"--into must name one index or alias, not {target!r}")
    if target == names.prefix or target.startswith(f"{names.prefix}-"):
        raise BadRequest(f"{target!r} is one of bookdup's own indices: sync writes to a catalog")
    if not client.indices.exists(index=target):
        raise BadRequest(f"no index or alias named {target!r}")


def ensure_fields(client: Elasticsearch, target: str, wanted: list[str]) -> list[str]:
    """Add the keyword fields the catalog lacks; BadRequest if one exists with another type."""
    mappings = client.indices.get_mapping(index=target).body
    added: set[str] = set()
    for index, body in mappings.items():
        props = body.get("mappings", {}).get("properties", {})
        missing = []
        for name in wanted:
            kind = props.get(name, {}).get("type")
            if kind is None:
                missing.append(name)
            elif kind != "keyword":
                raise BadRequest(f"{index} already maps {name} as {kind}, not keyword")
        if missing:
            client.indices.put_mapping(
                index=index, properties={n: {"type": "keyword"} for n in missing}
            )
            added.update(missing)
    return sorted(added)


def _related_ids(client: Elasticsearch, names: IndexNames, ids: list[str]) -> dict[str, list]:
    query = {"bool": {"should": [{"terms": {"a": ids}}, {"terms": {"b": ids}}]}}
    out: dict[str, set[str]] = defaultdict(set)
    for hit in iter_documents(client, names.relations, query=query, source=["a", "b"]):
        a, b = hit["_source"]["a"], hit["_source"]["b"]
        out[a].add(b)
        out[b].add(a)
    return {k: sorted(v) for k, v in out.items()}


def _catalog_records(
    client: Elasticsearch, target: str, ids: list[str], id_field: str | None, fields: list[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(bookdup book id, catalog hit) for every catalog record of the books ``ids``."""
    if id_field is None:
        docs = with_retries()(client.mget)(index=target, ids=ids, source=fields).body["docs"]
        yield from ((d["_id"], d) for d in docs if d.get("found"))
        return
    response = with_retries()(client.search)(
        index=target,
        query={"terms": {id_field: ids}},
        size=MAX_RECORDS_PER_BATCH,
        source=[id_field, *fields],
    ).body
    for hit in response["hits"]["hits"]:
        value = hit["_source"].get(id_field)
        for book_id in value if isinstance(value, list) else [value]:
            if book_id in ids:
                yield str(book_id), hit


def _updates(
    client: Elasticsearch,
    names: IndexNames,
    target: str,
    options: SyncOptions,
    summary: SyncSummary,
) -> Iterator[dict[str, Any]]:
    """Partial-update actions for the catalog records whose values differ from bookdup's."""
    fields = _fields(options)
    books = iter_documents(client, names.books, source=list(CLUSTER_FIELDS))
    for batch in batched(books, BATCH):
        wanted = {h["_id"]: {f: h["_source"].get(f) for f in CLUSTER_FIELDS} for h in batch}
        if options.related:
            related = _related_ids(client, names, list(wanted))
            for book_id, values in wanted.items():
                values[RELATED_FIELD] = related.get(book_id, [])
        seen: set[str] = set()
        for book_id, hit in _catalog_records(
            client, target, list(wanted), options.id_field, fields
        ):
            seen.add(book_id)
            summary.matched += 1
            current = {f: hit.get("_source", {}).get(f) for f in fields}
            if current == wanted[book_id]:
                summary.unchanged += 1
                continue
            summary.updated += 1
            yield {
                "_op_type": "update",
                "_index": hit["_index"],
                "_id": hit["_id"],
                "doc": wanted[book_id],
            }
        summary.unmatched += len(wanted) - len(seen)


def sync_clusters(
    client: Elasticsearch, names: IndexNames, target: str, options: SyncOptions | None = None
) -> SyncSummary:
    """Write bookdup's cluster ids into the catalog index ``target`` where they changed."""
    options = options or SyncOptions()
    _check_target(client, names, target)
    summary = SyncSummary()
    if not options.dry_run:
        summary.fields_added = ensure_fields(client, target, _fields(options))
    actions = _updates(client, names, target, options, summary)
    if options.dry_run:
        for _ in actions:
            pass
        return summary
    report = bulk_write(client, actions, refresh="wait_for")
    summary.failures = [f"{f.id}: {f.reason}" for f in report.failures]
    summary.updated -= len(report.failures)
    return summary
