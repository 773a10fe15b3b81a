"""Real Gutenberg books on a real node: ground-truth relations, collapsed catalog search,
"other editions" of an indexed book and of a file that is not in the index.

Boilerplate note. Every book here carries the Project Gutenberg licence, so every pair of the
ten books shares bands and unique words and is a candidate. The max-df cut that removes such
keys from the queries needs a key to be held by more than ``CandidateParams.min_max_df`` (50)
books, so with ten books it cuts nothing (``stop_terms == 0``) and all 45 pairs are verified.
The verification does not fall for the licence: the classifier's DUPNIQ-its / |LCS| / coverage
gates leave every unrelated pair UNRELATED, which the tests below check. Lowering the cut to fit
this corpus is worse, not better: with ``min_max_df=3`` the words that the four *Alice* books
share (their names, the story's own vocabulary) count as boilerplate too, and the abridged
English *Alice* loses its German translation. So the defaults are tested as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from bookdup.cluster import cluster_id
from query.match import lookup_book
from query.related import related_books
from query.search import search
from store.iterate import iter_documents
from tests.fixtures_books import gutenberg_body, paginate, write_txt
from tests.query.corpus import (
    ALICE,
    ALICE_DE,
    BOOKS,
    CAROL,
    EDITION_CLASSES,
    FULL_ALICE,
    LOOKING_GLASS,
    STORYLAND,
    TOM,
    TOM_PART1,
    WALDEN,
    key,
)


def catalog_search(
    client: Elasticsearch,
    index: str,
    text: str,
    *,
    collapse: str | None = "edition",
    size: int = 10,
    language: str | None = None,
) -> list[dict[str, Any]]:
    """The first ``size`` hits of ``query.search.search`` as a list (the form ``bookdup search
    --json`` printed before paging existed, kept for these tests only); ``editions`` lists the
    cluster's matching books."""
    result = search(
        client,
        index,
        text,
        collapse=collapse or "none",
        filters={"language": language} if language else None,
        per_page=size,
    )
    return [dict(h, editions=h["members"]) for h in result["hits"]]


