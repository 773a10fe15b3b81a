"""Catalog search with duplicates collapsed: one hit per edition (or work) cluster.

``search`` pages over *clusters*, not books: Elasticsearch's ``collapse`` keeps the best book of
each cluster and ``from``/``size`` count collapsed groups, so page 2 starts at the 11th cluster
whatever the number of matching books; the number of groups comes from a ``cardinality``
aggregation on the same field (exact below 40,000 groups, HyperLogLog's precision threshold).
Each hit carries its cluster's real size (every book in it, not only those matching the query),
its editions and its translations, counted in the second request, which also gives each
cluster's matching books (a ``top_hits`` aggregation over the page's clusters: two requests on
the node where ``inner_hits`` ran one search per cluster). Shown fields are read from doc values
(``query.shown``): no hit loads a book's ``_source``.

The book shown for a cluster is its representative, chosen by the dedup job when it computed
the clusters (``edition_rank`` 0: the container over its parts, the full text over an
abridgement, the cleanest scan; ``bookdup.cluster.representative_ranks``): the collapsed groups
are ordered by their best-scoring book, and the cluster's first matching book, sorted by rank,
is the book shown. A book that is a part or an abridgement of another (``partial``) scores
``PARTIAL_WEIGHT`` of its relevance, so the full text's cluster comes first. An index the dedup
job has not ranked yet (no ``edition_rank``) shows the best-scoring book as before.

Text matching: the books index analyses title, author and opening text twice, with the
``standard`` analyzer and with ``simple`` (letters only, so "Scrooge's" is also "scrooge");
the integ-test distribution has no language analyzers (no analysis-common), so no stemming.
"""

from __future__ import annotations

import math
from typing import Any

from elasticsearch import Elasticsearch

from query.context import READ_RETRY_S, BadRequest
from query.shown import READ_SHOWN, shown_books
from store.retry import with_retries

CLUSTER_FIELDS = {"edition": "edition_cluster", "work": "work_cluster"}
COLLAPSE_CHOICES = ("edition", "work", "none")
MAX_QUERY_CHARS = 500
MAX_PER_PAGE = 100
#: index.max_result_window: from + size beyond it is refused by Elasticsearch.
MAX_WINDOW = 10_000
MEMBERS_SHOWN = 5
#: Relevance kept by a book that is a part or an abridgement of another indexed book.
PARTIAL_WEIGHT = 0.5
HIT_FIELDS = [
    "book_id",
    "title",
    "author",
    "found_title",
    "language",
    "year",
    "edition_cluster",
    "work_cluster",
]
MEMBER_FIELDS = ["book_id", "title", "found_title", "language", "year"]
#: What a book without its shown doc values (``store.shown``) is read with instead: its shown
#: fields, and the opening text its display title may need.
SOURCE_FIELDS = [*HIT_FIELDS, "partial", "excerpt"]
SEARCH_FIELDS = [
    "title^3",
    "title.words^3",
    "found_title^2",
    "found_title.words^2",
    "author^2",
    "author.words^2",
    "excerpt",
    "excerpt.words",
]


def _check(q: str, collapse: str, page: int, per_page: int) -> str:
    text = " ".join((q or "").split())
    if not text:
        raise BadRequest("the query is empty: give some words of a title, author or text")
    if len(text) > MAX_QUERY_CHARS:
        raise BadRequest(f"the query is too long ({len(text)} > {MAX_QUERY_CHARS} characters)")
    if collapse not in COLLAPSE_CHOICES:
        raise BadRequest(f"collapse must be one of {', '.join(COLLAPSE_CHOICES)}, not {collapse!r}")
    if not 1 <= per_page <= MAX_PER_PAGE:
        raise BadRequest(f"per_page must be between 1 and {MAX_PER_PAGE}")
    if page < 1 or page * per_page > MAX_WINDOW:
        raise BadRequest(f"page must be between 1 and {MAX_WINDOW // per_page}")
    return text


def _query(text: str, filters: dict[str, Any]) -> dict[str, Any]:
    clauses: list[dict[str, Any]] = []
    if filters.get("language"):
        clauses.append({"term": {"language": filters["language"]}})
    years = {k: filters[f"year_{k}"] for k in ("from", "to") if filters.get(f"year_{k}")}
    if years:
        clauses.append({"range": {"year": {"gte": years.get("from"), "lte": years.get("to")}}})
    match = {"multi_match": {"query": text, "fields": SEARCH_FIELDS, "tie_breaker": 0.3}}
    scored = {
        "function_score": {
            "query": match,
            "functions": [{"filter": {"term": {"partial": True}}, "weight": PARTIAL_WEIGHT}],
            "boost_mode": "multiply",
            "score_mode": "multiply",
        }
    }
    return {"bool": {"must": [scored], "filter": clauses}}


