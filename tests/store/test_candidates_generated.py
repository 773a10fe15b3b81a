"""Candidate recall against the generator's ground truth, on the real node (issue 14).

The dedup job's own candidate stage runs over a generated corpus with OCR noise, and every
related pair must come back from the queries of one side or the other: a pair that is not a
candidate is never verified, so candidate recall is the ceiling of the job's recall. The
same-language pairs come from the winnowed word-prefix 5-gram keys (and, for noisy overlaps
whose keys broke, the same-language unique-word query), the translations from the translated
stem queries, the pivot pair keys and the other-language unique-word query (shared names and
numerals).
A collection of 300 books, where a language holds ~75 books and a partial translation (a
volume, an excerpt in an anthology) must outrank the long books of its partner's language.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bookdup.pairs import pair_key
from generator import GeneratorConfig, generate_corpus
from readers.groundtruth import load_jsonl
from store.candidates import SAME_UNIQ

MIN_SAME_LANGUAGE_RECALL = 0.995
# the pivot pair keys (on by default since stop 49) find every translation here; 0.95 before
MIN_TRANSLATION_RECALL = 0.98


def test_every_related_pair_is_a_candidate(es_client, index_names, tmp_path: Path) -> None:
    from indexer.dedup_job import DedupParams
    from indexer.dedup_stages import prepare, select_books
    from indexer.index_job import IndexOptions, run_index

    corpus = tmp_path / "corpus"
    noise = (0.0, 0.10)
    n_books = 300
    config = GeneratorConfig(seed=11, n_books=n_books, words_min=3000, words_max=6000, noise=noise)
    generate_corpus(config, corpus)
    truth = {pair_key(t["a"], t["b"]): t for t in load_jsonl(corpus / "ground_truth.jsonl")}
    same = {k for k, t in truth.items() if t["languages"][0] == t["languages"][1]}
    cross = set(truth) - same
    partial = {k for k in cross if min(truth[k]["coverage_a"], truth[k]["coverage_b"]) < 0.9}
    # enough pairs for the bounds to mean something
    assert len(same) >= 120 and len(cross) >= 30 and len(partial) >= 10

    summary = run_index(es_client, index_names, [corpus / "books"], IndexOptions(workers=2))
    assert summary.indexed == n_books and not summary.failures
    run = prepare(es_client, index_names, DedupParams(), "candidates-test", None)
    found: set[str] = set()
    kinds: Counter[str] = Counter()
    for batch in select_books(run):
        assert all(f.winnows.size for f in batch.books)  # no book without text keys
        for ranked in run.searcher.ranked(batch.books):
            kinds[ranked.kind] += 1
            found |= {pair_key(ranked.owner, other) for other, _ in ranked.hits}

    # a book sharing no keyed text with any other has no winnow query (fewer band keys than
    # the minimum); most books share some
    assert kinds["winnows"] >= 0.8 * n_books
    assert kinds[SAME_UNIQ] >= 0.8 * n_books  # keyed books ask their unique words too
    same_recall = len(found & same) / len(same)
    cross_recall = len(found & cross) / len(cross)
    print(f"candidates {len(found)}: same {same_recall:.3f}, translated {cross_recall:.3f}")
    assert same_recall >= MIN_SAME_LANGUAGE_RECALL, sorted(same - found)
    assert cross_recall >= MIN_TRANSLATION_RECALL, sorted(cross - found)
    # a partial translation shares only part of its partner's text: the hardest to rank
    assert len(found & partial) / len(partial) >= MIN_TRANSLATION_RECALL, sorted(partial - found)
