"""Candidate retrieval of the real translations (../shared/data/gutenberg): the 80 books are
indexed into the test node and the dedup job's own candidate stage runs over all of them
(``benchmarks/bench_translation_candidates.py`` measures the same, and again at 3,000 books).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_every_real_translation_is_a_candidate(es_client, index_names, gutenberg: Path) -> None:
    from indexer.index_job import IndexOptions, run_index

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_translation_candidates import TRANSLATION_TYPES, measure
    from eval_gutenberg import parse_truth

    from bookdup.pairs import pair_key

    summary = run_index(es_client, index_names, sorted(gutenberg.glob("*.txt")), IndexOptions(2))
    assert summary.indexed == 80 and not summary.failures
    truth = [t for t in parse_truth(gutenberg / "README.md") if t.type in TRANSLATION_TYPES]
    assert len(truth) == 53
    m = measure(es_client, index_names, truth)
    missed = {pair_key(t.a, t.b) for t in truth} - m.pairs
    # the last miss on surface words, the abridged Storyland Alice against the German one,
    # is found since translated queries go through stems
    assert missed == set()
