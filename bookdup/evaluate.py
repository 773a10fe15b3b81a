"""Evaluation against a ground truth, as the papers measure it.

Precision / recall / F per relation class and for "related at all" (unordered pairs), a confusion
matrix, MAP for translation retrieval (every source-language book queries the target-language
books ranked by score, as in TRANS), candidate recall, the fraction of all pairs verified, and the
F-maximising score threshold chosen on a training split. Pure functions over plain dicts (the
``ground_truth.jsonl`` / prediction lines, read by ``readers.groundtruth.load_jsonl``), so any
pipeline's output can be scored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bookdup.pairs import Pair, pair_key

UNRELATED = "UNRELATED"


def _by_pair(lines: Iterable[Mapping[str, Any]]) -> dict[Pair, Mapping[str, Any]]:
    return {pair_key(d["a"], d["b"]): d for d in lines}


def prf(tp: int, n_pred: int, n_true: int) -> dict[str, float]:
    """Precision, recall and F1 (0 where undefined)."""
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_true if n_true else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "tp": tp, "predicted": n_pred, "true": n_true}


def relation_metrics(
    truth: Iterable[Mapping[str, Any]], predicted: Iterable[Mapping[str, Any]]
) -> dict[str, dict[str, float]]:
    """P/R/F per relation class and for ``"RELATED"`` (any class); pairs are unordered.

    A predicted line with relation UNRELATED counts as no prediction.
    """
    t = {k: d["relation"] for k, d in _by_pair(truth).items()}
    p = {k: d["relation"] for k, d in _by_pair(predicted).items() if d["relation"] != UNRELATED}
    out = {"RELATED": prf(len(t.keys() & p.keys()), len(p), len(t))}
    for rel in sorted(set(t.values()) | set(p.values())):
        tp = sum(1 for k, r in p.items() if r == rel and t.get(k) == rel)
        out[rel] = prf(tp, sum(r == rel for r in p.values()), sum(r == rel for r in t.values()))
    return out


def pair_differences(
    truth: Iterable[Mapping[str, Any]], predicted: Iterable[Mapping[str, Any]]
) -> dict[str, list[tuple[str, str, str, str]]]:
    """Every pair the prediction got wrong, as (a, b, true class, found class), sorted:
    ``missed`` (related in truth, not found), ``wrong`` (found, another class), ``false``
    (found, unrelated in truth). A predicted UNRELATED counts as not found."""
    t = {k: d["relation"] for k, d in _by_pair(truth).items()}
    p = {k: d["relation"] for k, d in _by_pair(predicted).items() if d["relation"] != UNRELATED}
    return {
        "missed": [(*k, t[k], UNRELATED) for k in sorted(t.keys() - p.keys())],
        "wrong": [(*k, t[k], p[k]) for k in sorted(t.keys() & p.keys()) if t[k] != p[k]],
        "false": [(*k, UNRELATED, p[k]) for k in sorted(p.keys() - t.keys())],
    }


def confusion_matrix(
    truth: Iterable[Mapping[str, Any]], predicted: Iterable[Mapping[str, Any]]
) -> dict[str, dict[str, int]]:
    """counts[true class][predicted class] over every pair in either set (UNRELATED = absent)."""
    t = {k: d["relation"] for k, d in _by_pair(truth).items()}
    p = {k: d["relation"] for k, d in _by_pair(predicted).items()}
    counts: dict[str, Counter[str]] = {}
    for k in t.keys() | p.keys():
        counts.setdefault(t.get(k, UNRELATED), Counter())[p.get(k, UNRELATED)] += 1
    return {row: dict(c) for row, c in sorted(counts.items())}


def direction_accuracy(
    truth: Iterable[Mapping[str, Any]], predicted: Iterable[Mapping[str, Any]]
) -> float | None:
    """Share of correctly classified directed pairs whose direction is right (None if none)."""
    t = _by_pair(truth)
    hits = total = 0
    for k, d in _by_pair(predicted).items():
        g = t.get(k)
        if g is None or g["relation"] != d["relation"] or g.get("direction") is None:
            continue
        direction = d.get("direction")
        if d["a"] != g["a"] and direction is not None:  # same pair, other order
            direction = "b_in_a" if direction == "a_in_b" else "a_in_b"
        total += 1
        hits += direction == g["direction"]
    return hits / total if total else None


def average_precision(ranking: Sequence[str], relevant: set[str]) -> float:
    """Mean of precision at the rank of each relevant item; unretrieved ones count as 0."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for rank, item in enumerate(ranking, 1):
        if item in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def translation_map(
    truth: Iterable[Mapping[str, Any]],
    scores: Iterable[tuple[str, str, float]],
    languages: Mapping[str, str],
    source: str,
    target: str,
) -> float:
    """MAP of translation retrieval: each ``source`` book with a ground-truth translation in
    ``target`` ranks the ``target`` books by score (unscored books are not retrieved)."""
    relevant: dict[str, set[str]] = {}
    for d in truth:
        if d["relation"] != "TRANSLATION":
            continue
        for q, r in ((d["a"], d["b"]), (d["b"], d["a"])):
            if languages.get(q) == source and languages.get(r) == target:
                relevant.setdefault(q, set()).add(r)
    ranked: dict[str, list[tuple[float, str]]] = {q: [] for q in relevant}
    for a, b, s in scores:
        for q, r in ((a, b), (b, a)):
            if q in ranked and languages.get(r) == target:
                ranked[q].append((s, r))
    if not relevant:
        return 0.0
    aps = [
        average_precision([r for _, r in sorted(ranked[q], key=lambda x: (-x[0], x[1]))], rel)
        for q, rel in relevant.items()
    ]
    return sum(aps) / len(aps)


