"""`generate_corpus`: works, their editions, volumes, anthologies and translations, on disk.

Each work is fresh prose from a language's word model. Its books are made by the operations the
papers' relation classes describe: re-pagination (another line width and page height), OCR
character noise, added preface / footnotes / end notes, volume splits, anthologies holding parts
of several works, and dictionary translations. What every book contains is recorded as work
segments, from which `truth.ground_truth` derives each related pair's class and direction.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from generator.formats import FORMATS, write_alto, write_hocr, write_jsonl_record, write_txt
from generator.noise import add_noise
from generator.render import Layout, paginate, render_lines
from generator.translate import (
    STYLES,
    TRANSLATION_PAIRS,
    Lexicon,
    TranslationContext,
    TranslationStyle,
    translate_prose,
    untranslated_word_map,
    word_options,
)
from generator.truth import BookRecord, Segment, ground_truth
from generator.wordmodel import Prose, WordModel, load_wordmodel

HEADINGS = {
    "en": ("Preface", "Notes"),
    "de": ("Vorwort", "Anmerkungen"),
    "fr": ("Préface", "Notes"),
    "es": ("Prólogo", "Notas"),
    "it": ("Prefazione", "Note"),
}
_ANTHOLOGY_BUFFER = 6  # recent works per language an anthology may draw from (bounds memory)


@dataclass(frozen=True)
class GeneratorConfig:
    """Every knob of the generator; the same config and seed give the same corpus."""

    seed: int = 0
    n_books: int = 100
    languages: tuple[str, ...] = ("en", "de", "fr", "es")
    words_min: int = 3000
    words_max: int = 20000
    line_width: tuple[int, int] = (55, 80)
    lines_per_page: tuple[int, int] = (25, 45)
    noise: tuple[float, float] = (0.0, 0.02)  # per-book character error rate drawn uniformly
    clean_fraction: float = 0.3  # books with no noise at all
    edition_fraction: float = 0.4  # works with 1-3 further editions (reprints, copies, new)
    volume_fraction: float = 0.15  # works split into a 2-3 volume set
    translation_fraction: float = 0.3  # works translated (into 1-2 languages)
    partial_translation_fraction: float = 0.25  # translations of a contiguous part only
    anthology_fraction: float = 0.03  # share of books that are anthologies
    # works with an abridged edition: whole paragraphs cut throughout, 35-65 % of the text
    # kept (ABRIDGED); 0 draws nothing, so corpora of earlier configs stay as they were
    abridged_fraction: float = 0.0
    # translated works translated again into one of the same languages by another
    # translator, always in the realistic style (two faithful word-by-word translations would
    # be one text twice): SAME_WORK between the two translations and their derived books
    retranslation_fraction: float = 0.0
    formats: tuple[tuple[str, float], ...] = (
        ("txt", 0.88),
        ("jsonl", 0.04),
        ("alto", 0.04),
        ("hocr", 0.04),
    )
    bigram_weight: float = 0.7
    swap_prob: float = 0.1  # adjacent words swapped in a translation (every style)
    # "faithful": word by word through the lexicon the detector uses (flattering); "realistic":
    # also synonyms, paraphrase, dropped / added words, sentence reordering and transliterated
    # names, calibrated on real translations (generator.translate.TranslationStyle)
    translation_style: str = "faithful"
    # (parameter, value) pairs overriding the style's rates, e.g. (("drop", 0.1),)
    translation_overrides: tuple[tuple[str, float], ...] = ()
    jsonl_batch: int = 1000  # books per JSONL file
    books_dir: str = "books"  # folder under the output folder that holds the books


@dataclass
class CorpusSummary:
    """What was generated and how fast."""

    n_books: int
    n_works: int
    n_words: int
    books_by_kind: dict[str, int]
    pairs_by_relation: dict[str, int]
    seconds: float
    books_per_s: float


@dataclass
class _Edition:
    """A full-text printing of a work that reprints, copies and volumes derive from."""

    record: BookRecord
    clean: list[str]
    pages: list[str]
    layout: Layout


@dataclass
class _Work:
    id: str
    language: str
    prose: Prose
    title: str
    author: str
    year: int
    editions: list[_Edition] = field(default_factory=list)


def translation_style(config: GeneratorConfig) -> TranslationStyle:
    """The config's translation style: its named style, ``swap_prob`` and overrides applied."""
    if config.translation_style not in STYLES:
        raise ValueError(
            f"unknown translation style {config.translation_style!r} (one of {sorted(STYLES)})"
        )
    style = STYLES[config.translation_style].with_overrides({"swap": config.swap_prob})
    return style.with_overrides(config.translation_overrides)