def _member_sort(collapse: str) -> list[dict[str, Any]]:
    """Order of a cluster's matching books: its representative first (see module docstring).

    An edition cluster: by the stored rank. A work cluster holds several languages and
    editions: the complete texts first, then relevance (the query's language), then the rank
    in the edition cluster. ``unmapped_type``: an index created before these fields sorts
    them as missing, by relevance."""
    rank = {"edition_rank": {"order": "asc", "missing": "_last", "unmapped_type": "integer"}}
    relevance = [{"_score": "desc"}, {"book_id": "asc"}]
    if collapse == "edition":
        return [rank, *relevance]
    partial = {"partial": {"order": "asc", "missing": "_first", "unmapped_type": "boolean"}}
    return [partial, relevance[0], rank, relevance[1]]


def _page_body(text: str, collapse: str, page: int, per_page: int, filters: dict) -> dict[str, Any]:
    body: dict[str, Any] = {
        "query": _query(text, filters),
        "from": (page - 1) * per_page,
        "size": per_page,
        "sort": [{"_score": "desc"}, {"book_id": "asc"}],
        "track_scores": True,
        "track_total_hits": True,
        **READ_SHOWN,
    }
    if collapse != "none":
        field = CLUSTER_FIELDS[collapse]
        body["collapse"] = {"field": field}
        body["aggs"] = {"groups": {"cardinality": {"field": field, "precision_threshold": 40000}}}
    return body


def _members_body(
    text: str, collapse: str, filters: dict, keys: list[str], editions: list[str], works: list[str]
) -> dict[str, Any]:
    """The matching books of the page's clusters, each cluster's representative first, and the
    clusters' sizes: one request with a ``top_hits`` aggregation, where ``inner_hits`` would run
    one search per cluster."""
    field = CLUSTER_FIELDS[collapse]
    query = _query(text, filters)
    query["bool"]["filter"].append({"terms": {field: [k for k in keys if k]}})
    top = {"size": MEMBERS_SHOWN, "sort": _member_sort(collapse), **READ_SHOWN}
    members = {
        "terms": {"field": field, "size": len(keys)},
        "aggs": {"top": {"top_hits": top}},
    }
    aggs = {"members": members, **_counts_aggs(editions, works)}
    return {"size": 0, "query": query, "aggs": aggs}


def _counts_aggs(editions: list[str], works: list[str]) -> dict[str, Any]:
    """Books per edition cluster and per language of each work cluster, over the whole index."""
    ed = {"terms": {"field": "edition_cluster", "size": len(editions) or 1}}
    wk = {
        "terms": {"field": "work_cluster", "size": len(works) or 1},
        "aggs": {"lang": {"terms": {"field": "language", "size": 50}}},
    }
    return {
        "counts": {
            "global": {},
            "aggs": {
                "ed": {"filter": {"terms": {"edition_cluster": editions}}, "aggs": {"c": ed}},
                "wk": {"filter": {"terms": {"work_cluster": works}}, "aggs": {"c": wk}},
            },
        }
    }


