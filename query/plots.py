"""A picture of the alignment: page of book X against page of book Y for every aligned word.

A straight diagonal is the same pagination, a tilted line a re-paginated edition, a short
segment a volume inside a set, several segments an anthology; a translation shows the same
shapes with more scatter. The data come from re-verifying the pair from the stored features.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.verify import verify_pair
from readers.dictionaries import resolve_dictionary
from store.features import get_features
from store.schema import IndexNames

MAX_PANELS = 6


def alignment_pages(a: BookFeatures, b: BookFeatures) -> tuple[list[int], list[int]]:
    """Pages (1-based) of the aligned unique words of ``a`` and ``b``."""
    dictionary = resolve_dictionary(a.language, b.language, None)
    verification = verify_pair(a, b, threshold=0.0, dictionary=dictionary)
    if verification is None:
        return [], []
    px, py = verification.alignment
    return (px + 1).tolist(), (py + 1).tolist()


def plot_alignments(
    client: Elasticsearch,
    names: IndexNames,
    result: dict[str, Any],
    out: Path,
    *,
    book: Book | None = None,
) -> None:
    """One scatter panel per related book (at most six) written to ``out`` as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    this_id = result["book"]["book_id"]
    this = (
        extract_features(book) if book is not None else get_features(client, names.books, this_id)
    )
    relations = result["relations"][:MAX_PANELS]
    if this is None or not relations:
        raise ValueError(f"nothing to plot for {this_id}: no features or no relations")
    fig, axes = plt.subplots(1, len(relations), figsize=(4 * len(relations), 4), squeeze=False)
    for ax, rel in zip(axes[0], relations, strict=False):
        other = get_features(client, names.books, rel["book_id"])
        if other is None:
            continue
        px, py = alignment_pages(this, other)
        ax.scatter(py, px, s=2, alpha=0.5)
        ax.set_xlim(0, other.n_pages + 1)
        ax.set_ylim(0, this.n_pages + 1)
        ax.set_xlabel(f"{rel['book_id']} page")
        ax.set_ylabel(f"{this_id} page")
        ax.set_title(f"{rel['relation']}\nits={rel['its']:.3f} lcs={rel['lcs']}", fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
