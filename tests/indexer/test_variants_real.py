"""Relation classes on variants of real books, end to end on the real node (issue 29).

Two real works typeset as a library holds them (rescans at 2/5/10 % noise, a re-pagination,
volumes, an abridgement, an anthology) and one work with 20 variants, in a collection of 37
books: each collection-level rule meets a work that 20 % of the books hold. Before the
boilerplate rule knew front matter from a book's own text, the clean editions of that work lost
65 % of their words to it and every one of their edition classes
(``benchmarks/eval_variants.py``, docs/EVALUATION.md).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bookdup.pairs import pair_key
from generator.real_variants import VariantConfig, generate_variants
from readers.groundtruth import load_jsonl
from tests.bookdup.test_signals import GUTENBERG, needs_data

#: EXACT is the noise-free SAME_PAGINATION: a catalogue treats them alike.
_SAME = {"EXACT": "SAME_PAGINATION"}


@needs_data
def test_real_variants_keep_their_classes(es_client, index_names, tmp_path: Path) -> None:
    from indexer.dedup_job import run_dedup
    from indexer.index_job import run_index
    from store.iterate import iter_documents

    config = VariantConfig(GUTENBERG, works=2, max_words=6000, collection_variants=20)
    generate_variants(config, tmp_path)
    truth = load_jsonl(tmp_path / "ground_truth.jsonl")
    assert not run_index(es_client, index_names, [tmp_path / "books"]).failures
    run_dedup(es_client, index_names)
    es_client.indices.refresh(index=index_names.relations)
    found = {
        pair_key(d["a"], d["b"]): _SAME.get(d["relation"], d["relation"])
        for d in (h["_source"] for h in iter_documents(es_client, index_names.relations))
    }
    true = {pair_key(t["a"], t["b"]): _SAME.get(t["relation"], t["relation"]) for t in truth}
    assert not found.keys() - true.keys()  # no false relation
    collection = [k for k in true if k[0].startswith("coll") and k[1].startswith("coll")]
    assert len(collection) > 150 and not [k for k in collection if k not in found]
    diagonal = Counter(true[k] for k in found if found[k] == true[k])
    per_class = Counter(true.values())
    wrong = sorted((k, true[k], found[k]) for k in found if found[k] != true[k])
    assert sum(diagonal.values()) >= 0.95 * len(found), wrong
    for relation, n in per_class.items():  # every class's diagonal, as in Table I's recall
        assert diagonal[relation] >= 0.85 * n, (relation, diagonal, per_class, wrong)
