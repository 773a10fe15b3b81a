"""The read-side API (search, related, match, explain, pictures) on real books and a real node.

The corpus (tests/query/conftest.py): three English Alice editions and a German translation,
Through the Looking-Glass, Tom Sawyer and its first part, two Christmas Carols, Walden: six
edition clusters, five work clusters, every relation known.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bookdup.cluster import cluster_id
from indexer.index_job import IndexOptions, run_index
from query.context import BadRequest, NotFound, ReadSide
from query.explain import explain
from query.match import book_from_text, match, read_one_book
from query.plots import render_explain
from query.related import _oriented, related
from query.search import search
from store.keys import CANDIDATE_KEY_FIELDS
from tests.fixtures_books import add_noise, gutenberg_body, paginate, write_txt
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
)


def _keys_anywhere(value: object) -> set[str]:
    """Every dict key at any depth of a read-side answer."""
    if isinstance(value, dict):
        return set(value).union(*(_keys_anywhere(v) for v in value.values()))
    if isinstance(value, list | tuple):
        return set().union(*(_keys_anywhere(v) for v in value))
    return set()


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Edition clusters of the corpus and their sizes (ground truth).
CLUSTER_SIZES = {
    cluster_id(FULL_ALICE): 2,
    cluster_id([STORYLAND]): 1,
    cluster_id([ALICE_DE]): 1,
    cluster_id([LOOKING_GLASS]): 1,
    cluster_id([TOM, TOM_PART1]): 2,
    cluster_id(CAROL): 2,
    cluster_id([WALDEN]): 1,
}


@pytest.fixture(scope="module")
def rs(es_client, real) -> ReadSide:
    return ReadSide(es_client, real[0])


# --- search ----------------------------------------------------------------------------------


def test_collapsed_search_pages_through_every_cluster_once(es_client, real) -> None:
    names = real[0]
    # every book carries the Project Gutenberg header in its opening words
    pages = [
        search(es_client, names.books, "Project Gutenberg", page=p, per_page=4) for p in (1, 2)
    ]
    first = pages[0]
    assert (first["total_books"], first["total_groups"], first["pages"]) == (len(BOOKS), 7, 2)
    seen = [h["edition_cluster"] for page in pages for h in page["hits"]]
    assert [len(p["hits"]) for p in pages] == [4, 3]
    assert sorted(seen) == sorted(CLUSTER_SIZES)  # each cluster once, none lost between pages
    for hit in (h for page in pages for h in page["hits"]):
        assert hit["cluster_size"] == CLUSTER_SIZES[hit["edition_cluster"]], hit["book_id"]
        assert hit["matching"] == hit["cluster_size"]  # every book matched this query
    with pytest.raises(BadRequest, match="page must be between"):
        search(es_client, names.books, "Project Gutenberg", page=10_001, per_page=10)
    with pytest.raises(BadRequest, match="page 3 is past the last page: 7 edition clusters"):
        search(es_client, names.books, "Project Gutenberg", page=3, per_page=4)


def test_cluster_size_counts_the_cluster_not_the_matching_hits(es_client, real) -> None:
    names = real[0]
    # "Rackham" is in the opening words of the illustrated Alice and Carol only
    result = search(es_client, names.books, "Rackham", per_page=10)
    found = {h["book_id"]: h for h in result["hits"]}
    assert set(found) == {ALICE[1], CAROL[1]}
    assert (found[ALICE[1]]["matching"], found[ALICE[1]]["cluster_size"]) == (1, 2)
    assert (found[CAROL[1]]["matching"], found[CAROL[1]]["cluster_size"]) == (1, 2)
    # the English Alice's work holds the German translation too
    assert found[ALICE[1]]["translation_count"] == 1
    assert found[ALICE[1]]["languages"] == {"en": 3, "de": 1}

    works = search(es_client, names.books, "Alice", collapse="work")
    (alice,) = [h for h in works["hits"] if h["work_cluster"] == cluster_id([*ALICE, ALICE_DE])]
    assert alice["cluster_size"] == 4
    flat = search(es_client, names.books, "Alice", collapse="none")
    assert flat["total_groups"] == flat["total_books"]


def test_search_refuses_bad_input(es_client, real) -> None:
    names = real[0]
    for bad in ("", "   "):
        with pytest.raises(BadRequest, match="empty"):
            search(es_client, names.books, bad)
    with pytest.raises(BadRequest, match="too long"):
        search(es_client, names.books, "word " * 200)
    with pytest.raises(BadRequest, match="collapse"):
        search(es_client, names.books, "alice", collapse="author")
    none = search(es_client, names.books, "xylophonequartz")
    assert (none["total_books"], none["total_groups"], none["hits"]) == (0, 0, [])


def test_a_possessive_in_the_text_is_found_by_the_bare_name(es_client, index_names, tmp_path):
    """The standard analyzer keeps "scrooge's" whole; the ``.words`` subfields (simple
    analyzer) split it, so "Scrooge" finds the book."""
    lines = [ln for ln in gutenberg_body(CAROL[0]) if "Scrooge's" in ln and "Scrooge " not in ln]
    book = write_txt(tmp_path / "possessive.txt", ["\n".join(lines[:40])], title="Stave Notes")
    run_index(es_client, index_names, [book], IndexOptions(workers=1))
    es_client.indices.refresh(index=index_names.books)
    plain = es_client.count(index=index_names.books, query={"match": {"excerpt": "Scrooge"}})
    assert plain["count"] == 0  # what the search did before
    result = search(es_client, index_names.books, "Scrooge")
    assert [h["book_id"] for h in result["hits"]] == ["possessive"]


# --- related ---------------------------------------------------------------------------------


def test_related_returns_exactly_the_ground_truth_grouped_by_class(es_client, real) -> None:
    names, _, _, rels = real
    for book in BOOKS:
        result = related(es_client, names.books, names.relations, book)
        got = {r["book_id"]: r["relation"] for r in result["relations"]}
        want = {
            (s["b"] if s["a"] == book else s["a"]): s["relation"]
            for s in rels.values()
            if book in (s["a"], s["b"])
        }
        assert got == want, book
        grouped = {r["book_id"]: g["relation"] for g in result["groups"] for r in g["books"]}
        assert grouped == got
        assert result["counts"] == {g["relation"]: len(g["books"]) for g in result["groups"]}
    alice = related(es_client, names.books, names.relations, ALICE[0])
    classes = [g["relation"] for g in alice["groups"]]
    # strongest first: the other complete edition, the abridgement, then the translation
    assert classes == ["DIFFERENT_PAGINATION", "ABRIDGED", "TRANSLATION"]
    (short,) = alice["groups"][1]["books"]
    assert (short["book_id"], short["direction"]) == (STORYLAND, "other_in_this")
    # one vocabulary (issue 26): the same words as the CLI, the page and compare
    assert short["direction_text"] == "the other book is an abridgement of this one"
    (full,) = [
        g["books"][0]
        for g in related(es_client, names.books, names.relations, STORYLAND)["groups"]
        if g["relation"] == "ABRIDGED" and g["books"][0]["book_id"] == ALICE[0]
    ]
    assert full["direction_text"] == "this book is an abridgement of the other"
    (de,) = alice["groups"][-1]["books"]
    assert (de["book_id"], de["language"], de["translated"]) == (ALICE_DE, "de", True)
    assert (de["direction"], de["direction_text"]) == (None, "")  # a complete translation
    assert de["display_title"] and not de["display_title"].startswith("[untitled")

    whole = related(es_client, names.books, names.relations, TOM)
    (part,) = whole["groups"][0]["books"]
    assert (part["book_id"], part["direction"]) == (TOM_PART1, "other_in_this")
    assert part["direction_text"] == "the other book is contained in this one"
    mapping = part["page_mapping"]
    assert mapping["other_covered"] > 0.9 and mapping["this_covered"] < 0.3
    assert 0.9 < mapping["slope"] < 1.1
    with pytest.raises(NotFound):
        related(es_client, names.books, names.relations, "no-such-book")


def test_a_stored_partial_translation_names_its_part_from_either_side() -> None:
    """Werther's book 1 (de) against the complete English, as the dedup job stores it: no
    classifier direction, the part found from pages and coverage, worded from each side."""
    stored = {
        "a": "werther-de-b1",
        "b": "werther-en",
        "relation": "TRANSLATION",
        "direction": None,
        "confidence": 1.0,
        **{"cs": 0.12, "its": 0.68, "lcs": 325, "shared": 1657, "languages": ["de", "en"]},
        "signals": {"coverage_x": 0.85, "coverage_y": 0.63, "n_pages_x": 56, "n_pages_y": 112},
    }
    from_part = _oriented(stored, "werther-de-b1")
    assert from_part["direction"] == "this_in_other"
    assert from_part["direction_text"] == (
        "this book is a partial translation: it matches only a part of the other"
    )
    from_whole = _oriented(stored, "werther-en")
    assert from_whole["direction"] == "other_in_this"
    assert from_whole["direction_text"].startswith("the other book is a partial translation")


# --- match -----------------------------------------------------------------------------------


def test_no_candidate_key_reaches_related_search_or_match(es_client, real, rs) -> None:
    """Issue 27 item 3: the read side hides exactly the registry's fields (store.keys), so no
    candidate key (bands, uniq, stems, winnows) is in any answer about a book."""
    names = real[0]
    keys = set(CANDIDATE_KEY_FIELDS)
    for book in (TOM, ALICE_DE):
        answer = related(es_client, names.books, names.relations, book)
        assert not _keys_anywhere(answer) & keys, book
        assert answer["relations"], book
    for collapse in ("edition", "work", "none"):
        found = search(es_client, names.books, "Alice", collapse=collapse)
        assert found["hits"] and not _keys_anywhere(found) & keys, collapse
    matched = match(rs, book_from_text("\n".join(gutenberg_body(TOM)[:600]), title="Tom"))
    assert matched["relations"] and not _keys_anywhere(matched) & keys


def test_match_finds_the_editions_of_a_held_out_noisy_copy(rs, tmp_path: Path) -> None:
    body = add_noise("\n".join(gutenberg_body(CAROL[0])), rate=0.03, seed=7).split("\n")
    copy = write_txt(tmp_path / "carol-ocr.txt", paginate(body, 35))
    result = match(rs, read_one_book(copy))
    found = {r["book_id"]: r for r in result["relations"]}
    assert set(found) == set(CAROL)
    assert all(r["relation"] in EDITION_CLASSES for r in found.values())
    assert result["book"]["edition_cluster"] == cluster_id(CAROL)
    assert result["book"]["indexed"] is False
    assert {g["relation"] for g in result["groups"]} <= EDITION_CLASSES


def test_match_of_an_indexed_text_says_so_and_does_not_list_itself(rs, gutenberg, tmp_path) -> None:
    """Issue 26: the same content hash is "already indexed as" that book, whatever the file's
    name, and the book is not among its own related books."""
    result = match(rs, read_one_book(gutenberg / f"{WALDEN}.txt"))
    assert result["book"]["book_id"] == WALDEN
    assert (result["book"]["indexed"], result["book"]["indexed_as"]) == (True, WALDEN)
    assert result["relations"] == [] and result["groups"] == []
    assert result["book"]["edition_cluster"] == cluster_id([WALDEN])
    renamed = tmp_path / "thoreau-scan.txt"
    renamed.write_bytes((gutenberg / f"{WALDEN}.txt").read_bytes())
    again = match(rs, read_one_book(renamed))
    assert again["book"]["indexed_as"] == WALDEN and again["relations"] == []


def test_match_refuses_too_little_text(rs) -> None:
    with pytest.raises(BadRequest, match="too short"):
        book_from_text("just a few words")


# --- explain and its pictures ----------------------------------------------------------------


def test_explain_a_volume_shows_its_region_in_the_whole(rs, tmp_path: Path) -> None:
    e = explain(rs, TOM_PART1, TOM)
    assert (e["relation"], e["direction"]) == ("CONTIGUOUS_SUBSET", "this_in_other")
    assert set(e["confidences"]) >= {"EXACT", "CONTIGUOUS_SUBSET", "TRANSLATION", "UNRELATED"}
    assert e["confidences"]["CONTIGUOUS_SUBSET"] == e["confidence"]
    assert {"slope", "offset", "coverage_x", "coverage_y", "consecutive_corr"} <= set(e["signals"])
    assert len(e["decision"]) >= 3 and "DUPNIQ" in e["decision"][0]
    al = e["alignment"]
    assert len(al["a_page"]) == len(al["b_page"]) == len(al["kind"]) == e["lcs"]
    text = [r for r in al["regions"] if not r["boilerplate"]]
    n_b = e["b"]["n_pages"]
    # Part 1 (the first chapters) lies in the first sixth of the complete book
    assert text and max(r["b_pages"][1] for r in text) < n_b / 6
    assert min(r["b_pages"][0] for r in text) <= n_b / 10
    assert e["verdict"].startswith("A is contained in B: it is pages ") and "of B" in e["verdict"]
    # the bars: the volume is covered almost everywhere, the whole only at its start
    bars_b = al["b_bars"]
    assert sum(bars_b[: len(bars_b) // 6]) > 0 and sum(bars_b[len(bars_b) // 4 :]) == 0
    assert sum(v > 0.5 for v in al["a_bars"]) > len(al["a_bars"]) * 0.6

    png = render_explain(e, "png")
    assert png.startswith(PNG_SIGNATURE) and len(png) > 10_000
    svg = render_explain(e, "svg")
    root = ET.parse(io.BytesIO(svg)).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "CONTIGUOUS_SUBSET" in svg.decode() and "page of A" in svg.decode()
    assert render_explain(e, "gif").startswith(b"GIF8")  # any format matplotlib writes
    with pytest.raises(ValueError):
        render_explain(e, "docx")


def test_explain_a_translation_carries_glosses(rs) -> None:
    e = explain(rs, ALICE[0], ALICE_DE)
    assert (e["relation"], e["scores"]) == ("TRANSLATION", "TRANS")
    assert set(e["dictionary"].split("-")) == {"en", "de"}
    words = dict(e["alignment"]["words"])
    assert len(words) > 100
    assert any(en != de for en, de in words.items())  # translated, not just shared names
    # a complete translation: no part named, the same sentence as compare's verdict
    assert (e["direction"], e["direction_text"]) == (None, "")
    assert e["verdict"].startswith("A and B are translations of each other: pages ")


def test_explain_unrelated_and_bad_ids(rs) -> None:
    e = explain(rs, WALDEN, LOOKING_GLASS)
    assert e["relation"] == "UNRELATED"
    assert e["verdict"].startswith("A and B are not related")
    assert e["stored"] is None
    with pytest.raises(NotFound):
        explain(rs, WALDEN, "no-such-book")
    with pytest.raises(BadRequest):
        explain(rs, WALDEN, WALDEN)
