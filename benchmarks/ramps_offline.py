"""Classifier variants tried on every same-language pair of several corpora at once: each pair
past the dedup job's floors gets its signals computed once (the corpus as the collection, as
`classes_alone.py` does), then every variant re-classifies them all in milliseconds. Listed:
the pairs that move, into (+) or out of (-) their truth class, and every pair a variant relates
that the truth calls unrelated. How stop 54 read the overlap's size ramps against 31 corpora
(issue 29). Pairs under the floors are not re-read: a variant that opens the gate below them
(``min_its``, ``min_z``) needs the floors moved too.

    python benchmarks/ramps_offline.py CORPUS... --variant 'NAME:field=lo,hi;field=lo,hi' ...
        [--cache SIGNALS.pkl]

A corpus is a folder written by `bookdup generate` or `eval_variants.py`; a folder of book
files without ``books.jsonl`` (``../shared/data/gutenberg``) has no truth: the relations a
variant adds or drops there are listed for a reader ("?").
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import pickle
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from classes_alone import _features, _jsonl, _NoLexicons

from bookdup.classify import CLASSIFIER_PARAMS, ClassifierParams, classify
from bookdup.collection import BooksInMemory
from bookdup.compare import translated_first
from bookdup.features import BookFeatures, extract_features
from bookdup.relate import plan_candidate, verify_planned
from bookdup.signals import RelationSignals, compute_signals
from readers import DEFAULT_LINES_PER_PAGE, ReadError, iter_books

UNKNOWN = "?"


class Pair(NamedTuple):
    corpus: str
    a: str
    b: str
    truth: str
    signals: RelationSignals


def _books(corpus: Path) -> tuple[dict[str, BookFeatures], dict[tuple[str, str], str] | None]:
    """Every book's features and the truth by sorted pair (None: the folder has no truth)."""
    if not (corpus / "books.jsonl").is_file():
        files = sorted(p for p in corpus.iterdir() if p.suffix == ".txt")
        feats = {}
        for book in iter_books(files, lines_per_page=DEFAULT_LINES_PER_PAGE):
            if isinstance(book, ReadError):
                raise SystemExit(str(book))
            feats[book.id] = extract_features(book)
        return feats, None
    feats = _features(corpus, _jsonl(corpus / "books.jsonl"))
    truth = {
        (min(t["a"], t["b"]), max(t["a"], t["b"])): str(t["relation"])
        for t in _jsonl(corpus / "ground_truth.jsonl")
    }
    return feats, truth


def pairs_past_the_floors(corpus: Path) -> list[Pair]:
    """The signals of every same-language pair of ``corpus`` the job would classify."""
    feats, truth = _books(corpus)
    collection = BooksInMemory(feats.values())
    by_language: dict[str, list[str]] = {}
    for book_id, f in feats.items():
        by_language.setdefault(f.language, []).append(book_id)
    out = []
    for ids in by_language.values():
        for a, b in itertools.combinations(sorted(ids), 2):
            fa, fb = feats[a], feats[b]
            plan = plan_candidate(fa, fb, _NoLexicons())
            verified = verify_planned(fa, fb, plan) if plan is not None else None
            if verified is None:
                continue
            x, y = (fa, fb) if translated_first(fa, fb, None) else (fb, fa)
            signals = compute_signals(x, y, verified.verification, collection=collection)
            known = UNKNOWN if truth is None else truth.get((a, b), "UNRELATED")
            out.append(Pair(corpus.name, a, b, known, signals))
    return out


def variant(spec: str) -> tuple[str, ClassifierParams]:
    """``NAME:field=lo,hi;field=lo,hi`` as a name and the tree's params with those ramps."""
    name, _, fields = spec.partition(":")
    changes = {}
    for item in filter(None, fields.split(";")):
        field, _, values = item.partition("=")
        changes[field.strip()] = tuple(float(v) for v in values.split(","))
    return name, dataclasses.replace(CLASSIFIER_PARAMS, **changes)


def moves(pairs: list[Pair], params: ClassifierParams) -> Counter[str]:
    """Print the pairs whose class differs from the tree's under ``params``; count them."""
    counts: Counter[str] = Counter()
    for p in pairs:
        old, new = classify(p.signals).relation, classify(p.signals, params).relation
        if old == new:
            continue
        if p.truth == UNKNOWN:
            sign, kind = "?", "unknown"
        elif new == p.truth or old == p.truth:
            sign, kind = ("+", "right") if new == p.truth else ("-", "wrong")
        else:
            sign, kind = " ", "other"
        if p.truth == "UNRELATED" and new != "UNRELATED":
            kind = "false"
        counts[kind] += 1
        print(f"  {sign} {p.corpus} {p.a} {p.b} {p.truth}: {old} -> {new}")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path, nargs="*")
    ap.add_argument("--variant", action="append", default=[], help="NAME:field=lo,hi;...")
    ap.add_argument("--cache", type=Path, help="signals read from / written to this file")
    args = ap.parse_args()
    if args.cache and args.cache.is_file():
        pairs: list[Pair] = pickle.loads(args.cache.read_bytes())
    else:
        pairs = [p for corpus in args.corpora for p in pairs_past_the_floors(corpus)]
        if args.cache:
            args.cache.write_bytes(pickle.dumps(pairs))
    print(f"{len(pairs)} pairs past the floors in {len({p.corpus for p in pairs})} corpora")
    fields = [f"pairs={len(pairs)}"]
    for spec in args.variant:
        name, params = variant(spec)
        print(f"== {name}")
        counts = moves(pairs, params)
        fields += [f"{name}_{k}={counts[k]}" for k in ("right", "wrong", "false", "unknown")]
    print("RESULT " + " ".join(fields))


if __name__ == "__main__":
    main()
