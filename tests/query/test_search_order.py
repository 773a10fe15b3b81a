"""The order of a page of collapsed hits: within a work, complete texts first (no node)."""

from __future__ import annotations

from query.search import _member_sort, complete_first


def test_a_works_complete_text_moves_ahead_of_its_abridgement_others_stay():
    hits = [
        {"book_id": "kids", "work_cluster": "w-alice", "_partial": True},
        {"book_id": "glass", "work_cluster": "w-glass", "_partial": False},
        {"book_id": "full", "work_cluster": "w-alice", "_partial": False},
        {"book_id": "vol1", "work_cluster": "w-tom", "_partial": True},
        {"book_id": "solo", "work_cluster": None},
    ]
    assert [h["book_id"] for h in complete_first(hits)] == ["full", "glass", "kids", "vol1", "solo"]


def test_a_cluster_is_shown_by_its_rank_then_relevance():
    assert list(_member_sort("edition")[0]) == ["edition_rank"]
    work = _member_sort("work")
    assert [next(iter(s)) for s in work] == ["partial", "_score", "edition_rank", "book_id"]
