"""A picture of the alignment: page of book X against page of book Y for every aligned word.

A straight diagonal is the same pagination, a tilted line a re-paginated edition, a short
segment a volume inside a set, several segments an anthology; a translation shows the same
shapes with more scatter. The data come from re-verifying the pair from the stored features.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from bookdup.features import BookFeatures, extract_features
from bookdup.model import Book
from bookdup.verify import verify_pair
from bookdup.vocabulary import relation_label, seen_from_sentence
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
    """One scatter panel per related book (at most six) written to ``out`` in the format its
    suffix names (`picture_format`: ValueError for an unknown suffix or a missing folder)."""
    fmt = picture_format(out)
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
        ax.set_title(related_title(rel), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110, format=fmt)
    plt.close(fig)


def related_title(rel: dict[str, Any]) -> str:
    """A panel's title: the class as the CLI names it, then the verdict seen from this book in
    the words of every reader (``bookdup.vocabulary``), then the scores."""
    head = (
        f"{relation_label(rel['relation'])} ({rel['relation']}), confidence {rel['confidence']:.2f}"
    )
    words = seen_from_sentence(rel["relation"], rel.get("direction"))
    return f"{head}\n{textwrap.fill(words, 48)}\nits={rel['its']:.3f} lcs={rel['lcs']}"


def explain_title(e: dict[str, Any]) -> str:
    """The explain picture's title: both books, then the two lines `bookdup explain` prints
    first, the class with its confidence and the plain-language verdict (wrapped, whole)."""
    books = f"A: {_short(e['a']['display_title'])}  ·  B: {_short(e['b']['display_title'])}"
    head = f"{e['relation']} ({e['label']}), confidence {e['confidence']:.2f}"
    return "\n".join([books, head, *textwrap.wrap(e["verdict"], 130)])


# --- the explain pictures: dot plot and DUPNIQ-style bars, PNG or SVG ------------------------

FORMATS = {"png": "image/png", "svg": "image/svg+xml"}
#: Formats matplotlib writes that are no picture file a reader opens (pixel dumps; LaTeX code
#: that needs a TeX installation).
NOT_FILE_FORMATS = frozenset({"raw", "rgba", "pgf"})


def file_formats() -> list[str]:
    """The picture formats a file may be written in: what this matplotlib writes (png, svg,
    pdf, jpg, gif, … with Pillow), less ``NOT_FILE_FORMATS``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    supported = FigureCanvasAgg(Figure()).get_supported_filetypes()
    return sorted(set(supported) - NOT_FILE_FORMATS)


def picture_format(path: Path) -> str:
    """The format a picture file is written in, from its suffix (``x.gif`` is a GIF).

    ValueError naming the problem for a suffix matplotlib cannot write (or none), and for a
    folder that does not exist: pictures never create folders.
    """
    fmt = path.suffix.lower().lstrip(".")
    formats = file_formats()
    if fmt not in formats:
        what = f"a .{fmt} file" if fmt else "a file without a suffix"
        raise ValueError(
            f"{path}: cannot write the picture as {what}; give a name ending in "
            + ", ".join(f".{f}" for f in formats)
        )
    if not path.parent.is_dir():
        raise ValueError(f"{path}: the folder {path.parent} does not exist (it is not created)")
    return fmt


