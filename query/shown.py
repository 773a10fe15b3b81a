"""Books as the read side shows them, read from doc values (``store.shown``): a search hit or a
related book loads no stored ``_source``, except a book indexed before its display title was
stored, read from its ``_source`` instead (all such books of an answer in one ``mget``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elasticsearch import Elasticsearch

from query.context import READ_RETRY_S
from query.display import display_title
from store.retry import with_retries
from store.shown import DOC_VALUES, from_doc_values


def read_body(extra: Sequence[str] = ()) -> dict[str, Any]:
    """How a hit is read: the shown fields' (and ``extra`` fields') doc values, no stored field."""
    return {
        "_source": False,
        "stored_fields": "_none_",
        "docvalue_fields": [*DOC_VALUES.values(), *extra],
    }


READ_SHOWN = read_body()


def shown_books(
    client: Elasticsearch,
    index: str,
    hits: list[dict[str, Any]],
    source_fields: Sequence[str],
    extra: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Each hit's shown fields with its ``display_title`` (hits read with ``read_body(extra)``);
    a book without its doc values is read from ``_source`` (``source_fields``)."""
    docs: list[dict[str, Any] | None] = []
    for hit in hits:
        fields = hit.get("fields", {})
        doc = from_doc_values(fields)
        docs.append(doc if doc is None else {**doc, **{e: fields.get(e, [None])[0] for e in extra}})
    ids = [h["fields"]["book_id"][0] for h, d in zip(hits, docs, strict=True) if d is None]
    if ids:
        found = with_retries(READ_RETRY_S)(client.mget)(
            index=index, ids=ids, source=list(source_fields)
        ).body["docs"]
        sources = {d["_id"]: d["_source"] for d in found if d.get("found")}
        for i, (hit, doc) in enumerate(zip(hits, docs, strict=True)):
            if doc is None:
                book_id = hit["fields"]["book_id"][0]
                src = sources.get(book_id, {"book_id": book_id})
                docs[i] = {**src, "book_id": book_id, "display_title": display_title(src)}
    return [d for d in docs if d is not None]
