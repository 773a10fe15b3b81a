"""Feature extraction speed, signature cost against datasketch, stored size and peak memory.

Books: the first 100K words of every Gutenberg book that long (PG header included, as indexed),
split into 330 pages by lines. Single process, so books/s is per core. Medians over repeats.

    python benchmarks/bench_features.py [--repeats 3] [--data PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
import tracemalloc
from pathlib import Path

from datasketch import MinHash

from bookdup.features import FeatureParams, extract_features, features_to_doc
from bookdup.minhash import (
    fingerprints_from_hashes,
    minhash,
    page_minhashes_from_hashes,
    word_hashes64,
)
from bookdup.model import Book
from bookdup.text import normalise_pages
from bookdup.uniquewords import encode_pages

DATA = Path(__file__).resolve().parents[1] / "../shared/data/gutenberg"
WORDS, PAGES = 100_000, 330


def load_books(data: Path) -> list[Book]:
    """First WORDS whitespace tokens of each long-enough book, as PAGES pages of whole lines."""
    books = []
    for line in (data / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        m = json.loads(line)
        lines = (data / m["file"]).read_text(encoding="utf-8").splitlines()
        taken, n = [], 0
        for text_line in lines:
            taken.append(text_line)
            n += len(text_line.split())
            if n >= WORDS:
                break
        if n < WORDS:
            continue
        cuts = [len(taken) * i // PAGES for i in range(PAGES + 1)]
        pages = ["\n".join(taken[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
        books.append(Book(m["id"], pages))
    return books


def ours_signatures(pages_words: list[list[str]], p: FeatureParams) -> None:
    """Our signature path as extract_features runs it: hash distinct words once, then numpy."""
    enc = encode_pages(pages_words)
    h64 = word_hashes64(enc.vocab)[enc.ids]
    minhash(fingerprints_from_hashes(h64, p.shingle_k), p.num_perm)
    page_minhashes_from_hashes(h64, enc.page_lengths, p.page_perm, p.shingle_k, p.page_bits)


def datasketch_signatures(pages_words: list[list[str]], p: FeatureParams) -> None:
    k = p.shingle_k
    words = [w for page in pages_words for w in page]
    book = MinHash(num_perm=p.num_perm)
    book.update_batch([" ".join(words[i : i + k]).encode() for i in range(len(words) - k + 1)])
    for page in pages_words:
        m = MinHash(num_perm=p.page_perm)
        m.update_batch([" ".join(page[i : i + k]).encode() for i in range(len(page) - k + 1)])


def timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    params = FeatureParams()
    books = load_books(args.data.resolve())
    print(f"{len(books)} books of {WORDS} words, {PAGES} pages each")
    extract_features(books[0])  # warm caches (letter table, band choice)

    per_book, ours, theirs = [], [], []
    for book in books:
        per_book.append(
            statistics.median(timed(extract_features, book) for _ in range(args.repeats))
        )
        pw = normalise_pages(book.pages)
        ours.append(
            statistics.median(timed(ours_signatures, pw, params) for _ in range(args.repeats))
        )
        theirs.append(timed(datasketch_signatures, pw, params))
    ms = statistics.median(per_book) * 1000
    ratio = statistics.median(t / o for t, o in zip(theirs, ours, strict=True))
    lo, hi = min(per_book) * 1000, max(per_book) * 1000
    print(f"extract_features: median {ms:.1f} ms/book (min {lo:.1f}, max {hi:.1f})")
    print(
        f"signatures only (book 128 + pages 32): ours {statistics.median(ours) * 1000:.1f} ms, "
        f"datasketch {statistics.median(theirs) * 1000:.1f} ms, ratio {ratio:.1f}x"
    )

    doc = json.dumps(features_to_doc(extract_features(books[0])))
    doc_kb, gz_kb = len(doc) / 1024, len(gzip.compress(doc.encode())) / 1024
    name = f"{books[0].id} ({len(books[0].pages)} pages)"
    print(f"stored doc for {name}: {doc_kb:.1f} KB, gzip {gz_kb:.1f} KB")

    tracemalloc.start()
    extract_features(books[0])
    peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"peak traced memory of one extraction: {peak_mb:.1f} MB")
    print(
        f"RESULT books_per_s={1000 / ms:.1f} ms_per_book={ms:.1f} datasketch_ratio={ratio:.1f} "
        f"doc_kb={doc_kb:.1f} doc_gzip_kb={gz_kb:.1f} peak_mb={peak_mb:.1f}"
    )


if __name__ == "__main__":
    main()