RUN_COLOUR = "#1b7837"
CHANCE_COLOUR = "#b0b0b0"
FRAME_COLOUR = "#e08214"
FIT_COLOUR = "#c51b7d"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dot_plot(ax: Any, e: dict[str, Any]) -> None:
    """Aligned unique words: page of A against page of B, with the fitted page line."""
    import numpy as np

    al = e["alignment"]
    xa, yb = np.asarray(al["a_page"]), np.asarray(al["b_page"])
    kind = np.asarray(al["kind"], dtype=np.int8)
    for k, colour, label, size in (
        (0, CHANCE_COLOUR, "aligned by chance", 3),
        (2, FRAME_COLOUR, "shared boilerplate (licence, front matter)", 4),
        (1, RUN_COLOUR, "shared text", 4),
    ):
        if (kind == k).any():
            ax.scatter(xa[kind == k], yb[kind == k], s=size, c=colour, label=label, lw=0)
    na, nb = e["a"].get("n_pages") or 1, e["b"].get("n_pages") or 1
    pm = e.get("page_mapping")
    if pm and e["relation"] != "UNRELATED":
        s = e["signals"]
        xs = np.array([1.0, na + 1.0])
        ax.plot(
            xs,
            s["slope"] * (xs - 1) + s["offset"] + 1,
            "--",
            c=FIT_COLOUR,
            lw=1,
            label=f"fit: page B ≈ {s['slope']:.2f}·page A {s['offset']:+.1f}",
        )
    ax.set_xlim(1, na + 1)
    ax.set_ylim(1, nb + 1)
    ax.set_xlabel(f"page of A ({_short(e['a']['book_id'], 30)})")
    ax.set_ylabel(f"page of B ({_short(e['b']['book_id'], 30)})")
    ax.set_title("aligned unique words", fontsize=10)
    ax.legend(loc="upper left", fontsize=7, frameon=False)


def _strip(ax: Any, values: list[float], frames: list[float], name: str, n_pages: int) -> None:
    """One book as a strip of bins: shared text green, shared boilerplate orange (one image)."""
    import numpy as np
    from matplotlib.colors import to_rgb

    text, frame = np.asarray(values, float), np.asarray(frames, float)
    use_text = (text >= frame)[:, None]
    share = np.where(use_text[:, 0], text, frame)[:, None]
    colour = np.where(use_text, to_rgb(RUN_COLOUR), to_rgb(FRAME_COLOUR))
    rgb = 1.0 + share * (colour - 1.0)  # blend from white by the share of the bin
    ax.imshow(rgb[None, :, :], aspect="auto", extent=(0, 100, 0, 1), interpolation="nearest")
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
    ax.set_xlim(0, 100)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xticklabels(["start", "25 %", "50 %", "75 %", f"end (p. {n_pages})"], fontsize=7)


def render_explain(e: dict[str, Any], fmt: str = "png") -> bytes:
    """The explain picture of ``query.explain.explain``'s result as PNG or SVG bytes (or any
    of `file_formats`, for a file).

    Left: every aligned unique word at (page in A, page in B): shared text green, shared
    boilerplate orange, chance matches grey, the fitted page line dashed. Right: each book as a
    strip of bins along its unique words, the bins inside shared text coloured (DUPNIQ Fig. 2):
    a volume inside a whole is a block on one strip and a full strip on the other.
    """
    import io

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if fmt not in FORMATS and fmt not in file_formats():
        raise ValueError(f"format must be png or svg, not {fmt!r}")
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "bookdup"}):
        fig = Figure(figsize=(11, 5.2), dpi=100)
        FigureCanvasAgg(fig)
        grid = fig.add_gridspec(4, 2, width_ratios=[1, 1.25], hspace=1.2, wspace=0.35)
        _dot_plot(fig.add_subplot(grid[:, 0]), e)
        al = e["alignment"]
        na, nb = e["a"].get("n_pages") or 0, e["b"].get("n_pages") or 0
        _strip(fig.add_subplot(grid[1, 1]), al["a_bars"], al["a_boilerplate_bars"], "A", na)
        _strip(fig.add_subplot(grid[2, 1]), al["b_bars"], al["b_boilerplate_bars"], "B", nb)
        title = explain_title(e)
        top = 0.82 - 0.04 * max(0, title.count("\n") - 2)
        fig.text(0.56, top - 0.02, "each book along its unique words, in reading order", fontsize=9)
        fig.text(0.56, 0.2, "green: text found in the other book", fontsize=8, color=RUN_COLOUR)
        fig.text(0.56, 0.15, "orange: shared boilerplate", fontsize=8, color=FRAME_COLOUR)
        fig.suptitle(title, fontsize=10)
        fig.subplots_adjust(left=0.07, right=0.97, top=top, bottom=0.11)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
    return buf.getvalue()