def test_ground_truth_relations_of_real_books(real) -> None:
    _, indexed, summary, rels = real
    assert (indexed.indexed, indexed.failures) == (len(BOOKS), [])
    # the licence makes every pair a candidate and no key is cut (see the module docstring)
    assert (summary.stop_terms, summary.candidate_pairs) == (0, len(BOOKS) * (len(BOOKS) - 1) // 2)
    assert summary.verified_pairs == summary.candidate_pairs

    # editions of one text found, as edition classes
    for a, b in [FULL_ALICE, CAROL]:
        assert rels[key(a, b)]["relation"] in EDITION_CLASSES, (a, b)
    # the abridged Alice is an abridgement of both complete ones, and named as the shorter
    for full in FULL_ALICE:
        rel = rels[key(full, STORYLAND)]
        assert (rel["relation"], rel["b"], rel["direction"]) == ("ABRIDGED", STORYLAND, "b_in_a")
    assert rels[key(*CAROL)]["cs"] > 0.9 and rels[key(ALICE[0], ALICE[1])]["cs"] > 0.9
    # the first three chapters of Tom Sawyer inside the whole book, with the direction
    part = rels[key(TOM, TOM_PART1)]
    assert (part["relation"], part["a"], part["direction"]) == (
        "CONTIGUOUS_SUBSET",
        TOM_PART1,
        "a_in_b",
    )
    # the German Alice is a translation of the English ones
    for english in ALICE:
        rel = rels[key(english, ALICE_DE)]
        assert (rel["relation"], rel["translated"]) == ("TRANSLATION", True), english
    # nothing else: Looking-Glass (same author, same heroine) and Walden are unrelated to all
    related = {key(a, b) for a, b in [(ALICE[0], ALICE[1]), (ALICE[0], ALICE[2])]}
    related |= {key(ALICE[1], ALICE[2]), key(*CAROL), key(TOM, TOM_PART1)}
    related |= {key(e, ALICE_DE) for e in ALICE}
    assert set(rels) == related
    assert not any(LOOKING_GLASS in k or WALDEN in k for k in rels)


def test_clusters_of_real_books(es_client, real) -> None:
    names, _, summary, _ = real
    es_client.indices.refresh(index=names.books)
    fields = ["edition_cluster", "work_cluster"]
    ids = {
        h["_id"]: (h["_source"]["edition_cluster"], h["_source"]["work_cluster"])
        for h in iter_documents(es_client, names.books, source=fields)
    }
    assert {ids[b][0] for b in FULL_ALICE} == {cluster_id(FULL_ALICE)}
    assert ids[STORYLAND][0] == cluster_id([STORYLAND])  # an abridgement is not an edition
    assert ids[ALICE_DE][0] == cluster_id([ALICE_DE])
    assert {ids[b][1] for b in (*ALICE, ALICE_DE)} == {cluster_id([*ALICE, ALICE_DE])}
    assert ids[TOM] == ids[TOM_PART1] == (cluster_id([TOM, TOM_PART1]),) * 2
    assert ids[LOOKING_GLASS] == (cluster_id([LOOKING_GLASS]),) * 2
    assert (summary.edition_clusters, summary.work_clusters) == (7, 5)


# --- catalog search with collapse ----------------------------------------------------------


def test_catalog_search_returns_one_hit_per_edition_cluster(es_client, real) -> None:
    names = real[0]
    flat = catalog_search(
        es_client, names.books, "Alice Wonderland Wunderland", collapse=None, size=20
    )
    flat_ids = {r["book_id"] for r in flat}
    assert set(ALICE) | {ALICE_DE} <= flat_ids  # every edition matches on its own

    hits = catalog_search(es_client, names.books, "Alice Wonderland Wunderland", size=20)
    clusters = [r["edition_cluster"] for r in hits]
    assert len(clusters) == len(set(clusters))  # one hit per edition cluster
    assert len(hits) == len(flat) - 1  # the two complete English Alices collapse
    (english,) = [r for r in hits if r["edition_cluster"] == cluster_id(FULL_ALICE)]
    assert english["book_id"] in FULL_ALICE
    assert english["cluster_size"] == len(FULL_ALICE)
    assert sorted(e["book_id"] for e in english["editions"]) == sorted(FULL_ALICE)
    assert any(r["book_id"] == STORYLAND for r in hits)  # the abridgement stays apart
    assert any(r["book_id"] == ALICE_DE for r in hits)  # another language, another cluster

    works = catalog_search(
        es_client, names.books, "Alice Wonderland Wunderland", collapse="work", size=20
    )
    (work,) = [r for r in works if r["work_cluster"] == cluster_id([*ALICE, ALICE_DE])]
    assert work["cluster_size"] == len(ALICE) + 1
    assert not any(r["book_id"] == ALICE_DE for r in works if r is not work)

    german = catalog_search(es_client, names.books, "Alice Wunderland", language="de")
    assert [r["book_id"] for r in german] == [ALICE_DE]


def test_search_shows_each_cluster_by_its_most_complete_book(es_client, real) -> None:
    """The Tom Sawyer cluster is shown by the complete book, not its Part 1; "Alice" leads with
    a complete Alice, the abridged children's edition after it (issue 26, item 3)."""
    names = real[0]
    fields = ["edition_rank", "partial"]
    stored = {
        h["_id"]: (h["_source"]["edition_rank"], h["_source"]["partial"])
        for h in iter_documents(es_client, names.books, source=fields)
    }
    assert stored[TOM] == (0, False) and stored[TOM_PART1] == (1, True)
    assert stored[STORYLAND] == (0, True)  # alone in its edition cluster, but an abridgement
    assert sorted(stored[b] for b in FULL_ALICE) == [(0, False), (1, False)]

    for collapse in ("edition", "work"):
        hits = catalog_search(es_client, names.books, "Tom Sawyer", collapse=collapse)
        (tom,) = [h for h in hits if h["edition_cluster"] == cluster_id([TOM, TOM_PART1])]
        assert tom["book_id"] == TOM, collapse
        assert tom["display_title"] == "[The Adventures of Tom Sawyer, Complete]"
        assert {m["book_id"] for m in tom["editions"]} == {TOM, TOM_PART1}
        assert tom["editions"][0]["book_id"] == TOM

    hits = [h["book_id"] for h in catalog_search(es_client, names.books, "Alice", size=20)]
    alices = [b for b in hits if b in ALICE]
    assert alices[0] in FULL_ALICE and STORYLAND in alices, hits
    works = catalog_search(es_client, names.books, "Alice", collapse="work", size=20)
    (alice,) = [h for h in works if h["work_cluster"] == cluster_id([*ALICE, ALICE_DE])]
    assert alice["book_id"] in FULL_ALICE


# --- other editions / translations ---------------------------------------------------------


def test_related_books_are_oriented_from_the_books_side(es_client, real) -> None:
    names = real[0]
    whole = related_books(es_client, names.books, names.relations, TOM)
    assert whole["book"]["book_id"] == TOM
    assert [(r["book_id"], r["relation"], r["direction"]) for r in whole["relations"]] == [
        (TOM_PART1, "CONTIGUOUS_SUBSET", "other_in_this")
    ]
    part = related_books(es_client, names.books, names.relations, TOM_PART1)
    assert [(r["book_id"], r["direction"]) for r in part["relations"]] == [(TOM, "this_in_other")]
    assert part["relations"][0]["language"] == "en"

    alice = related_books(es_client, names.books, names.relations, ALICE[0])
    found = {r["book_id"]: r for r in alice["relations"]}
    assert set(found) == {ALICE[1], ALICE[2], ALICE_DE}
    assert found[ALICE_DE]["relation"] == "TRANSLATION"
    assert found[ALICE_DE]["languages"] == ["de", "en"] and found[ALICE_DE]["language"] == "de"
    assert (found[STORYLAND]["relation"], found[STORYLAND]["direction"]) == (
        "ABRIDGED",
        "other_in_this",
    )
    confidences = [r["confidence"] for r in alice["relations"]]
    assert confidences == sorted(confidences, reverse=True)
    assert alice["book"]["edition_cluster"] == cluster_id(FULL_ALICE)

    with pytest.raises(KeyError):
        related_books(es_client, names.books, names.relations, "not-a-book")


def test_lookup_of_a_file_not_in_the_index_finds_its_editions(
    es_client, real, tmp_path: Path
) -> None:
    names = real[0]
    body = gutenberg_body(CAROL[0])
    copy = write_txt(tmp_path / "carol-scan.txt", paginate(body, 33))  # another pagination
    result = lookup_book(es_client, names, copy)
    assert result["book"]["book_id"] == "carol-scan"
    assert result["book"]["language"] == "en"
    found = {r["book_id"]: r for r in result["relations"]}
    assert set(found) == set(CAROL)
    assert all(r["relation"] in EDITION_CLASSES for r in found.values())
    assert found[CAROL[0]]["cs"] > 0.9

    stave1 = write_txt(tmp_path / "carol-stave1.txt", paginate(body[: len(body) // 4], 40))
    result = lookup_book(es_client, names, stave1)
    found = {r["book_id"]: (r["relation"], r["direction"]) for r in result["relations"]}
    assert found == {c: ("CONTIGUOUS_SUBSET", "this_in_other") for c in CAROL}

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty file"):
        lookup_book(es_client, names, empty)
