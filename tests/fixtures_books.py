"""Small corpora with known ground truth, built from real Gutenberg text in a temporary folder.

Every synthetic edition starts from the body of a real book (the Project Gutenberg header and
footer cut off at the ``*** START OF`` / ``*** END OF`` lines) and is written in one of the input
kinds the readers accept: ``.txt`` with form feeds and a ``.json`` sidecar, a folder of page
files, JSONL (pages or whole text), ALTO XML, hOCR and Internet Archive ``_djvu.txt``.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from xml.sax.saxutils import quoteattr

REPO = Path(__file__).resolve().parents[1]
GUTENBERG = (REPO / ".." / "shared" / "data" / "gutenberg").resolve()

ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"


# --- text from real books ------------------------------------------------------------------


def gutenberg_body(book: str) -> list[str]:
    """The lines of a Gutenberg book between its ``*** START OF`` and ``*** END OF`` lines."""
    text = (GUTENBERG / f"{book}.txt").read_text(encoding="utf-8")
    lines = text.replace("\r\n", "\n").split("\n")
    start = next(i for i, line in enumerate(lines) if re.match(r"\*\*\* ?START OF", line))
    end = next(i for i, line in enumerate(lines) if re.match(r"\*\*\* ?END OF", line))
    return lines[start + 1 : end]


def word_slice(lines: Sequence[str], n_words: int, skip_words: int = 0) -> list[str]:
    """Whole lines holding about ``n_words`` words, after skipping ``skip_words`` words."""
    out: list[str] = []
    seen = 0
    for line in lines:
        n = len(line.split())
        if seen >= skip_words:
            out.append(line)
        seen += n
        if seen >= skip_words + n_words:
            break
    return out


def paginate(lines: Sequence[str], lines_per_page: int) -> list[str]:
    """Pages of ``lines_per_page`` lines."""
    return ["\n".join(lines[i : i + lines_per_page]) for i in range(0, len(lines), lines_per_page)]


def add_noise(text: str, rate: float, seed: int) -> str:
    """OCR-like noise: each letter is replaced, deleted or followed by an insert with ``rate``."""
    rng = random.Random(seed)
    out: list[str] = []
    for ch in text:
        if ch.isalpha() and rng.random() < rate:
            op = rng.randrange(3)
            if op == 0:
                out.append(rng.choice(string.ascii_lowercase))
            elif op == 1:
                out.append(ch + rng.choice(string.ascii_lowercase))
            # op == 2: deleted
        else:
            out.append(ch)
    return "".join(out)


# --- writers, one per input kind -----------------------------------------------------------


def _meta(**meta: str | None) -> dict:
    return {k: v for k, v in meta.items() if v is not None}


def write_txt(path: Path, pages: Sequence[str], **meta: str | None) -> Path:
    """``.txt`` with form-feed page breaks and a ``.json`` sidecar holding the metadata."""
    path.write_text("\f".join(pages) + "\f", encoding="utf-8")
    if meta:
        path.with_suffix(".json").write_text(json.dumps(_meta(**meta)), encoding="utf-8")
    return path


def write_djvu(folder: Path, item: str, pages: Sequence[str]) -> Path:
    """Internet Archive ``<item>_djvu.txt`` (form feeds); the id is ``item``."""
    path = folder / f"{item}_djvu.txt"
    path.write_text("\f".join(pages), encoding="utf-8")
    return path


def write_page_folder(folder: Path, pages: Sequence[str], **meta: str | None) -> Path:
    """One folder per book with ``page_<n>.txt`` files and a ``meta.json``."""
    folder.mkdir(parents=True)
    for n, page in enumerate(pages, start=1):
        (folder / f"page_{n:04d}.txt").write_text(page + "\n", encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps(_meta(**meta)), encoding="utf-8")
    return folder


def write_jsonl(path: Path, records: Sequence[dict]) -> Path:
    """One JSON object per line (``pages`` or ``text`` plus metadata)."""
    with path.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def write_alto(path: Path, pages: Sequence[str], **meta: str | None) -> Path:
    """ALTO v4: one Page per page, one TextLine per line, one String per word."""
    parts = [f'<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="{ALTO_NS}"><Layout>']
    for n, page in enumerate(pages, start=1):
        parts.append(f'<Page ID="p{n}"><PrintSpace><TextBlock>')
        for line in page.split("\n"):
            words = "<SP/>".join(f"<String CONTENT={quoteattr(w)}/>" for w in line.split())
            parts.append(f"<TextLine>{words}</TextLine>\n")
        parts.append("</TextBlock></PrintSpace></Page>\n")
    parts.append("</Layout></alto>\n")
    path.write_text("".join(parts), encoding="utf-8")
    if meta:
        path.with_suffix(".json").write_text(json.dumps(_meta(**meta)), encoding="utf-8")
    return path


def write_hocr(path: Path, pages: Sequence[str], **meta: str | None) -> Path:
    """hOCR: one ``ocr_page`` div per page, ``ocr_line`` spans of ``ocrx_word`` spans."""
    parts = ['<!DOCTYPE html>\n<html><head><meta charset="utf-8"/></head><body>\n']
    for n, page in enumerate(pages, start=1):
        parts.append(f"<div class='ocr_page' id='page_{n}'><p class='ocr_par'>\n")
        for line in page.split("\n"):
            words = " ".join(f"<span class='ocrx_word'>{escape(w)}</span>" for w in line.split())
            parts.append(f"<span class='ocr_line'>{words}</span>\n")
        parts.append("</p></div>\n")
    parts.append("</body></html>\n")
    path.write_text("".join(parts), encoding="utf-8")
    if meta:
        path.with_suffix(".json").write_text(json.dumps(_meta(**meta)), encoding="utf-8")
    return path


# --- the ground-truth corpus ---------------------------------------------------------------


@dataclass
class Corpus:
    """Input paths plus what is known about the books behind them."""

    root: Path
    paths: list[Path] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # book id -> reader kind
    languages: dict[str, str] = field(default_factory=dict)  # book id -> language

    @property
    def ids(self) -> list[str]:
        return sorted(self.kinds)


# ids are chosen so that "a" < "b" in every relation id is predictable
PRIDE, PRIDE_EXACT, PRIDE_REPAG = "pride", "pride-exact", "pride-repag"
PRIDE_NOISY, PRIDE_VOL = "pride-noisy", "pride-1st-vol"
ANTHOLOGY = "anthology-pride-frank"
FRANK = "frank"
ALICE_EN, ALICE_DE = "alice-en", "alice-de"
WALDEN, SCARLET = "walden", "scarlet"

PRIDE_EDITIONS = (PRIDE, PRIDE_EXACT, PRIDE_NOISY, PRIDE_REPAG, PRIDE_VOL)

BOOK_WORDS = 9000
PAGE_LINES = 40


def build_corpus(root: Path, *, with_translation: bool = True) -> Corpus:
    """The synthetic corpus of known ground truth, every input kind at least once.

    * ``pride`` (txt + sidecar): 9K words of *Pride and Prejudice*, 40 lines a page;
    * ``pride-exact`` (ALTO): the same pages;
    * ``pride-noisy`` (JSONL with pages): the same pages with 2% character noise;
    * ``pride-repag`` (hOCR): the same text at 27 lines a page;
    * ``pride-1st-vol`` (page folder): the first 40% of ``pride``'s pages;
    * ``anthology-pride-frank`` (_djvu.txt): the second half of ``pride`` + the first half of
      ``frank``;
    * ``frank`` (JSONL with text): 9K words of *Frankenstein*;
    * ``alice-en`` / ``alice-de`` (txt): the whole of *Alice* and its German translation;
    * ``walden``, ``scarlet`` (JSONL text, txt): unrelated books.
    """
    corpus = Corpus(root)
    root.mkdir(parents=True, exist_ok=True)

    def add(book_id: str, path: Path, kind: str, language: str) -> None:
        if path not in corpus.paths:
            corpus.paths.append(path)
        corpus.kinds[book_id] = kind
        corpus.languages[book_id] = language

    pride_lines = word_slice(gutenberg_body("pride-en-pg1342"), BOOK_WORDS, skip_words=2000)
    pride_pages = paginate(pride_lines, PAGE_LINES)
    add(PRIDE, write_txt(root / "pride.txt", pride_pages, title="Pride and Prejudice"), "txt", "en")
    add(PRIDE_EXACT, write_alto(root / "pride-exact.xml", pride_pages), "alto", "en")
    add(PRIDE_REPAG, write_hocr(root / "pride-repag.hocr", paginate(pride_lines, 27)), "hocr", "en")
    n_vol = int(len(pride_pages) * 0.4)
    add(
        PRIDE_VOL,
        write_page_folder(root / PRIDE_VOL, pride_pages[:n_vol], title="Pride, vol. 1"),
        "pages",
        "en",
    )

    frank_lines = word_slice(gutenberg_body("frankenstein-en-1831-pg84"), BOOK_WORDS, 3000)
    half_p, half_f = len(pride_lines) // 2, len(frank_lines) // 2
    anthology = paginate(pride_lines[half_p:] + frank_lines[:half_f], PAGE_LINES)
    add(ANTHOLOGY, write_djvu(root, ANTHOLOGY, anthology), "djvu", "en")

    walden = "\n".join(word_slice(gutenberg_body("walden-en-pg205"), BOOK_WORDS, 5000))
    jsonl = write_jsonl(
        root / "batch.jsonl",
        [
            {"id": PRIDE_NOISY, "pages": [add_noise(p, 0.02, seed=7) for p in pride_pages]},
            {"id": FRANK, "title": "Frankenstein", "text": "\n".join(frank_lines)},
            {"id": WALDEN, "title": "Walden", "text": walden},
        ],
    )
    add(PRIDE_NOISY, jsonl, "jsonl", "en")
    add(FRANK, jsonl, "jsonl", "en")
    add(WALDEN, jsonl, "jsonl", "en")

    scarlet = paginate(word_slice(gutenberg_body("scarletletter-en-pg33"), BOOK_WORDS, 5000), 40)
    add(SCARLET, write_txt(root / "scarlet.txt", scarlet), "txt", "en")

    if with_translation:
        en = paginate(gutenberg_body("alice-en-pg11"), PAGE_LINES)
        de = paginate(gutenberg_body("alice-de-zimmermann-pg19778"), PAGE_LINES)
        add(ALICE_EN, write_txt(root / f"{ALICE_EN}.txt", en, language="en"), "txt", "en")
        add(ALICE_DE, write_txt(root / f"{ALICE_DE}.txt", de, language="de"), "txt", "de")
    return corpus


def many_books(root: Path, n: int, words: int = 2500) -> list[Path]:
    """``n`` distinct small books (consecutive slices of several real books) as .txt files."""
    sources = ["walden-en-pg205", "wuthering-en-pg768", "scarletletter-en-pg33", "pride-en-pg1342"]
    root.mkdir(parents=True, exist_ok=True)
    bodies = [gutenberg_body(s) for s in sources]
    paths = []
    for i in range(n):
        lines = word_slice(bodies[i % len(bodies)], words, skip_words=(i // len(bodies)) * words)
        path = root / f"book-{i:03d}.txt"
        write_txt(path, paginate(lines, PAGE_LINES))
        paths.append(path)
    return paths
