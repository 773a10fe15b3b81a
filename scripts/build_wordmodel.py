"""Build the per-language word models that `bookdup generate` samples from.

Reads the real Project Gutenberg texts (``manifest.jsonl`` gives each file's language), keeps only
the text between the ``*** START OF`` and ``*** END OF`` markers, and writes *derived statistics*
only (no text) to ``generator/data/wordmodel-<lang>.npz``:

* ``vocab``: the top words (most frequent spelling of each case-folded word), ``counts``;
* ``succ`` / ``succ_counts``: each word's most frequent successors within a sentence (pruned);
* ``start`` / ``start_counts``: the most frequent sentence-initial words;
* ``sent_len``: histogram of sentence lengths in words, ``para_len``: of paragraph lengths in
  sentences; ``punct``: counts of comma, semicolon, ``.``, ``?``, ``!`` (style, not content).

A first-order Markov chain mixed with the unigram distribution gives generated works that share
vocabulary and local style but not long word sequences. Usage::

    python scripts/build_wordmodel.py /path/to/gutenberg [--out generator/data] [--vocab 20000]
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import click
import numpy as np

LANGUAGES = ("en", "de", "fr", "es", "it")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.!?]+")
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|[.!?;,]")
_MAX_SENT = 80
_MAX_PARA = 30


def strip_gutenberg(text: str) -> str:
    """The book proper: PG boilerplate is shared by unrelated books, so it must not count."""
    start = text.find("*** START OF")
    if start >= 0:
        start = text.find("\n", start) + 1
    end = text.find("*** END OF")
    return text[max(start, 0) : end if end > 0 else len(text)]


def _sentences(text: str) -> tuple[list[list[str]], list[int], Counter[str]]:
    """Split into sentences (lists of words), sentences per paragraph, and punctuation counts."""
    sentences: list[list[str]] = []
    para_lens: list[int] = []
    punct: Counter[str] = Counter()
    for para in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        current: list[str] = []
        n_sent = 0
        for tok in _TOKEN.findall(para):
            if tok in ".!?":
                punct[tok] += 1
                if current:
                    sentences.append(current)
                    n_sent += 1
                current = []
            elif tok in ",;":
                punct[tok] += 1
            else:
                current.append(tok)
        if current:
            sentences.append(current)
            n_sent += 1
        if n_sent:
            para_lens.append(n_sent)
    return sentences, para_lens, punct


def build_model(
    texts: list[str], vocab_size: int, n_succ: int, n_start: int
) -> dict[str, np.ndarray]:
    """Derive the statistics of one language from its texts."""
    sentences: list[list[str]] = []
    para_lens: list[int] = []
    punct: Counter[str] = Counter()
    for text in texts:
        s, p, c = _sentences(strip_gutenberg(text))
        sentences += s
        para_lens += p
        punct += c
    forms: Counter[str] = Counter(w for s in sentences for w in s)
    folded: Counter[str] = Counter()
    best: dict[str, tuple[int, str]] = {}
    for form, n in forms.items():
        key = form.casefold()
        folded[key] += n
        if n > best.get(key, (0, ""))[0]:
            best[key] = (n, form)
    top = [k for k, _ in folded.most_common(vocab_size)]
    index = {k: i for i, k in enumerate(top)}
    vocab = np.array([best[k][1] for k in top])
    counts = np.array([folded[k] for k in top], dtype=np.uint32)

    v = len(top)
    ids = [np.array([index.get(w.casefold(), -1) for w in s], dtype=np.int64) for s in sentences]
    pairs = np.concatenate(
        [(a[:-1] * v + a[1:])[(a[:-1] >= 0) & (a[1:] >= 0)] for a in ids if len(a) > 1]
    )
    keys, pair_counts = np.unique(pairs, return_counts=True)
    keep = pair_counts >= 2  # singletons are mostly one book's own phrases: prune them
    keys, pair_counts = keys[keep], pair_counts[keep]
    first, second = keys // v, keys % v
    order = np.lexsort((-pair_counts, first))
    first, second, pair_counts = first[order], second[order], pair_counts[order]
    row_start = np.searchsorted(first, np.arange(v))
    rank = np.arange(len(first)) - row_start[first]
    keep = rank < n_succ
    succ = np.full((v, n_succ), np.iinfo(np.uint16).max, dtype=np.uint16)
    succ_counts = np.zeros((v, n_succ), dtype=np.uint32)
    succ[first[keep], rank[keep]] = second[keep]
    succ_counts[first[keep], rank[keep]] = pair_counts[keep]

    starts = Counter(int(a[0]) for a in ids if len(a) and a[0] >= 0)
    start = np.array([k for k, _ in starts.most_common(n_start)], dtype=np.uint16)
    start_counts = np.array([starts[int(k)] for k in start], dtype=np.uint32)
    sent_len = np.bincount(
        np.minimum([len(s) for s in sentences], _MAX_SENT), minlength=_MAX_SENT + 1
    ).astype(np.uint32)
    sent_len[0] = 0
    para_len = np.bincount(np.minimum(para_lens, _MAX_PARA), minlength=_MAX_PARA + 1).astype(
        np.uint32
    )
    para_len[0] = 0
    punct_arr = np.array([punct[c] for c in ",;.?!"], dtype=np.uint32)
    return {
        "vocab": vocab,
        "counts": counts,
        "succ": succ,
        "succ_counts": succ_counts,
        "start": start,
        "start_counts": start_counts,
        "sent_len": sent_len,
        "para_len": para_len,
        "punct": punct_arr,
    }


@click.command()
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), default=Path("generator/data")
)
@click.option("--vocab", "vocab_size", default=20000, show_default=True)
@click.option("--successors", "n_succ", default=24, show_default=True)
@click.option("--starts", "n_start", default=1000, show_default=True)
def main(corpus: Path, out: Path, vocab_size: int, n_succ: int, n_start: int) -> None:
    """Write generator/data/wordmodel-<lang>.npz for every language in the manifest."""
    rows = [json.loads(line) for line in (corpus / "manifest.jsonl").read_text().splitlines()]
    out.mkdir(parents=True, exist_ok=True)
    for lang in LANGUAGES:
        texts = [
            (corpus / r["file"]).read_text(encoding="utf-8") for r in rows if r["language"] == lang
        ]
        if not texts:
            continue
        model = build_model(texts, vocab_size, n_succ, n_start)
        path = out / f"wordmodel-{lang}.npz"
        np.savez_compressed(path, **model)
        click.echo(
            f"{lang}: {len(texts)} books, vocab {len(model['vocab'])}, "
            f"bigrams {int((model['succ_counts'] > 0).sum())}, {path.stat().st_size / 1e6:.2f} MB"
        )


if __name__ == "__main__":
    main()
