"""The query shapes the design rests on, against the real node: band-count scoring, collapse."""

from __future__ import annotations

from store.bulk import bulk_write
from store.msearch import msearch


def _index(es_client, index, docs):
    actions = [{"_index": index, "_id": d["book_id"], "_source": d} for d in docs]
    report = bulk_write(es_client, actions, refresh="wait_for")
    assert not report.failures


def test_score_counts_matched_bands(es_client, index_names):
    docs = [
        {"book_id": "a", "bands": ["0_aa", "1_bb", "2_cc", "3_dd"]},
        {"book_id": "b", "bands": ["0_aa", "1_bb", "2_cc", "3_xx"]},
        {"book_id": "c", "bands": ["0_aa", "1_yy", "2_zz", "3_xx"]},
        {"book_id": "d", "bands": ["0_qq", "1_yy", "2_zz", "3_ww"]},
    ]
    _index(es_client, index_names.books, docs)
    should = [{"constant_score": {"filter": {"term": {"bands": k}}}} for k in docs[0]["bands"]]
    body = {"query": {"bool": {"should": should, "minimum_should_match": 1}}, "size": 10}
    [result] = msearch(es_client, index_names.books, [body])
    scores = {h["_id"]: h["_score"] for h in result["hits"]["hits"]}
    assert scores == {"a": 4.0, "b": 3.0, "c": 1.0}


def test_terms_set_requires_k_shared_keys(es_client, index_names):
    docs = [
        {"book_id": "a", "uniq": ["1", "2", "3", "4"]},
        {"book_id": "b", "uniq": ["1", "2", "9"]},
        {"book_id": "c", "uniq": ["1", "8", "9"]},
    ]
    _index(es_client, index_names.books, docs)
    body = {
        "query": {"terms_set": {"uniq": {"terms": ["1", "2", "3"], "minimum_should_match": 2}}},
        "size": 10,
    }
    [result] = msearch(es_client, index_names.books, [body])
    assert sorted(h["_id"] for h in result["hits"]["hits"]) == ["a", "b"]


def test_collapse_on_cluster_field_gives_one_hit_per_cluster(es_client, index_names):
    docs = [
        {"book_id": "a1", "title": "Alice in Wonderland", "edition_cluster": "e-a1"},
        {"book_id": "a2", "title": "Alice in Wonderland illustrated", "edition_cluster": "e-a1"},
        {"book_id": "a3", "title": "Alice in Wonderland abridged", "edition_cluster": "e-a1"},
        {"book_id": "b1", "title": "Alice through the looking glass", "edition_cluster": "e-b1"},
    ]
    _index(es_client, index_names.books, docs)
    body = {
        "query": {"match": {"title": "alice"}},
        "collapse": {"field": "edition_cluster", "inner_hits": {"name": "editions", "size": 5}},
        "size": 10,
    }
    [result] = msearch(es_client, index_names.books, [body])
    hits = result["hits"]["hits"]
    assert sorted(h["fields"]["edition_cluster"][0] for h in hits) == ["e-a1", "e-b1"]
    by_cluster = {h["fields"]["edition_cluster"][0]: h for h in hits}
    assert by_cluster["e-a1"]["inner_hits"]["editions"]["hits"]["total"]["value"] == 3