def _share_of(n: int, share: tuple[float, float], least: int, rng: np.random.Generator) -> int:
    """A length drawn as a share of ``n`` words, at least ``least``."""
    return max(least, int(n * rng.uniform(*share)))


def _paragraph_cut(prose: Prose, target: int) -> int:
    """The paragraph start nearest to ``target`` (volumes and excerpts end at paragraphs)."""
    starts = prose.paragraph_starts()
    return int(starts[np.abs(starts - target).argmin()])


def _heading(text: str) -> Prose:
    words = np.array(text.split(), dtype=object)
    para_end = np.zeros(len(words), dtype=bool)
    para_end[-1:] = True
    return Prose(words, np.zeros(len(words), dtype=np.uint8), para_end)


class _Generator:
    def __init__(self, config: GeneratorConfig, out_dir: Path) -> None:
        self.cfg = config
        self.rng = np.random.default_rng(config.seed)
        self.out = out_dir
        self.records: list[BookRecord] = []
        self.models = {lang: load_wordmodel(lang) for lang in config.languages}
        self.formats = [f for f, _ in config.formats]
        unknown = set(self.formats) - set(FORMATS)
        if unknown:
            raise ValueError(f"unknown formats: {sorted(unknown)}")
        w = np.array([p for _, p in config.formats], dtype=float)
        self.format_p = w / w.sum()
        self.lexicons: dict[tuple[str, str], tuple[Lexicon, dict[str, str], dict[str, Any]]] = {}
        self.contexts: dict[tuple[str, str], TranslationContext] = {}
        self.style = translation_style(config)
        self.pairs = self._translation_pairs()
        self.buffers: dict[str, deque[_Work]] = {
            lang: deque(maxlen=_ANTHOLOGY_BUFFER) for lang in config.languages
        }
        self.n_works = 0
        self.n_anthologies = 0
        self.n_renderings = 0
        self.n_extras = 0
        self.jsonl: IO[str] | None = None
        self.jsonl_count = 0

    def _translation_pairs(self) -> list[tuple[str, str]]:
        if self.cfg.translation_fraction <= 0:
            return []
        from readers.dictionaries import available_pairs

        installed = set(available_pairs())
        langs = set(self.cfg.languages)
        wanted = [p for p in TRANSLATION_PAIRS if set(p) <= langs]
        missing = [f"{a}-{b}" for a, b in wanted if (a, b) not in installed]
        if missing:  # a seed's corpus is the same on every machine, or it is not made
            raise RuntimeError(
                f"no FreeDict lexicon for {', '.join(missing)}: the corpus would lack those "
                "translations; run `make dictionaries` first"
            )
        return wanted

    def lexicon(self, source: str, target: str) -> tuple[Lexicon, dict[str, str], dict[str, Any]]:
        """Dictionary, untranslated-word map and translation cache of one direction, loaded once."""
        if (source, target) not in self.lexicons:
            from readers.dictionaries import load_dictionary

            self.lexicons[source, target] = (
                load_dictionary(source, target),
                untranslated_word_map(self.models[source], self.models[target]),
                {},
            )
        return self.lexicons[source, target]

    def context(self, source: str, target: str) -> TranslationContext:
        """What a realistic translation of one direction needs (names, ranks), built once."""
        if (source, target) not in self.contexts:
            from generator.wordmodel import available_languages

            others = [load_wordmodel(lang) for lang in available_languages() if lang != source]
            self.contexts[source, target] = TranslationContext.build(
                self.models[source], self.models[target], self.lexicon(source, target)[0], others
            )
        return self.contexts[source, target]

    # -- random choices ---------------------------------------------------------------------

    def layout(self) -> Layout:
        (w0, w1), (l0, l1) = self.cfg.line_width, self.cfg.lines_per_page
        return Layout(int(self.rng.integers(w0, w1 + 1)), int(self.rng.integers(l0, l1 + 1)))

    def noise_rate(self) -> float:
        lo, hi = self.cfg.noise
        if hi <= 0 or self.rng.random() < self.cfg.clean_fraction:
            return 0.0
        return float(self.rng.uniform(lo, hi))

    def new_rendering(self) -> int:
        self.n_renderings += 1
        return self.n_renderings

    # -- composition and output -------------------------------------------------------------

    def compose(
        self,
        model: WordModel,
        body: Prose,
        layout: Layout,
        title_page: list[str],
        extras: list[str],
    ) -> list[str]:
        """Title page, then preface, body (with footnotes), end notes, as clean pages."""
        lines = render_lines(body, layout.width)
        preface, notes = HEADINGS.get(model.language, HEADINGS["en"])
        if "footnotes" in extras:
            k = max(1, len(lines) // 150)
            at = np.sort(self.rng.choice(len(lines), size=min(k, len(lines)), replace=False))
            for j, i in enumerate(at[::-1].tolist()):
                note = render_lines(model.words(self.rng, int(self.rng.integers(12, 40))), 60)
                lines[i + 1 : i + 1] = ["", f"{k - j}) " + note[0], *note[1:], ""]
        # Added matter in proportion to the book, as in real editions (a preface of a few pages
        # in a novel); a fixed 300–1,500-word preface was most of a 2,000-word test book and made
        # such an edition look like a container of the other.
        if "preface" in extras:
            text = model.words(self.rng, _share_of(len(body), (0.02, 0.10), 80, self.rng))
            lines = [preface.upper(), "", *render_lines(text, layout.width), "", "", *lines]
        if "notes" in extras:
            text = model.words(self.rng, _share_of(len(body), (0.02, 0.08), 60, self.rng))
            lines += ["", "", notes.upper(), "", *render_lines(text, layout.width)]
        return ["\n".join(title_page), *paginate(lines, layout.lines_per_page, first_number=2)]

    def write(self, record: BookRecord, pages: list[str]) -> None:
        fmt = self.formats[int(self.rng.choice(len(self.formats), p=self.format_p))]
        meta = {
            "id": record.id,
            "title": record.title,
            "author": record.author,
            "language": record.language,
            "year": record.year,
        }
        record.format, record.n_pages = fmt, len(pages)
        if fmt == "jsonl":
            if self.jsonl is None or self.jsonl_count % self.cfg.jsonl_batch == 0:
                if self.jsonl is not None:
                    self.jsonl.close()
                path = (
                    self.out
                    / self.cfg.books_dir
                    / "jsonl"
                    / f"part-{self.jsonl_count // self.cfg.jsonl_batch:04d}.jsonl"
                )
                path.parent.mkdir(parents=True, exist_ok=True)
                self.jsonl = path.open("w", encoding="utf-8")
                self.jsonl_path = path
            write_jsonl_record(self.jsonl, meta, pages)
            self.jsonl_count += 1
            record.file = str(self.jsonl_path.relative_to(self.out))
        else:
            folder = self.out / self.cfg.books_dir / f"{(len(self.records) - 1) // 1000:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            ext = {"txt": ".txt", "alto": ".xml", "hocr": ".hocr"}[fmt]
            path = folder / f"{record.id}{ext}"
            {"txt": write_txt, "alto": write_alto, "hocr": write_hocr}[fmt](path, meta, pages)
            record.file = str(path.relative_to(self.out))

    def emit(self, record: BookRecord, pages: list[str]) -> None:
        self.records.append(record)
        self.write(record, pages)

    def new_id(self) -> str:
        return f"b{len(self.records) + 1:06d}"

    # -- works and their books --------------------------------------------------------------

    def work(self, room: int) -> None:
        """A new work and up to ``room`` books of it."""
        rng, cfg = self.rng, self.cfg
        lang = str(rng.choice(cfg.languages))
        model = self.models[lang]
        self.n_works += 1
        prose = model.words(rng, int(rng.integers(cfg.words_min, cfg.words_max + 1)))
        w = _Work(
            id=f"w{self.n_works:05d}",
            language=lang,
            prose=prose,
            title=model.phrase(rng, int(rng.integers(2, 5))),
            author=model.phrase(rng, 2),
            year=int(rng.integers(1780, 1930)),
        )
        budget = [room]

        def take() -> bool:
            budget[0] -= 1
            return budget[0] >= 0

        take()
        self.edition(w, self.layout(), [], w.year, "original")
        if rng.random() < cfg.edition_fraction:
            for _ in range(int(rng.integers(1, 4))):
                if not take():
                    break
                r = rng.random()
                if r < 0.15:
                    self.copy(w, w.editions[int(rng.integers(len(w.editions)))])
                elif r < 0.35:
                    self.reprint(w, w.editions[int(rng.integers(len(w.editions)))])
                else:
                    extras = [
                        e
                        for e, p in (("preface", 0.4), ("footnotes", 0.3), ("notes", 0.3))
                        if rng.random() < p
                    ]
                    self.edition(
                        w, self.layout(), extras, w.year + int(rng.integers(1, 80)), "edition"
                    )
        if cfg.abridged_fraction and rng.random() < cfg.abridged_fraction and take():
            self.abridged(w)
        if rng.random() < cfg.volume_fraction and budget[0] >= 2:
            n_vol = min(int(rng.integers(2, 4)), budget[0])
            budget[0] -= n_vol
            self.volumes(w, w.editions[int(rng.integers(len(w.editions)))], n_vol)
        targets = [t for s, t in self.pairs if s == lang]
        if targets and rng.random() < cfg.translation_fraction:
            rng.shuffle(targets)
            chosen = targets[: int(rng.integers(1, 3))]
            for target in chosen:
                if not take():
                    break
                self.translation(w, target)
            again = cfg.retranslation_fraction and rng.random() < cfg.retranslation_fraction
            if again and take():
                self.translation(w, str(rng.choice(chosen)), STYLES["realistic"])
        self.buffers[lang].append(w)

    def title_page(self, title: str, author: str, year: int) -> list[str]:
        return [title.upper(), "", "", author, "", "", str(year)]

    def edition(self, w: _Work, layout: Layout, extras: list[str], year: int, kind: str) -> None:
        model = self.models[w.language]
        clean = self.compose(
            model, w.prose, layout, self.title_page(w.title, w.author, year), extras
        )
        self.n_extras += 1
        rec = BookRecord(
            id=self.new_id(),
            work=w.id,
            language=w.language,
            kind=kind,
            segments=(Segment(w.id, 0, len(w.prose)),),
            # end notes leave the body's page breaks alone; a preface or footnotes shift them
            pagination=(layout, self.n_extras if {"preface", "footnotes"} & set(extras) else 0),
            rendering=self.new_rendering(),
            noise=self.noise_rate(),
            of=w.editions[0].record.id if w.editions else None,
            title=w.title,
            author=w.author,
            year=year,
            extras=extras,
        )
        pages = add_noise(clean, rec.noise, self.rng)
        w.editions.append(_Edition(rec, clean, pages, layout))
        self.emit(rec, pages)

    def reprint(self, w: _Work, base: _Edition) -> None:
        """Same page breaks, another scan: fresh noise over the same clean pages."""
        b = base.record
        rec = BookRecord(
            id=self.new_id(),
            work=w.id,
            language=w.language,
            kind="reprint",
            segments=b.segments,
            pagination=b.pagination,
            rendering=self.new_rendering(),
            noise=self.noise_rate(),
            of=b.id,
            title=b.title,
            author=b.author,
            year=b.year,
            extras=b.extras,
        )
        self.emit(rec, add_noise(base.clean, rec.noise, self.rng))

    def copy(self, w: _Work, base: _Edition) -> None:
        """The very same page texts again (often in another format): an exact duplicate."""
        b = base.record
        rec = BookRecord(
            id=self.new_id(),
            work=w.id,
            language=w.language,
            kind="copy",
            segments=b.segments,
            pagination=b.pagination,
            rendering=b.rendering,
            noise=b.noise,
            of=b.id,
            title=b.title,
            author=b.author,
            year=b.year,
            extras=b.extras,
        )
        self.emit(rec, base.pages)

    def volumes(self, w: _Work, base: _Edition, n_vol: int) -> None:
        """Split a printing into volumes cut at paragraph starts: disjoint contiguous parts."""
        n = len(w.prose)
        cuts = sorted({0, n, *(_paragraph_cut(w.prose, n * k // n_vol) for k in range(1, n_vol))})
        model = self.models[w.language]
        b = base.record
        for k, (s, e) in enumerate(zip(cuts[:-1], cuts[1:], strict=True), 1):
            title = f"{b.title} {k}"
            clean = self.compose(
                model,
                w.prose.slice(s, e),
                base.layout,
                self.title_page(title, b.author, b.year),
                [],
            )
            rec = BookRecord(
                id=self.new_id(),
                work=w.id,
                language=w.language,
                kind="volume",
                segments=(Segment(w.id, s, e),),
                pagination=(base.layout, "volume", s),
                rendering=self.new_rendering(),
                noise=self.noise_rate(),
                of=b.id,
                title=title,
                author=b.author,
                year=b.year,
            )
            self.emit(rec, add_noise(clean, rec.noise, self.rng))

    def abridged(self, w: _Work) -> None:
        """The work cut throughout: whole paragraphs dropped, 35-65 % of the words kept."""
        rng, n = self.rng, len(w.prose)
        starts = w.prose.paragraph_starts()
        ends = np.concatenate([starts[1:], [n]])
        keep = rng.random(starts.size) < rng.uniform(0.35, 0.65)
        keep[0] = True  # an abridgement opens as the work does
        runs: list[list[int]] = []
        for s, e, k in zip(starts.tolist(), ends.tolist(), keep.tolist(), strict=True):
            if not k:
                continue
            if runs and runs[-1][1] == s:
                runs[-1][1] = e
            else:
                runs.append([s, e])
        year = w.year + int(rng.integers(20, 120))
        clean = self.compose(
            self.models[w.language],
            Prose.concat([w.prose.slice(s, e) for s, e in runs]),
            self.layout(),
            self.title_page(w.title, w.author, year),
            [],
        )
        rec = BookRecord(
            id=self.new_id(),
            work=w.id,
            language=w.language,
            kind="abridged",
            segments=tuple(Segment(w.id, s, e) for s, e in runs),
            pagination=("abridged", self.new_rendering()),
            rendering=self.new_rendering(),
            noise=self.noise_rate(),
            of=w.editions[0].record.id,
            title=w.title,
            author=w.author,
            year=year,
        )
        self.emit(rec, add_noise(clean, rec.noise, self.rng))

    def translation(self, w: _Work, target: str, style: TranslationStyle | None = None) -> None:
        """Word-by-word translation of the whole work or of a contiguous part of it, in the
        corpus's style or the given one (a retranslation: another translator's text)."""
        rng, n = self.rng, len(w.prose)
        s, e = 0, n
        if rng.random() < self.cfg.partial_translation_fraction:
            length = int(n * rng.uniform(0.3, 0.7))
            s = _paragraph_cut(w.prose, int(rng.integers(0, n - length + 1)))
            e = max(_paragraph_cut(w.prose, s + length), s + 1)
            if e <= s + 1:
                e = n
        lexicon, untranslated, cache = self.lexicon(w.language, target)
        style = style or self.style
        faithful = style == STYLES["faithful"].with_overrides({"swap": style.swap})
        body = translate_prose(
            w.prose.slice(s, e),
            lexicon,
            rng,
            untranslated,
            self.cfg.swap_prob,
            cache,
            style=None if faithful else style,
            context=None if faithful else self.context(w.language, target),
        )
        title = " ".join(word_options(t, lexicon, untranslated)[0] for t in w.title.split())
        title = title.title()
        year = w.year + int(rng.integers(1, 100))
        layout = self.layout()
        clean = self.compose(
            self.models[target], body, layout, self.title_page(title, w.author, year), []
        )
        rec = BookRecord(
            id=self.new_id(),
            work=w.id,
            language=target,
            kind="translation",
            segments=(Segment(w.id, s, e),),
            pagination=(layout, "translation"),
            text=f"{w.id}:{target}:{len(self.records)}",
            rendering=self.new_rendering(),
            noise=self.noise_rate(),
            of=w.editions[0].record.id,
            title=title,
            author=w.author,
            year=year,
        )
        self.emit(rec, add_noise(clean, rec.noise, self.rng))

    def anthology(self, lang: str) -> None:
        """Contiguous parts (15-50 % each) of 2-4 recent works of one language, in a row."""
        rng = self.rng
        buf = list(self.buffers[lang])
        k = int(rng.integers(2, min(4, len(buf)) + 1))
        chosen = [buf[i] for i in sorted(rng.choice(len(buf), size=k, replace=False))]
        parts: list[Prose] = []
        segments = []
        for w in chosen:
            n = len(w.prose)
            length = int(n * rng.uniform(0.15, 0.5))
            s = _paragraph_cut(w.prose, int(rng.integers(0, n - length + 1)))
            starts = w.prose.paragraph_starts()
            later = starts[starts >= s + max(length, int(np.ceil(0.15 * n)))]
            e = int(later[0]) if len(later) else n
            parts += [_heading(w.title), w.prose.slice(s, e)]
            segments.append(Segment(w.id, s, e))
        self.n_anthologies += 1
        model = self.models[lang]
        title, author = model.phrase(rng, 3), model.phrase(rng, 2)
        year = int(rng.integers(1850, 1990))
        layout = self.layout()
        clean = self.compose(
            model, Prose.concat(parts), layout, self.title_page(title, author, year), []
        )
        rec = BookRecord(
            id=self.new_id(),
            work=f"a{self.n_anthologies:05d}",
            language=lang,
            kind="anthology",
            segments=tuple(segments),
            pagination=(layout, "anthology"),
            rendering=self.new_rendering(),
            noise=self.noise_rate(),
            title=title,
            author=author,
            year=year,
        )
        self.emit(rec, add_noise(clean, rec.noise, self.rng))

    def run(self) -> None:
        cfg, rng = self.cfg, self.rng
        n_anth = round(cfg.anthology_fraction * cfg.n_books)
        while len(self.records) < cfg.n_books:
            eligible = [lang for lang, buf in self.buffers.items() if len(buf) >= 2]
            due = self.n_anthologies < n_anth * (len(self.records) + 1) / cfg.n_books
            if due and eligible:
                self.anthology(str(rng.choice(eligible)))
                continue
            pending = n_anth - self.n_anthologies
            self.work(max(1, cfg.n_books - len(self.records) - pending))
        if self.jsonl is not None:
            self.jsonl.close()


#: What a corpus folder holds besides its books folder.
_CORPUS_FILES = ("books.jsonl", "ground_truth.jsonl", "corpus.json")


def clear_previous(out: Path, books_dir: str) -> None:
    """Remove a corpus generated earlier into ``out``; refuse to write into books that are not.

    Books are written per format (``b000017.txt`` one time, ``b000017.hocr`` another), so a
    corpus generated over an older one kept the older one's files beside the new ones: the
    same ids twice, and a reader of the folder took whichever came last. A folder this
    generator wrote has ``corpus.json``; anything else already in the books folder is the
    user's and stays.
    """
    books = out / books_dir
    if not books.exists() or not any(books.iterdir()):
        return
    if not (out / "corpus.json").is_file():
        raise ValueError(
            f"{books} already holds files and {out} is not a generated corpus (no corpus.json): "
            "choose an empty or new folder"
        )
    shutil.rmtree(books)
    for name in _CORPUS_FILES:
        (out / name).unlink(missing_ok=True)


def write_records(out: Path, records: list[BookRecord]) -> list[dict[str, Any]]:
    """Write ``books.jsonl`` (what each book is) and ``ground_truth.jsonl`` (every related
    pair) under ``out``; return the ground truth."""
    truth = ground_truth(records)
    with (out / "books.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
    with (out / "ground_truth.jsonl").open("w", encoding="utf-8") as fh:
        for line in truth:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return truth


def generate_corpus(config: GeneratorConfig, out_dir: Path | str) -> CorpusSummary:
    """Write the corpus under ``out_dir``: ``books/`` (the books; ``config.books_dir``),
    ``books.jsonl`` (what each book is), ``ground_truth.jsonl`` (every related pair) and
    ``corpus.json`` (config and summary). A corpus generated there before is replaced."""
    out = Path(out_dir)
    clear_previous(out, config.books_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    gen = _Generator(config, out)
    gen.run()
    truth = write_records(out, gen.records)
    seconds = time.perf_counter() - t0
    summary = CorpusSummary(
        n_books=len(gen.records),
        n_works=gen.n_works,
        n_words=sum(r.n_words for r in gen.records),
        books_by_kind=dict(Counter(r.kind for r in gen.records)),
        pairs_by_relation=dict(Counter(p["relation"] for p in truth)),
        seconds=round(seconds, 3),
        books_per_s=round(len(gen.records) / seconds, 1) if seconds > 0 else 0.0,
    )
    (out / "corpus.json").write_text(
        json.dumps({"config": asdict(config), "summary": asdict(summary)}, indent=2) + "\n",
        encoding="utf-8",
    )
    return summary
