"""How the densest ordered block (``bookdup.localscan``) separates shared text from chance:
its score for every same-language pair of generated corpora, the unrelated ones against the
overlaps, on exact matches (what decides the re-read, ``noisy.RESCUE_MIN_LOCAL``) and on
exact and one-edit ones (what the classifier's ``min_local`` reads). How stop 55 set both
(issue 29): at 10 % noise unrelated pairs stay under 1.5, the overlaps whose whole order
hides them read 4-20.

    python benchmarks/dense_blocks.py CORPUS... [--sample N] [--seed S]

``--sample``: at most N unrelated pairs a corpus, drawn at random (the one-edit re-read
costs ~15 ms a pair; all of a 300-book set's 11,000 take ~3 min).
"""

from __future__ import annotations

import argparse
import itertools
import random
from pathlib import Path

import numpy as np
from classes_alone import _features, _jsonl

from bookdup.classify import CLASSIFIER_PARAMS
from bookdup.features import BookFeatures
from bookdup.noisy import RESCUE_MIN_LOCAL, exact_local, noisy_verification


def _scores(a: BookFeatures, b: BookFeatures) -> tuple[float, float]:
    """(exact block score, exact and one-edit block score) of a pair."""
    rescued = noisy_verification(a, b)
    return exact_local(a, b).score, rescued.local_score if rescued is not None else 0.0


def _corpus(corpus: Path, sample: int | None, rng: random.Random) -> tuple[np.ndarray, np.ndarray]:
    """Scores of the unrelated same-language pairs and of the overlaps, (n, 2) each."""
    books = _jsonl(corpus / "books.jsonl")
    language = {b["id"]: b["language"] for b in books}
    feats = _features(corpus, books)
    truth = {(min(t["a"], t["b"]), max(t["a"], t["b"])): t["relation"] for t in
             _jsonl(corpus / "ground_truth.jsonl")}  # fmt: skip
    same = [p for p in itertools.combinations(sorted(feats), 2) if language[p[0]] == language[p[1]]]
    unrelated = [p for p in same if p not in truth]
    if sample is not None and len(unrelated) > sample:
        unrelated = rng.sample(unrelated, sample)
    overlaps = [p for p in same if truth.get(p) == "OVERLAPPING_TEXT"]
    score = [[_scores(feats[a], feats[b]) for a, b in ps] for ps in (unrelated, overlaps)]
    return np.array(score[0]).reshape(-1, 2), np.array(score[1]).reshape(-1, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path, nargs="+")
    ap.add_argument("--sample", type=int, default=None, help="unrelated pairs a corpus")
    ap.add_argument("--seed", type=int, default=55)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    found = [_corpus(c, args.sample, rng) for c in args.corpora]
    unrelated = np.concatenate([u for u, _ in found])
    overlaps = np.concatenate([o for _, o in found])
    keep = CLASSIFIER_PARAMS.min_local[0]
    for name, u, o in [(c.name, *f) for c, f in zip(args.corpora, found, strict=True)]:
        print(
            f"{name}: unrelated {len(u)} max exact {u[:, 0].max(initial=0):.2f} "
            f"one-edit {u[:, 1].max(initial=0):.2f}; overlaps {len(o)}, "
            f"re-read {(o[:, 0] >= RESCUE_MIN_LOCAL).sum()}, block kept {(o[:, 1] >= keep).sum()}"
        )
    q = np.quantile(unrelated, [0.999], axis=0)[0] if len(unrelated) else (0.0, 0.0)
    print(
        f"RESULT unrelated_pairs={len(unrelated)} "
        f"unrelated_max_exact={unrelated[:, 0].max(initial=0):.2f} "
        f"unrelated_max_edit={unrelated[:, 1].max(initial=0):.2f} "
        f"unrelated_q999_exact={q[0]:.2f} unrelated_q999_edit={q[1]:.2f} "
        f"unrelated_over_keep={(unrelated[:, 1] >= keep).sum()} overlaps={len(overlaps)} "
        f"overlaps_reread={(overlaps[:, 0] >= RESCUE_MIN_LOCAL).sum()} "
        f"overlaps_kept={(overlaps[:, 1] >= keep).sum()}"
    )


if __name__ == "__main__":
    main()
