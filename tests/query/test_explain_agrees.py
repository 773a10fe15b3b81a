"""`explain` says what the dedup job stored: one policy for writer and reader (issue 29).

The job verifies pairs on features prepared by its cache (``store.features.prepare_features``:
the max-df words and the stretches of collection-frequent words dropped) and cuts the alignment
into the core's runs and frames (``bookdup.signals.shared_runs``); ``explain`` must prepare and
cut alike, or the review page shows another class than the relation it is asked about. Checked
on every pair of the real-book corpus (tests/query/conftest.py), from both sides: the class of
every pair (UNRELATED for a pair the job did not store) and, for a stored pair, its scores and
the shared text explain draws (as many words in its text regions as the signals' runs hold). The
scores are what catches a reader that prepares otherwise: before the read side dropped the
frequent words' stretches, every class here agreed but explain scored the Alice editions
0.9788 its where the job stored 0.975.
"""

from __future__ import annotations

import itertools

import pytest

from query.context import ReadSide
from query.explain import explain
from tests.query.corpus import BOOKS, key


@pytest.fixture(scope="module")
def rs(es_client, real) -> ReadSide:
    return ReadSide(es_client, real[0])


def test_explain_reports_the_stored_class_of_every_pair(rs, real) -> None:
    rels = real[3]
    assert len(rels) > 0
    disagree, checked = [], 0
    for a, b in itertools.permutations(BOOKS, 2):
        stored = rels.get(key(a, b))
        e = explain(rs, a, b)
        want = stored["relation"] if stored else "UNRELATED"
        if e["relation"] != want:
            disagree.append((a, b, want, e["relation"]))
        if stored:
            assert e["stored"] is not None and e["stored"]["relation"] == want, (a, b)
            # the same sequences aligned: the same scores, not merely the same class (explain
            # on sequences the job did not compare, with the licence's stretches kept, scores
            # other sizes and used to pass on class alone here)
            assert (e["its"], e["cs"]) == (stored["its"], stored["cs"]), (a, b)
            # and the shared text explain draws is the classifier's: its alignment, its runs
            al = e["alignment"]
            text = sum(r["words"] for r in al["regions"] if not r["boilerplate"])
            assert len(al["kind"]) == e["lcs"], (a, b)
            assert text == e["signals"]["n_page_matches"] > 0, (a, b)
            checked += 1
    assert disagree == [], disagree
    assert checked == 2 * len(rels)
