"""Variants of real books with truth by construction: the held-out set for the relation classes.

Each chosen real book (one per work of ``manifest.jsonl``, Project Gutenberg header and footer
removed) is typeset into the variants a library holds of one text: a clean edition, rescans of
the same pages at OCR noise, re-paginations, a first-half and a middle volume, an abridgement,
and anthologies taking parts of two or three works. One work gets a *collection* of 20+ such
variants, the shape of a library where one text has dozens of editions. Truth follows from the
token positions each book holds (``generator.truth``), as for generated corpora, and the folder
has the same layout (``books/``, ``books.jsonl``, ``ground_truth.jsonl``, ``corpus.json``), so
``bookdup eval`` scores it.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from generator.corpus import clear_previous, write_records
from generator.formats import write_txt
from generator.noise import add_noise
from generator.render import Layout, paginate, render_lines
from generator.truth import BookRecord, Segment
from generator.wordmodel import Prose

__all__ = ["VariantConfig", "generate_variants", "real_prose", "strip_gutenberg"]

_START = re.compile(
    r"^\s*\*+\s*START OF (THE|THIS) PROJECT GUTENBERG.*$|^\*END\*THE SMALL PRINT.*$",
    re.IGNORECASE | re.MULTILINE,
)
_END = re.compile(
    r"^\s*\*+\s*END OF (THE|THIS) PROJECT GUTENBERG.*$|^\s*End of (the )?Project Gutenberg.*$",
    re.IGNORECASE | re.MULTILINE,
)

#: Printings: (line width, lines per page), as two publishers set the same text.
LAYOUTS = {"A": Layout(70, 35), "B": Layout(58, 44), "C": Layout(80, 30), "D": Layout(64, 38)}
#: OCR noise levels of the rescans (the generator's character edit model).
RESCAN_NOISE = (0.02, 0.05, 0.10)
#: Noise drawn for the other variants: clean or one of the rescan levels.
NOISE_LEVELS = (0.0, *RESCAN_NOISE)


@dataclass(frozen=True)
class VariantConfig:
    """Which real books, how long, and the seed of every cut and noise draw."""

    source: Path
    works: int | None = None  # how many works get variants (None: every work but the collection's)
    max_words: int = 80_000  # longer texts are cut at a paragraph (the variants stay book-sized)
    collection_work: str = "divine-comedy"  # the work with 20+ variants (a manifest ``work``)
    collection_variants: int = 24
    seed: int = 29
    #: noise levels the non-rescan variants draw from; (0.10,) puts both books of most pairs
    #: under 10 % noise, as in a generated set at 10 %
    noise_levels: tuple[float, ...] = NOISE_LEVELS
    books_dir: str = "books"
    #: pairs of real book ids known to share text (the folder's own truth): a book related to
    #: one already chosen is skipped, so that works stay disjoint (The Sketch Book holds The
    #: Legend of Sleepy Hollow)
    related: frozenset[tuple[str, str]] = frozenset()


@dataclass
class _Base:
    """One real text, its work's slug and its metadata."""

    work: str
    prose: Prose
    meta: dict[str, Any] = field(default_factory=dict)


