"""The stems a book's translations are searched by, one policy for the indexed keys and the
queries: a book's own stems, or a noisy book's rescued one edit away.

At 10 % character noise a third or more of a book's words are garbled, so their stems match
no lexicon entry and no stem of the book's translation: the stems the book is indexed with
miss the clean side's translated query, and its own query translates only what survived. A
garbled stem one edit from exactly one lexicon headword is that headword most often
(``bookdup.editlookup``); replaced by it on both sides, 3,000 generated books found 10 more of
their 883 translations with the same candidate lists' size (docs/EVALUATION.md, "Noisy books'
stems rescued one edit away").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bookdup.features import BookFeatures, looks_noisy
from bookdup.pivot import PivotLexicons, rescued_stems


def rescues_stems(f: BookFeatures) -> bool:
    """Whether ``f``'s stems are rescued: a noisy book (``looks_noisy``) whose words are at
    hand (the index worker's; a dedup job's noisy query books keep theirs)."""
    u = f.unique
    return u.stems is not None and u.words is not None and looks_noisy(len(u.words), f.n_words)


def searched_stems(f: BookFeatures, lexicons: Callable[[], PivotLexicons]) -> np.ndarray | None:
    """``f``'s stem hashes, a noisy book's each one no lexicon knows replaced by the one
    headword stem within one edit of it (``bookdup.pivot.rescued_stems``). ``lexicons`` is
    called only for a noisy book: loading them and building a language's lookup takes
    seconds, which a collection of clean books never pays."""
    if not rescues_stems(f):
        return f.unique.stems
    assert f.unique.stems is not None and f.unique.words is not None
    return rescued_stems(f.unique.stems, f.unique.words, f.language, lexicons())