def _counts(aggs: dict[str, Any]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    ed = {b["key"]: b["doc_count"] for b in aggs["ed"]["c"]["buckets"]}
    wk = {
        b["key"]: {lb["key"]: lb["doc_count"] for lb in b["lang"]["buckets"]}
        for b in aggs["wk"]["c"]["buckets"]
    }
    return ed, wk


def cluster_counts(
    client: Elasticsearch, index: str, editions: list[str], works: list[str]
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Books per edition cluster, and books per language of each work cluster."""
    if not editions and not works:
        return {}, {}
    body = {"size": 0, "aggs": _counts_aggs(editions, works)}
    aggs = with_retries(READ_RETRY_S)(client.search)(index=index, **body).body["aggregations"]
    return _counts(aggs["counts"])


def _hit(score: Any, members: list[dict[str, Any]], matching: int) -> dict[str, Any]:
    """A page's hit: its cluster's representative (the first member, see ``_member_sort``) with
    the group's score, its best book's, the one the groups are ordered by."""
    shown = members[0]
    item = {k: shown.get(k) for k in HIT_FIELDS}
    item["display_title"] = shown["display_title"]
    item["score"] = score
    item["_partial"] = bool(shown.get("partial"))
    item["matching"] = matching
    item["members"] = [
        {**{k: m.get(k) for k in MEMBER_FIELDS}, "display_title": m["display_title"]}
        for m in members
    ]
    return item


def complete_first(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's hits with, within each work, the complete texts before the parts and
    abridgements: the places a work's hits hold on the page are refilled with them in that
    order (relevance kept otherwise). Halving a part's relevance (``PARTIAL_WEIGHT``) is not
    always enough: a children's abridgement titled "Alice in Wonderland" whose opening says
    "Alice" at every line outscores the full text by more than that."""
    places: dict[Any, list[int]] = {}
    for i, hit in enumerate(hits):
        places.setdefault(hit.get("work_cluster") or ("book", hit.get("book_id")), []).append(i)
    out = list(hits)
    for indices in places.values():
        ordered = sorted((hits[i] for i in indices), key=lambda h: bool(h.get("_partial")))
        for i, hit in zip(indices, ordered, strict=True):
            out[i] = hit
    return out


def _add_counts(hit: dict[str, Any], collapse: str, ed: dict, wk: dict) -> None:
    langs = wk.get(hit["work_cluster"], {hit.get("language"): 1})
    hit["edition_count"] = ed.get(hit["edition_cluster"], 1)
    hit["work_count"] = sum(langs.values())
    hit["languages"] = langs
    # books of the same work in another language than this hit's (translations, and their
    # own editions)
    hit["translation_count"] = hit["work_count"] - langs.get(hit.get("language"), 0)
    hit["cluster_size"] = hit["work_count"] if collapse == "work" else hit["edition_count"]


def _flat_hit(raw: dict[str, Any], shown: dict[str, Any]) -> dict[str, Any]:
    item = _hit(raw.get("_score"), [shown], 1)
    item["members"] = [{k: item[k] for k in ("book_id", "title", "language", "year")}]
    return item


def _grouped_hits(
    client: Elasticsearch,
    index: str,
    text: str,
    collapse: str,
    filters: dict[str, Any],
    raws: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, dict[str, int]]]:
    """The page's collapsed hits with their members, and the sizes of the clusters the page's
    groups name (the representatives' other clusters are counted by ``_count``)."""
    if not raws:
        return [], {}, {}
    field = CLUSTER_FIELDS[collapse]
    keys = [h["fields"].get(field, [None])[0] for h in raws]
    clusters = {
        f: sorted({v for h in raws if (v := h["fields"].get(f, [None])[0])})
        for f in CLUSTER_FIELDS.values()
    }
    body = _members_body(
        text, collapse, filters, keys, clusters["edition_cluster"], clusters["work_cluster"]
    )
    aggs = with_retries(READ_RETRY_S)(client.search)(index=index, **body).body["aggregations"]
    buckets = {b["key"]: b for b in aggs["members"]["buckets"]}
    groups = [
        buckets[k]["top"]["hits"]["hits"] if k in buckets else [h]
        for h, k in zip(raws, keys, strict=True)
    ]
    shown = iter(shown_books(client, index, [m for g in groups for m in g], SOURCE_FIELDS))
    hits = [
        _hit(
            raw.get("_score"),
            [next(shown) for _ in group],
            buckets[key]["doc_count"] if key in buckets else 1,
        )
        for raw, key, group in zip(raws, keys, groups, strict=True)
    ]
    return hits, *_counts(aggs["counts"])


def _count(
    client: Elasticsearch,
    index: str,
    hits: list[dict[str, Any]],
    collapse: str,
    ed: dict[str, int],
    wk: dict[str, dict[str, int]],
) -> None:
    """Each hit's cluster sizes; the clusters not counted yet counted in one more request."""
    editions = sorted({h["edition_cluster"] for h in hits if h.get("edition_cluster")} - set(ed))
    works = sorted({h["work_cluster"] for h in hits if h.get("work_cluster")} - set(wk))
    more_ed, more_wk = cluster_counts(client, index, editions, works)
    ed, wk = {**ed, **more_ed}, {**wk, **more_wk}
    for hit in hits:
        _add_counts(hit, collapse, ed, wk)
        del hit["_partial"]


def search(
    client: Elasticsearch,
    index: str,
    q: str,
    *,
    collapse: str = "edition",
    filters: dict[str, Any] | None = None,
    page: int = 1,
    per_page: int = 10,
) -> dict[str, Any]:
    """One page of catalog hits, one per cluster (``collapse``), with the clusters' sizes.

    ``filters``: ``language`` (ISO 639-1), ``year_from``, ``year_to``. ``total_groups`` is the
    number of clusters (books when ``collapse`` is ``none``) matching; ``pages`` follows it.
    BadRequest for an empty or over-long query, an unknown ``collapse`` or a page out of range
    (past the last page of hits too; page 1 of no hits is an empty answer).
    """
    text = _check(q, collapse, page, per_page)
    body = _page_body(text, collapse, page, per_page, filters or {})
    response = with_retries(READ_RETRY_S)(client.search)(index=index, **body).body
    total_books = response["hits"]["total"]["value"]
    groups = response["aggregations"]["groups"]["value"] if collapse != "none" else total_books
    groups = min(groups, total_books)
    last = max(math.ceil(groups / per_page), 1)
    if page > last:
        unit = ("book" if collapse == "none" else f"{collapse} cluster") + "s" * (groups != 1)
        raise BadRequest(
            f"page {page} is past the last page: {groups} {unit} match{'es' * (groups == 1)}, "
            f"{last} page{'s' if last > 1 else ''} of {per_page}"
        )
    raws = response["hits"]["hits"]
    if collapse == "none":  # a flat list stays in order of (weighted) relevance
        hits = [
            _flat_hit(h, d)
            for h, d in zip(raws, shown_books(client, index, raws, SOURCE_FIELDS), strict=True)
        ]
        ed: dict[str, int] = {}
        wk: dict[str, dict[str, int]] = {}
    else:
        hits, ed, wk = _grouped_hits(client, index, text, collapse, filters or {}, raws)
        hits = complete_first(hits)
    _count(client, index, hits, collapse, ed, wk)
    return {
        "query": text,
        "collapse": collapse,
        "filters": filters or {},
        "page": page,
        "per_page": per_page,
        "total_books": total_books,
        "total_groups": groups,
        "pages": math.ceil(groups / per_page),
        "hits": hits,
    }