def strip_gutenberg(text: str) -> str:
    """The book's own text without the Project Gutenberg header and footer.

    Old-style headers end at ``*END*THE SMALL PRINT``, new ones at ``*** START OF THE PROJECT
    GUTENBERG EBOOK``; when a marker is missing the text is kept from the top / to the end.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    starts = list(_START.finditer(text))
    begin = starts[-1].end() if starts else 0
    end_match = _END.search(text, begin)
    end = end_match.start() if end_match else len(text)
    return text[begin:end].strip("\n")


def real_prose(text: str, max_words: int | None = None) -> Prose:
    """A real text as `Prose`: whitespace tokens (punctuation kept on them), paragraphs at
    blank lines; cut at the last paragraph end within ``max_words``."""
    words: list[str] = []
    ends: list[int] = []
    for para in re.split(r"\n\s*\n", text):
        tokens = para.split()
        if not tokens:
            continue
        if max_words is not None and words and len(words) + len(tokens) > max_words:
            break
        words.extend(tokens)
        ends.append(len(words) - 1)
    para_end = np.zeros(len(words), dtype=bool)
    para_end[ends] = True
    return Prose(np.array(words, dtype=object), np.zeros(len(words), np.uint8), para_end)


def _cut(prose: Prose, share: float) -> int:
    """The first paragraph start at or after ``share`` of the text."""
    starts = prose.paragraph_starts()
    i = int(np.searchsorted(starts, int(share * len(prose))))
    return int(starts[i]) if i < starts.size else len(prose)


class _Writer:
    """Typesets, adds noise, writes each book and keeps its truth record."""

    def __init__(self, config: VariantConfig, out: Path) -> None:
        self.cfg = config
        self.out = out
        self.rng = np.random.default_rng(config.seed)
        self.records: list[BookRecord] = []
        self._renderings = 0

    def noise(self) -> float:
        return float(self.rng.choice(self.cfg.noise_levels))

    def pages(self, parts: list[Prose], layout: Layout, title: str, year: int) -> list[str]:
        """A title page, then the text set in ``layout`` (clean)."""
        lines = render_lines(Prose.concat(parts), layout.width)
        return [f"{title}\n\n{year}", *paginate(lines, layout.lines_per_page, first_number=2)]

    def emit(
        self,
        book_id: str,
        base: _Base,
        kind: str,
        segments: tuple[Segment, ...],
        pagination: tuple[Any, ...],
        clean: list[str],
        noise: float,
        *,
        title: str,
        year: int,
        work: str | None = None,
        of: str | None = None,
    ) -> None:
        self._renderings += 1
        rec = BookRecord(
            id=book_id,
            work=work or base.work,
            language=base.meta.get("language", "en"),
            kind=kind,
            segments=segments,
            pagination=pagination,
            rendering=self._renderings,
            noise=noise,
            of=of,
            title=title,
            author=base.meta.get("author", ""),
            year=year,
            n_pages=len(clean),
        )
        folder = self.out / self.cfg.books_dir
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{book_id}.txt"
        meta = {"id": book_id, "title": title, "author": rec.author, "language": rec.language}
        write_txt(path, {**meta, "year": year}, add_noise(clean, noise, self.rng))
        rec.file = str(path.relative_to(self.out))
        self.records.append(rec)

    def printing(
        self,
        base: _Base,
        book_id: str,
        layout: str,
        span: tuple[float, float] = (0.0, 1.0),
        noise: float = 0.0,
        kind: str = "edition",
    ) -> None:
        """The text (or the part ``span`` of it, cut at paragraphs) set in one layout."""
        p = base.prose
        s, e = (
            (0 if span[0] == 0 else _cut(p, span[0])),
            (len(p) if span[1] == 1 else _cut(p, span[1])),
        )
        title = base.meta.get("title", base.work)
        if (s, e) != (0, len(p)):
            title = f"{title} ({kind} {round(100 * span[0])}-{round(100 * span[1])} %)"
        year = 1850 + int(self.rng.integers(0, 150))
        clean = self.pages([p.slice(s, e)], LAYOUTS[layout], title, year)
        seg = (Segment(base.work, s, e),)
        self.emit(book_id, base, kind, seg, (layout, s, e), clean, noise, title=title, year=year)

    def rescans(self, base: _Base, prefix: str, layout: str, levels: tuple[float, ...]) -> None:
        """The same pages as ``printing(base, ..., layout)`` scanned again at each noise level:
        one rendering (title page and year included), so only the noise differs."""
        p = base.prose
        title, year = base.meta.get("title", base.work), 1850 + int(self.rng.integers(0, 150))
        clean = self.pages([p], LAYOUTS[layout], title, year)
        seg = (Segment(base.work, 0, len(p)),)
        for rate in levels:
            book_id = f"{prefix}-{layout.lower()}-scan{round(100 * rate):02d}"
            self.emit(book_id, base, "reprint", seg, (layout, 0, len(p)), clean, rate,
                      title=title, year=year)  # fmt: skip

    def abridged(self, base: _Base, book_id: str, layout: str, noise: float) -> None:
        """Whole paragraphs dropped throughout, about half the words kept."""
        p = base.prose
        starts = p.paragraph_starts()
        ends = np.concatenate([starts[1:], [len(p)]])
        keep = self.rng.random(starts.size) < 0.5
        keep[0] = True
        runs: list[list[int]] = []
        for s, e, k in zip(starts.tolist(), ends.tolist(), keep.tolist(), strict=True):
            if k and runs and runs[-1][1] == s:
                runs[-1][1] = e
            elif k:
                runs.append([s, e])
        title = f"{base.meta.get('title', base.work)} (abridged)"
        year = 1850 + int(self.rng.integers(0, 150))
        clean = self.pages([p.slice(s, e) for s, e in runs], LAYOUTS[layout], title, year)
        segs = tuple(Segment(base.work, s, e) for s, e in runs)
        self.emit(book_id, base, "abridged", segs, ("abridged", book_id), clean, noise,
                  title=title, year=year)  # fmt: skip

    def anthology(self, book_id: str, parts: list[tuple[_Base, float, float]]) -> None:
        """Parts of two or three works in one book."""
        prose, segs = [], []
        for base, a, b in parts:
            s, e = _cut(base.prose, a), _cut(base.prose, b)
            prose.append(base.prose.slice(s, e))
            segs.append(Segment(base.work, s, e))
        first = parts[0][0]
        title = "Selections: " + "; ".join(b.meta.get("title", b.work) for b, _, _ in parts)
        year = 1900 + int(self.rng.integers(0, 100))
        clean = self.pages(prose, LAYOUTS["A"], title, year)
        self.emit(book_id, first, "anthology", tuple(segs), ("anthology", book_id), clean,
                  self.noise(), title=title, year=year, work=book_id)  # fmt: skip


def _work_variants(w: _Writer, base: _Base, prefix: str) -> None:
    """The everyday variants of one work (8 books)."""
    w.printing(base, f"{prefix}-edition", "A")
    w.rescans(base, prefix, "A", RESCAN_NOISE)
    w.printing(base, f"{prefix}-repaged", "B", noise=w.noise())
    w.printing(base, f"{prefix}-vol1", "A", (0.0, 0.5), w.noise(), kind="volume")
    w.printing(base, f"{prefix}-volmid", "C", (0.3, 0.65), w.noise(), kind="volume")
    w.abridged(base, f"{prefix}-abridged", "B", w.noise())


def _collection_variants(w: _Writer, base: _Base, prefix: str, n: int) -> None:
    """One work with ``n`` variants: rescans of several printings, re-paginations, volume sets
    (disjoint volumes of one set are unrelated), middle volumes and abridgements."""
    recipes: list[tuple[str, Any]] = []
    for layout in "ABCD":
        recipes.append(("print", (layout, (0.0, 1.0), 0.0, "edition")))
        recipes.append(("scans", (layout, RESCAN_NOISE)))
    for layout, cuts in (("A", (0.0, 0.5, 1.0)), ("B", (0.0, 0.34, 0.67, 1.0))):
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            recipes.append(("print", (layout, (a, b), w.noise(), "volume")))
    recipes.append(("print", ("C", (0.2, 0.6), w.noise(), "volume")))
    recipes.append(("abridged", ("D",)))
    recipes.append(("abridged", ("A",)))
    made = 0
    for k, (what, args) in enumerate(recipes):
        if made >= n:
            break
        if what == "print":
            layout, span, noise, kind = args
            w.printing(base, f"{prefix}-{k:02d}-{kind}", layout, span, noise, kind)
            made += 1
        elif what == "scans":
            layout, levels = args
            levels = levels[: n - made]
            w.rescans(base, f"{prefix}-{k:02d}", layout, levels)
            made += len(levels)
        else:
            w.abridged(base, f"{prefix}-{k:02d}-abridged", args[0], w.noise())
            made += 1


def _anthologies(w: _Writer, bases: list[_Base]) -> None:
    """Parts of two works of one language per anthology (every third: three works)."""
    by_language: dict[str, list[_Base]] = defaultdict(list)
    for base in bases:
        by_language[base.meta.get("language", "en")].append(base)
    k = 0
    for group in by_language.values():
        for i in range(0, len(group) - 1, 2):
            parts = [(group[i], 0.0, 0.4), (group[i + 1], 0.5, 0.9)]
            if k % 3 == 0 and i + 2 < len(group):
                parts.append((group[i + 2], 0.2, 0.45))
            w.anthology(f"anth{k:02d}", parts)
            k += 1


def _bases(config: VariantConfig) -> tuple[list[_Base], _Base | None]:
    """One real text per work of the manifest (the first listed), in manifest order, and the
    collection work's text apart."""
    seen: set[str] = set()
    chosen: list[str] = []
    bases: list[_Base] = []
    collection: _Base | None = None
    manifest = config.source / "manifest.jsonl"
    for line in manifest.read_text(encoding="utf-8").splitlines():
        meta = json.loads(line)
        work = meta["work"]
        if work in seen or meta.get("scope", "complete") != "complete":
            continue
        if any((meta["id"], c) in config.related or (c, meta["id"]) in config.related
               for c in chosen):  # fmt: skip
            continue
        seen.add(work)
        chosen.append(meta["id"])
        raw = (config.source / meta["file"]).read_text(encoding="utf-8")
        base = _Base(work, real_prose(strip_gutenberg(raw), config.max_words), meta)
        if work == config.collection_work:
            collection = base
        else:
            bases.append(base)
    return bases[: config.works] if config.works is not None else bases, collection


def generate_variants(config: VariantConfig, out_dir: Path | str) -> dict[str, Any]:
    """Write the variant corpus under ``out_dir`` (replacing one written there before) and
    return its summary."""
    out = Path(out_dir)
    clear_previous(out, config.books_dir)
    out.mkdir(parents=True, exist_ok=True)
    bases, collection = _bases(config)
    w = _Writer(config, out)
    for i, base in enumerate(bases):
        _work_variants(w, base, f"w{i:02d}")
    _anthologies(w, bases)
    if collection is not None:
        _collection_variants(w, collection, "coll", config.collection_variants)
    truth = write_records(out, w.records)
    summary = {
        "n_books": len(w.records),
        "n_works": len(bases) + (collection is not None),
        "books_by_kind": dict(Counter(r.kind for r in w.records)),
        "pairs_by_relation": dict(Counter(t["relation"] for t in truth)),
    }
    config_json = {k: str(v) for k, v in asdict(config).items() if k != "related"}
    (out / "corpus.json").write_text(
        json.dumps({"config": config_json, "summary": summary}, indent=2) + "\n", encoding="utf-8"
    )
    return summary
