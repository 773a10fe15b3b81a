"""Union-find clustering: correctness, deterministic ids, stability under updates."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bookdup.classify import Relation
from bookdup.cluster import (
    UnionFind,
    assign_clusters,
    cluster_id,
    edition_edges,
    work_edges,
)

ids_st = st.lists(
    st.text(alphabet="abcdefgh", min_size=1, max_size=3), min_size=1, max_size=30, unique=True
)


@st.composite
def graphs(draw):
    ids = draw(ids_st)
    edges = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=40))
    return ids, edges


def test_union_find_basic():
    uf = UnionFind(["a", "b", "c", "d"])
    uf.union("a", "b")
    uf.union("c", "d")
    assert uf.find("a") == uf.find("b")
    assert uf.find("a") != uf.find("c")
    uf.union("b", "d")
    assert len({uf.find(x) for x in "abcd"}) == 1
    assert sorted(uf.groups().values()) == [["a", "b", "c", "d"]]
    assert "a" in uf and "z" not in uf and len(uf) == 4


def test_union_find_long_chain_is_compressed():
    uf = UnionFind()
    n = 5000
    for i in range(n - 1):
        uf.union(f"{i:05d}", f"{i + 1:05d}")
    root = uf.find("00000")
    assert all(uf.find(f"{i:05d}") == root for i in range(n))
    assert len(uf.groups()) == 1


def test_assign_clusters_ids_and_singletons():
    m = assign_clusters(["a", "b", "c", "d"], [("b", "a"), ("c", "b")])
    assert m["a"] == m["b"] == m["c"] == cluster_id(["a"])
    assert m["d"] == cluster_id(["d"]) != m["a"]
    assert m["a"].startswith("c-") and len(m["a"]) == 2 + 24


def test_edge_endpoints_not_in_book_ids_are_included():
    m = assign_clusters(["a"], [("x", "y")])
    assert set(m) == {"a", "x", "y"} and m["x"] == m["y"] != m["a"]


@given(graphs(), st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_ids_independent_of_order(graph, rnd: random.Random):
    ids, edges = graph
    expected = assign_clusters(ids, edges)
    ids2 = list(ids)
    rnd.shuffle(ids2)
    edges2 = [(b, a) if rnd.random() < 0.5 else (a, b) for a, b in edges]
    rnd.shuffle(edges2)
    assert assign_clusters(ids2, edges2) == expected


@given(graphs(), st.text(alphabet="abcdefghij", min_size=1, max_size=4), st.data())
@settings(max_examples=200, deadline=None)
def test_adding_a_book_keeps_unaffected_cluster_ids(graph, new_id, data):
    ids, edges = graph
    before = assign_clusters(ids, edges)
    links = data.draw(st.lists(st.sampled_from(ids), max_size=3))
    after = assign_clusters([*ids, new_id], [*edges, *((new_id, x) for x in links)])
    touched = {before[x] for x in links} | ({before[new_id]} if new_id in before else set())
    for book, cid in before.items():
        if cid not in touched:
            assert after[book] == cid
    # a merged cluster is named after its smallest member, whatever joined it
    members = [b for b, c in after.items() if c == after[new_id]]
    assert after[new_id] == cluster_id(members)


def test_edition_and_work_edges():
    rels = [
        ("a", "b", "SAME_PAGINATION"),
        ("b", "c", Relation("CONTIGUOUS_SUBSET", 0.9, "x_in_y", {})),
        ("c", "d", {"relation": "TRANSLATION"}),
        ("d", "e", "OVERLAPPING_TEXT"),
        ("e", "f", "UNRELATED"),
    ]
    assert edition_edges(rels) == [("a", "b"), ("b", "c")]
    assert work_edges(rels) == [("a", "b"), ("b", "c"), ("c", "d")]


def test_anthology_does_not_chain_works():
    """An anthology overlapping two works must not merge them (OVERLAPPING_TEXT is no edge)."""
    rels = [
        ("anth", "w1", "OVERLAPPING_TEXT"),
        ("anth", "w2", "OVERLAPPING_TEXT"),
        ("w1", "w1-ed2", "DIFFERENT_PAGINATION"),
    ]
    m = assign_clusters(["anth", "w1", "w2", "w1-ed2"], work_edges(rels))
    assert m["w1"] == m["w1-ed2"]
    assert len({m["anth"], m["w1"], m["w2"]}) == 3


def test_other_translations_share_a_work_never_an_edition():
    """Taylor's and Swanwick's Faust, and an abridged Taylor: one work cluster, three edition
    clusters."""
    rels = [
        ("taylor", "swanwick", "SAME_WORK"),
        ("taylor", "taylor-reprint", "DIFFERENT_PAGINATION"),
        ("faust-de", "taylor", "TRANSLATION"),
        ("taylor", "taylor-for-children", "ABRIDGED"),
    ]
    ids = ["taylor", "swanwick", "taylor-reprint", "faust-de", "taylor-for-children"]
    editions = assign_clusters(ids, edition_edges(rels))
    works = assign_clusters(ids, work_edges(rels))
    assert editions["taylor"] == editions["taylor-reprint"] != editions["swanwick"]
    assert editions["taylor"] != editions["taylor-for-children"]
    assert len(set(works.values())) == 1


# --- representatives -----------------------------------------------------------------------


def test_contained_books_follow_the_stored_or_compared_direction():
    from bookdup.cluster import contained_books

    relations = [
        ("part1", "whole", "CONTIGUOUS_SUBSET", "a_in_b"),
        ("full", "kids", "ABRIDGED", "b_in_a"),
        ("x", "y", "CONTIGUOUS_SUBSET", "x_in_y"),
        ("p", "q", "CONTIGUOUS_SUBSET", None),  # no direction: neither is marked
        ("e1", "e2", "DIFFERENT_PAGINATION", None),
        ("t1", "t2", "TRANSLATION", "a_in_b"),  # not a same-language containment
    ]
    assert contained_books(relations) == {"part1", "kids", "x"}


def test_representative_is_the_container_the_full_text_and_the_cleanest_scan():
    from bookdup.cluster import representative_ranks

    clusters = {
        # a volume (listed first, smallest id) and its complete edition
        "a-part1": "c1",
        "b-complete": "c1",
        # a full text and its abridgement
        "a-abridged": "c2",
        "z-full": "c2",
        # three scans of one text: the noisiest has the most one-off words per word
        "a-noisy": "c3",
        "b-clean": "c3",
        "c-middle": "c3",
        "solo": "c4",
    }
    contained = {"a-part1", "a-abridged"}
    stats = {
        "a-part1": (9_707, 2_000),
        "b-complete": (73_840, 9_000),
        "a-abridged": (12_767, 2_500),
        "z-full": (29_465, 5_000),
        "a-noisy": (30_000, 9_000),
        "b-clean": (30_000, 5_000),
        "c-middle": (30_000, 6_000),
    }
    ranks = representative_ranks(clusters, contained, stats)
    assert ranks["b-complete"] == 0 and ranks["a-part1"] == 1
    assert ranks["z-full"] == 0 and ranks["a-abridged"] == 1
    assert (ranks["b-clean"], ranks["c-middle"], ranks["a-noisy"]) == (0, 1, 2)
    assert ranks["solo"] == 0  # no stats: still ranked, alone
    # the same answer whatever order the books come in
    shuffled = dict(random.Random(7).sample(sorted(clusters.items()), len(clusters)))
    assert representative_ranks(shuffled, contained, stats) == ranks


def test_a_part_stays_behind_a_container_even_when_cleaner():
    from bookdup.cluster import representative_ranks

    clusters = {"part": "c", "whole": "c"}
    # the part's scan is cleaner (fewer one-off words per word: it is shorter), but it is a part
    stats = {"part": (10_000, 1_000), "whole": (70_000, 12_000)}
    assert representative_ranks(clusters, {"part"}, stats) == {"whole": 0, "part": 1}
    # equal noise: the longer text first
    stats = {"part": (10_000, 1_000), "whole": (20_000, 2_000)}
    assert representative_ranks(clusters, set(), stats) == {"whole": 0, "part": 1}
