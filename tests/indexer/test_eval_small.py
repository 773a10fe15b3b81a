"""CI-sized end-to-end evaluation: generate → index → dedup → metrics, on the real node.

The 1,000-book run (docs/EVALUATION.md) takes minutes; this one keeps the same path (the
generator's ground truth, the index and dedup jobs, ``bookdup.evaluate``) on 80 short books so
a regression in candidates, verification or classification shows up in the test suite.
Observed on this corpus (seed 3): related-at-all precision 1.000 (84/84), recall 1.000
(84/84), translations 14/14, ~15 s; the bounds leave a safety margin under that. The
fraction of pairs verified is not asserted: at 80 books a translation candidate query reaches
most of the other language's books (0.73 here, 0.064 at 1,000 books).
"""

from __future__ import annotations

from pathlib import Path

from bookdup.evaluate import evaluate
from generator import GeneratorConfig, generate_corpus
from readers.groundtruth import load_jsonl

MIN_PRECISION = 0.97
MIN_RECALL = 0.90


def test_small_corpus_end_to_end(es_client, index_names, tmp_path: Path) -> None:
    from indexer.dedup_job import run_dedup
    from indexer.index_job import run_index
    from store.iterate import iter_documents

    corpus = tmp_path / "corpus"
    generate_corpus(GeneratorConfig(seed=3, n_books=80, words_min=1500, words_max=4000), corpus)
    truth = load_jsonl(corpus / "ground_truth.jsonl")
    assert len(truth) >= 40  # enough related pairs for the bounds to mean something

    summary = run_index(es_client, index_names, [corpus / "books"])
    assert not summary.failures
    dedup = run_dedup(es_client, index_names)
    es_client.indices.refresh(index=index_names.relations)
    predicted = [h["_source"] for h in iter_documents(es_client, index_names.relations)]

    metrics = evaluate(truth, predicted, n_books=80, n_verified=dedup.verified_pairs)
    related = metrics["relations"]["RELATED"]
    print(f"related-at-all {related}, fraction verified {metrics['fraction_verified']:.3f}")
    assert related["precision"] >= MIN_PRECISION, metrics["confusion"]
    assert related["recall"] >= MIN_RECALL, metrics["confusion"]
