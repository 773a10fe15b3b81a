"""Where the dedup job loses each related pair a finished run missed (issue 29).

For every truth pair of a generated corpus whose stored relation is not its truth class, the
job's own stages are replayed on the pair alone against the run's index: is it a candidate
(``CandidateSearcher.ranked`` of either book, which query found it, at what rank), what the
collection's masks drop from each book (``prepare_features``: words held by most books,
frequent-word stretches), whether verification passes its floors on the job's features and
on the unmasked stored ones, and the class each gets; and, for reference, `bookdup compare`
on the two files. One line per pair, then the count by stage.

    python benchmarks/miss_stages.py CORPUS --index-prefix PREFIX [--relation OVERLAPPING_TEXT]

Needs the run's indices (ELASTICSEARCH_URL, default http://127.0.0.1:9200).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

from bookdup.boilerplate import boilerplate_mask, isin_sorted
from bookdup.compare import compare_features
from bookdup.features import BookFeatures, extract_features, features_from_doc
from bookdup.relate import VerifiedPair, classify_verified, plan_pair, verify_planned
from indexer.dedup_job import DedupParams
from indexer.dedup_stages import DedupRun, prepare
from readers import DEFAULT_LINES_PER_PAGE, ReadError, iter_books
from store.connection import ConnectionSettings, connect
from store.features import prepare_features
from store.keys import source_read_keys, stored_keys
from store.schema import IndexNames


def _stored(run: DedupRun, book_id: str) -> tuple[BookFeatures, BookFeatures]:
    """A book as the job's query side reads it (unmasked, with its keys) and as verified."""
    fields = ["features", *(k.field for k in source_read_keys())]
    doc = run.client.get(index=run.names.books, id=book_id, source=fields)["_source"]
    raw = features_from_doc(doc["features"], words=False)
    return dataclasses.replace(raw, **stored_keys(doc)), prepare_features(raw, run.stop)


def _found_by(run: DedupRun, query: BookFeatures, other: str) -> list[str]:
    """The candidate queries of ``query`` whose hits hold ``other``, as kind@rank."""
    out = []
    for ranked in run.searcher.ranked([query]):
        ids = [hit for hit, _ in ranked.hits]
        if other in ids:
            out.append(f"{ranked.kind}@{ids.index(other)}/{len(ids)}")
    return out


def _masked(raw: BookFeatures, run: DedupRun) -> str:
    """Unique words the job's masks drop: common (most books), frequent-word stretches."""
    hashes = raw.unique.hashes
    common = int(isin_sorted(hashes, run.stop.common).sum()) if run.stop.common.size else 0
    frequent = run.stop.frequent
    stretch = int(boilerplate_mask(hashes, frequent).sum()) if frequent.size else 0
    return f"{hashes.size}u -{common}c -{stretch}s"


def _verdict(a: BookFeatures, b: BookFeatures) -> tuple[str, VerifiedPair | None]:
    """The job's verification and class of (a, b): 'below floor' or the relation."""
    plan = plan_pair(a, b, _NO_LEXICONS)
    verified = verify_planned(a, b, plan) if plan is not None else None
    if verified is None:
        return "below floor", None
    return classify_verified(verified).relation, verified


class _NoLexicons:
    """Same-language pairs only: no lexicon is ever needed."""

    def targets(self, source: str) -> list[str]:
        return []

    def get(self, source: str, target: str) -> None:
        return None


_NO_LEXICONS = _NoLexicons()


def _alone(corpus: Path, book: dict[str, Any], other: dict[str, Any]) -> str:
    """`bookdup compare` of the two files (floors its 0.45 / z 8, as pair verification)."""
    fa, fb = (_read(corpus / x["file"]) for x in (book, other))
    return compare_features(fa, fb, threshold=0.45, min_z=8.0).relation


def _read(path: Path) -> BookFeatures:
    """The features of the one book at ``path`` (a file that cannot be read stops the script)."""
    book = next(iter(iter_books([path], lines_per_page=DEFAULT_LINES_PER_PAGE)))
    if isinstance(book, ReadError):
        raise SystemExit(str(book))
    return extract_features(book)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def stage(job: str, found: list[str], unmasked: str, truth: str) -> str:
    """The first stage at which the pair leaves its truth class."""
    if not found:
        return "not a candidate"
    if job == "below floor":
        return "dropped by a mask" if unmasked != "below floor" else "below the floor"
    if job == "UNRELATED":
        return "classified UNRELATED"
    return "classified " + job if job != truth else "found now (the stored run missed it)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--index-prefix", required=True)
    ap.add_argument("--relation", default="OVERLAPPING_TEXT", help="truth class to examine")
    ap.add_argument("--texts", type=Path, help="where the book files are (default: CORPUS)")
    args = ap.parse_args()
    client = connect(ConnectionSettings.from_env(timeout=300))
    names = IndexNames(args.index_prefix)
    run = prepare(client, names, DedupParams(verify_workers=1), "miss-stages", None)
    books = {b["id"]: b for b in _jsonl(args.corpus / "books.jsonl")}
    truth = _jsonl(args.corpus / "ground_truth.jsonl")
    stored = {
        (h["_source"]["a"], h["_source"]["b"]): h["_source"]["relation"]
        for h in client.search(index=names.relations, size=10_000, query={"match_all": {}})["hits"][
            "hits"
        ]
    }
    counts: Counter[str] = Counter()
    for t in truth:
        a, b = t["a"], t["b"]
        if t["relation"] != args.relation or stored.get((a, b)) == args.relation:
            continue
        qa, ja = _stored(run, a)
        qb, jb = _stored(run, b)
        found = _found_by(run, qa, b) + _found_by(run, qb, a)
        job, _ = _verdict(ja, jb)
        unmasked, _ = _verdict(qa, qb)
        where = stage(job, found, unmasked, args.relation)
        counts[where] += 1
        sizes = " / ".join(f"{books[i]['kind']} {books[i]['n_words']}w" for i in (a, b))
        alone = _alone(args.texts or args.corpus, books[a], books[b])
        print(
            f"{a} {b} | {sizes} | share {t['overlap']:.2f} | run {stored.get((a, b), '-')} | "
            f"cand {','.join(found) or '-'} | masks {_masked(qa, run)} / {_masked(qb, run)} | "
            f"job {job} | unmasked {unmasked} | alone {alone} | {where}",
            flush=True,
        )
    stages = " ".join(f"{k.replace(' ', '_')}={n}" for k, n in sorted(counts.items()))
    print(f"RESULT misses={sum(counts.values())} {stages}")


if __name__ == "__main__":
    main()
