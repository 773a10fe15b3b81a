"""Word models derived from real texts, and the prose they generate.

The models (``generator/data/wordmodel-<lang>.npz``, built by ``scripts/build_wordmodel.py``) hold
only statistics: vocabulary with counts, pruned successor lists, sentence-start words and
histograms of sentence / paragraph lengths and punctuation. Sampling mixes the bigram chain with
the unigram distribution, so unrelated works share vocabulary and style but not long word
sequences, as real unrelated books do.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

# punctuation codes attached *after* a word; codes >= SENTENCE_END end a sentence
PUNCT = np.array(["", ",", ";", ".", "?", "!"], dtype=object)
SENTENCE_END = 3
_MIN_SENTENCE = 3  # one- and two-word "sentences" in the sources are mostly verse and headings
_MAX_PARAGRAPH = 12


@dataclass(frozen=True)
class Prose:
    """A text as words plus the punctuation after each word and paragraph ends.

    Kept apart from its rendering so that volumes, anthologies and translations are slices or
    word-for-word maps of the same token positions, which is what the ground truth is stated in.
    """

    words: np.ndarray  # object array of str
    punct: np.ndarray  # uint8 codes into PUNCT
    para_end: np.ndarray  # bool: a paragraph ends after this word

    def __len__(self) -> int:
        return len(self.words)

    def slice(self, start: int, end: int) -> Prose:
        """Words [start, end); the last word always closes a paragraph and a sentence."""
        punct = self.punct[start:end].copy()
        para_end = self.para_end[start:end].copy()
        if end > start:
            punct[-1] = max(int(punct[-1]), SENTENCE_END)
            para_end[-1] = True
        return Prose(self.words[start:end], punct, para_end)

    def paragraph_starts(self) -> np.ndarray:
        """Token indices where a paragraph starts (cut points for volumes and excerpts)."""
        return np.concatenate([[0], np.flatnonzero(self.para_end[:-1]) + 1])

    @staticmethod
    def concat(parts: list[Prose]) -> Prose:
        """Join texts one after another (anthologies, front matter)."""
        return Prose(
            np.concatenate([p.words for p in parts]),
            np.concatenate([p.punct for p in parts]),
            np.concatenate([p.para_end for p in parts]),
        )


def _cumulative(weights: np.ndarray) -> np.ndarray:
    c = np.cumsum(weights, axis=-1, dtype=np.float64)
    total = c[..., -1:]
    return np.divide(c, total, out=np.ones_like(c), where=total > 0)


class WordModel:
    """One language's statistics, ready for vectorised sampling."""

    def __init__(self, language: str, arrays: dict[str, np.ndarray]) -> None:
        self.language = language
        self.vocab = arrays["vocab"].astype(object)
        counts = arrays["counts"].astype(np.float64)
        self.counts = counts
        self._unigram = _cumulative(counts)
        self._succ = arrays["succ"].astype(np.int64)
        succ_counts = arrays["succ_counts"].astype(np.float64)
        self._has_succ = succ_counts.sum(axis=1) > 0
        self._succ_cum = _cumulative(succ_counts)
        self._start = arrays["start"].astype(np.int64)
        self._start_cum = _cumulative(arrays["start_counts"].astype(np.float64))
        sent = arrays["sent_len"].astype(np.float64)
        sent[:_MIN_SENTENCE] = 0
        self._sent_cum = _cumulative(sent)
        para = arrays["para_len"][: _MAX_PARAGRAPH + 1].astype(np.float64)
        self._para_cum = _cumulative(para)
        punct = arrays["punct"].astype(np.float64)  # , ; . ? !
        n_words = counts.sum()
        self._comma_p = punct[0] / n_words
        self._semicolon_p = punct[1] / n_words
        self._end_cum = _cumulative(punct[2:])
        self.letters = np.array(sorted({c for w in self.vocab[:5000] for c in w.lower()}))

    def _unigram_ids(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.searchsorted(self._unigram, rng.random(n), side="right")

    def unigram_words(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` words drawn independently from the unigram distribution (object array)."""
        return self.vocab[self._unigram_ids(rng, n)]

    def words(self, rng: np.random.Generator, n_words: int, bigram_weight: float = 0.7) -> Prose:
        """Sample about ``n_words`` words of prose (whole sentences and paragraphs).

        Every sentence is an independent chain and all chains advance together, one numpy step per
        word position, so the cost is ~max sentence length vector operations per call.
        """
        n_words = max(n_words, _MIN_SENTENCE)
        mean_len = float(np.diff(self._sent_cum, prepend=0) @ np.arange(len(self._sent_cum)))
        lengths = np.searchsorted(
            self._sent_cum, rng.random(int(n_words / mean_len * 1.3) + 8), side="right"
        )
        ends = np.cumsum(lengths)
        lengths = lengths[: int(np.searchsorted(ends, n_words)) + 1]
        lengths = np.sort(lengths)[::-1]  # longest first: step t only advances a prefix
        n_sent, width = len(lengths), int(lengths[0])
        active = np.searchsorted(-lengths, -np.arange(width), side="left")  # lengths > t
        ids = np.zeros((n_sent, width), dtype=np.int64)
        first = self._start[np.searchsorted(self._start_cum, rng.random(n_sent), side="right")]
        ids[:, 0] = np.where(rng.random(n_sent) < 0.5, first, self._unigram_ids(rng, n_sent))
        chain_u = rng.random(int(lengths.sum()))
        uni = self._unigram_ids(rng, len(chain_u))
        pos = 0
        for t in range(1, width):
            k = int(active[t])
            prev = ids[:k, t - 1]
            u = chain_u[pos : pos + k]
            col = (self._succ_cum[prev] < u[:, None] / bigram_weight).sum(axis=1)
            col = np.minimum(col, self._succ.shape[1] - 1)
            # one uniform decides both chain-vs-unigram and, rescaled, the successor
            chain = (u < bigram_weight) & self._has_succ[prev]
            ids[:k, t] = np.where(chain, self._succ[prev, col], uni[pos : pos + k])
            pos += k
        mask = np.arange(width)[None, :] < lengths[:, None]
        order = rng.permutation(n_sent)  # undo the length sort
        lengths, ids, mask = lengths[order], ids[order], mask[order]
        flat = ids[mask]
        n = len(flat)
        sentence_last = np.cumsum(lengths) - 1
        u = rng.random(n)
        semicolon = u < self._comma_p + self._semicolon_p
        punct = np.where(u < self._comma_p, 1, np.where(semicolon, 2, 0))
        ends = SENTENCE_END + np.searchsorted(self._end_cum, rng.random(n_sent), side="right")
        punct[sentence_last] = np.minimum(ends, len(PUNCT) - 1)
        para_sizes = np.searchsorted(self._para_cum, rng.random(n_sent), side="right")
        para_last_sentence = np.cumsum(para_sizes) - 1
        para_last_sentence = para_last_sentence[para_last_sentence < n_sent]
        para_end = np.zeros(n, dtype=bool)
        para_end[sentence_last[para_last_sentence]] = True
        para_end[-1] = True
        return Prose(self.vocab[flat], punct.astype(np.uint8), para_end)

    def phrase(self, rng: np.random.Generator, n_words: int) -> str:
        """A short capitalised phrase (titles, author names) from frequent-ish vocabulary."""
        ids = rng.integers(50, min(5000, len(self.vocab)), n_words)
        return " ".join(w[:1].upper() + w[1:] for w in self.vocab[ids])


@cache
def load_wordmodel(language: str) -> WordModel:
    """The shipped model for ``language`` (ISO 639-1); cached, they are immutable."""
    path = resources.files("generator") / "data" / f"wordmodel-{language}.npz"
    with resources.as_file(path) as p, np.load(p) as z:
        return WordModel(language, {k: z[k] for k in z.files})


def available_languages() -> list[str]:
    """Languages with a shipped word model."""
    data = resources.files("generator") / "data"
    return sorted(
        f.name[len("wordmodel-") : -len(".npz")]
        for f in data.iterdir()
        if f.name.startswith("wordmodel-") and f.name.endswith(".npz")
    )
