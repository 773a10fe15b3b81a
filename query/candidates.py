"""Candidate pairs from term queries: band collisions, shared unique words, translated unique words.

No pair of books is ever compared unless the inverted index says they share keys. Keys held by
too many books (licence boilerplate, very common band values) carry no evidence and would make
every book a candidate of every other, so they are found from their document frequency and left
out of the queries, as passim does with its max-df cut.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch

from indexer.retry import with_retries

BANDS_FIELD = "bands"
UNIQ_FIELD = "uniq"


@dataclass(frozen=True)
class CandidateParams:
    """How candidates are drawn; defaults chosen on generated corpora (see README, Evaluation)."""

    max_candidates: int = 100  # per book and query kind; the best-scoring ones are kept
    min_shared_bands: int = 1  # one LSH band collision is a candidate (that is what bands are for)
    query_modulus: int = 4  # query with 1 in N unique-word hashes (consistent sample)
    min_shared_uniq: int = 8  # sampled unique words two books must share
    min_shared_translated: int = 8  # sampled translated unique words shared with the target
    max_query_terms: int = 4000  # cap on a query's clauses (longest books)
    max_df_fraction: float = 0.01  # a key in more than this share of books is boilerplate ...
    min_max_df: int = 20  # ... but never cut keys held by fewer books than this

    def max_df(self, n_books: int) -> int:
        """Document frequency above which a key is left out of candidate queries."""
        return max(self.min_max_df, math.ceil(self.max_df_fraction * n_books))


def high_df_terms(client: Elasticsearch, index: str, field: str, max_df: int) -> set[str]:
    """Every value of ``field`` held by more than ``max_df`` books (terms aggregation)."""
    stop: set[str] = set()
    partitions = 1
    search = with_retries()(client.search)
    for partition in range(64):
        if partition >= partitions:
            break
        response = search(
            index=index,
            size=0,
            aggs={
                "df": {
                    "terms": {
                        "field": field,
                        "min_doc_count": max_df + 1,
                        "size": 10000,
                        "include": {"partition": partition, "num_partitions": partitions},
                    }
                }
            },
        ).body
        buckets = response["aggregations"]["df"]["buckets"]
        if len(buckets) >= 10000 and partitions == 1:
            partitions = 64  # very many boilerplate keys: page through them in partitions
            stop.clear()
            continue
        stop.update(b["key"] for b in buckets)
    return stop


def sample_terms(terms: Iterable[str], modulus: int, stop: set[str], limit: int) -> list[str]:
    """The consistent sample of hex hash terms used as query keys (same words for every book)."""
    picked = [t for t in terms if int(t, 16) % modulus == 0 and t not in stop]
    return picked[:limit]


def _counting_query(field: str, terms: Sequence[str], minimum: int) -> dict[str, Any]:
    """A bool query whose score is exactly the number of ``terms`` a book holds."""
    return {
        "bool": {
            "should": [{"constant_score": {"filter": {"term": {field: t}}}} for t in terms],
            "minimum_should_match": minimum,
        }
    }


def candidate_body(
    book_id: str,
    field: str,
    terms: Sequence[str],
    minimum: int,
    size: int,
    *,
    language: str | None = None,
    exclude_language: str | None = None,
) -> dict[str, Any] | None:
    """One search body: books sharing ≥ ``minimum`` of ``terms``, best first; None if hopeless."""
    if len(terms) < minimum or not terms:
        return None
    query = _counting_query(field, terms, minimum)
    filters: list[dict[str, Any]] = []
    if language:
        filters.append({"term": {"language": language}})
    must_not: list[dict[str, Any]] = [{"ids": {"values": [book_id]}}]
    if exclude_language:
        must_not.append({"term": {"language": exclude_language}})
    return {
        "query": {"bool": {"must": [query], "filter": filters, "must_not": must_not}},
        "size": size,
        "_source": False,
        "track_total_hits": False,
    }


def hits_with_scores(response: dict[str, Any]) -> list[tuple[str, float]]:
    """(book id, number of shared keys) for each hit of a candidate search."""
    return [(hit["_id"], float(hit["_score"])) for hit in response["hits"]["hits"]]