def candidate_recall(
    truth: Iterable[Mapping[str, Any]], candidates: Iterable[tuple[str, str]]
) -> float:
    """Share of ground-truth pairs that candidate generation produced."""
    t = set(_by_pair(truth))
    c = {pair_key(a, b) for a, b in candidates}
    return len(t & c) / len(t) if t else 1.0


def fraction_verified(n_verified: int, n_books: int) -> float:
    """Verified pairs over all n-choose-2 pairs: what candidate pruning saved."""
    total = n_books * (n_books - 1) // 2
    return n_verified / total if total else 0.0


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> tuple[float, float]:
    """(threshold, F1) maximising F1 of ``score >= threshold``, as the papers tune on training
    data; among equal F1 the highest threshold wins."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    if len(s) == 0 or not y.any():
        return (math.inf, 0.0)
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    tp = np.cumsum(y)
    k = np.arange(1, len(s) + 1)
    last = np.r_[s[1:] != s[:-1], True]  # threshold s[i] predicts every score >= s[i]
    f = np.where(last, 2 * tp / (k + y.sum()), -1.0)
    i = int(np.argmax(f))
    return (float(s[i]), float(f[i]))


def split_train_test(
    items: Sequence[Any], seed: int, test_fraction: float = 0.5
) -> tuple[list[Any], list[Any]]:
    """Seeded random split (threshold tuned on train, reported on test)."""
    perm = np.random.default_rng(seed).permutation(len(items))
    n_test = round(len(items) * test_fraction)
    test = set(perm[:n_test].tolist())
    return (
        [x for i, x in enumerate(items) if i not in test],
        [x for i, x in enumerate(items) if i in test],
    )


#: Shared words from which OVERLAPPING_TEXT recall is reported apart: a page or two, a few
#: pages, a chapter, more. Google's class is "a large amount of overlap, many pages in a row";
#: a generated truth counts any shared word as a relation, down to a paragraph.
SHARED_WORDS_EDGES = (500, 1000, 2000)


def recall_by_shared_words(
    truth: Iterable[Mapping[str, Any]],
    predicted: Iterable[Mapping[str, Any]],
    n_words: Mapping[str, int],
    relation: str = "OVERLAPPING_TEXT",
    edges: Sequence[int] = SHARED_WORDS_EDGES,
) -> dict[str, dict[str, float]]:
    """Recall of ``relation`` (found in that class) by how many words its truth pairs share
    (``coverage_a`` of ``a``'s ``n_words``), in bins cut at ``edges``; pairs whose size is not
    known are left out."""
    found = {k: d["relation"] for k, d in _by_pair(predicted).items()}
    labels = [f"< {edges[0]}"] + [f"{lo}-{hi}" for lo, hi in zip(edges, edges[1:], strict=False)]
    labels.append(f">= {edges[-1]}")
    counts = {label: [0, 0] for label in labels}
    for d in truth:
        if d["relation"] != relation or "coverage_a" not in d or d["a"] not in n_words:
            continue
        shared = float(d["coverage_a"]) * n_words[d["a"]]
        label = labels[sum(shared >= edge for edge in edges)]
        counts[label][0] += found.get(pair_key(d["a"], d["b"])) == relation
        counts[label][1] += 1
    return {
        label: {"recall": right / total, "tp": right, "true": total}
        for label, (right, total) in counts.items()
        if total
    }


def evaluate(
    truth: Sequence[Mapping[str, Any]],
    predicted: Sequence[Mapping[str, Any]],
    *,
    n_books: int,
    candidates: Iterable[tuple[str, str]] | None = None,
    n_verified: int | None = None,
    n_words: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """All pair metrics in one dict (the input of `render_report`); with the books'
    ``n_words``, OVERLAPPING_TEXT recall by shared words too."""
    out: dict[str, Any] = {
        "n_books": n_books,
        "n_truth_pairs": len(truth),
        "n_predicted_pairs": sum(1 for d in predicted if d["relation"] != UNRELATED),
        "relations": relation_metrics(truth, predicted),
        "confusion": confusion_matrix(truth, predicted),
        "direction_accuracy": direction_accuracy(truth, predicted),
    }
    if candidates is not None:
        out["candidate_recall"] = candidate_recall(truth, candidates)
    if n_verified is not None:
        out["fraction_verified"] = fraction_verified(n_verified, n_books)
    if n_words is not None:
        out["overlap_by_shared_words"] = recall_by_shared_words(truth, predicted, n_words)
    return out


def _fmt(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def render_report(metrics: Mapping[str, Any]) -> str:
    """Markdown report of `evaluate`'s metrics (plus any extra scalar entries such as MAP)."""
    lines = ["# Evaluation", ""]
    for key, value in metrics.items():
        if not isinstance(value, Mapping):
            lines.append(f"- **{key}**: {_fmt(value)}")
    rel = metrics.get("relations", {})
    if rel:
        lines += ["", "## Pairs by relation", ""]
        lines += ["| relation | precision | recall | F1 | TP | predicted | true |"]
        lines += ["| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name, m in rel.items():
            cells = [m[k] for k in ("precision", "recall", "f1", "tp", "predicted", "true")]
            lines.append(f"| {name} | " + " | ".join(_fmt(c) for c in cells) + " |")
    by_size = metrics.get("overlap_by_shared_words", {})
    if by_size:
        lines += ["", "## OVERLAPPING_TEXT recall by shared words", ""]
        lines += ["| shared words | recall | TP | true |", "| --- | ---: | ---: | ---: |"]
        for label, m in by_size.items():
            lines.append(f"| {label} | {m['recall']:.3f} | {m['tp']} | {m['true']} |")
    conf = metrics.get("confusion", {})
    if conf:
        cols = sorted({c for row in conf.values() for c in row})
        lines += ["", "## Confusion (rows: truth, columns: predicted)", ""]
        lines += ["| truth \\ predicted | " + " | ".join(cols) + " |"]
        lines += ["| --- |" + " ---: |" * len(cols)]
        for row, counts in conf.items():
            lines.append(f"| {row} | " + " | ".join(str(counts.get(c, 0)) for c in cols) + " |")
    return "\n".join(lines) + "\n"
