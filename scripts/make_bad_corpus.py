"""Write a corpus of bad inputs (and a few good books) with the outcome expected of each file.

Issue 16 item 4: every kind of bad input a digital library meets — empty, binary, NUL bytes,
invalid UTF-8, a single line of a gigabyte, deeply nested XML, entity expansion ("billion
laughs"), external entities (XXE) aimed at a real local file, truncated and damaged gzip, JSONL
with wrong types, ids with slashes and unicode, books with no pages or no words, duplicate ids
— must each give one clear error naming its file, while the rest of the corpus is indexed.
The files are generated, not committed: the big ones are large and some are hostile.

Usage::

    python scripts/make_bad_corpus.py OUT_DIR [--big-line-mb 1024] [--seed 16]
    bookdup index OUT_DIR --max-book-mb 32     # any limit below --big-line-mb

``OUT_DIR/manifest.json`` lists every input with its expected outcome: ``indexed`` (with the
book id, and the phrase of a decoding warning when one is expected), ``error`` (with a phrase
the failure's reason contains) or ``ignored`` (not a book: skipped by the walk without a word).
``where`` is how `bookdup index` names the file in its summary, relative to OUT_DIR: the path,
with ``:LINE`` for a JSONL record or an XML error at a known line; an error's ``stage`` is
``read`` when the readers find it, ``index`` when only the index job can (duplicate ids, books
without pages or words, ids Elasticsearch refuses). The big cases (a one-line
text, a one-line JSONL record, a gzip bomb) are ``--big-line-mb`` MB each once decompressed, so
the full-size corpus needs about twice that on disk. OUT_DIR/.private/secret.txt holds the marker
string the XXE files point at: it must never appear in an indexed document or a message (the
walk skips hidden folders, so the secret is not a book itself).

Good books are fresh prose from the project's word models (`generator`), in every input kind.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from generator.formats import write_alto, write_hocr, write_jsonl_record, write_txt
from generator.render import paginate, render_lines
from generator.wordmodel import load_wordmodel

SECRET_MARKER = "BOOKDUP-XXE-SECRET-7f3a9c"
MB = 1 << 20
ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"


class Corpus:
    """The output folder, the prose source and the manifest being written."""

    def __init__(self, out: Path, seed: int) -> None:
        self.out = out
        self.rng = np.random.default_rng(seed)
        self.expected: list[dict[str, Any]] = []

    def path(self, rel: str) -> Path:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def pages(self, language: str = "en", words: int = 2500) -> list[str]:
        """Pages of new prose (page numbers at the foot, like a printed book)."""
        prose = load_wordmodel(language).words(self.rng, words)
        return paginate(render_lines(prose, 68), 36)

    def text(self, words: int = 400) -> str:
        return "\n".join(self.pages(words=words))

    def indexed(self, where: str, book_id: str, case: str, warning: str | None = None) -> None:
        entry = {"where": where, "outcome": "indexed", "id": book_id, "case": case}
        self.expected.append(entry | ({"warning": warning} if warning else {}))

    def error(self, where: str, phrase: str, case: str, stage: str = "read") -> None:
        entry = {"where": where, "outcome": "error", "error": phrase, "case": case}
        self.expected.append(entry | {"stage": stage})

    def ignored(self, where: str, case: str) -> None:
        self.expected.append({"where": where, "outcome": "ignored", "case": case})


def _meta(book_id: str, language: str = "en") -> dict[str, Any]:
    return {"id": book_id, "title": book_id.replace("-", " ").title(), "language": language}


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def _alto(pages: list[str], doctype: str = "") -> str:
    """A small ALTO document (one String per word) with an optional DOCTYPE after the prolog."""
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n', doctype]
    parts.append(f'<alto xmlns="{ALTO_NS}">\n<Layout>\n')
    for n, page in enumerate(pages, 1):
        parts.append(f'<Page ID="p{n}"><PrintSpace><TextBlock>\n')
        for line in page.split("\n"):
            words = "".join(f'<String CONTENT="{w}"/>' for w in line.split() if w.isalpha())
            parts.append(f"<TextLine>{words}</TextLine>\n")
        parts.append("</TextBlock></PrintSpace></Page>\n")
    parts.append("</Layout>\n</alto>\n")
    return "".join(parts)


def _hocr(page: str, doctype: str = "<!DOCTYPE html>\n") -> str:
    lines = "".join(f'<span class="ocr_line">{line}</span>\n' for line in page.split("\n"))
    return f'{doctype}<html><body>\n<div class="ocr_page">\n{lines}</div>\n</body></html>\n'


# --- good books -----------------------------------------------------------------------------


def good_books(c: Corpus) -> None:
    write_txt(c.path("good/novel-en.txt"), _meta("good-novel-en"), c.pages("en"))
    c.indexed("good/novel-en.txt", "good-novel-en", "good book: text with a sidecar")
    write_alto(c.path("good/essay-fr.xml"), _meta("good-essay-fr", "fr"), c.pages("fr"))
    c.indexed("good/essay-fr.xml", "good-essay-fr", "good book: ALTO")
    write_hocr(c.path("good/tale-es.hocr"), _meta("good-tale-es", "es"), c.pages("es"))
    c.indexed("good/tale-es.hocr", "good-tale-es", "good book: hOCR")
    with c.path("good/export.jsonl").open("w", encoding="utf-8") as fh:
        for n in (1, 2):
            write_jsonl_record(fh, _meta(f"good-jsonl-{n}", "de"), c.pages("de"))
            c.indexed(f"good/export.jsonl:{n}", f"good-jsonl-{n}", "good book: JSONL record")
    with gzip.open(c.path("good/item0001_djvu.txt.gz"), "wt", encoding="utf-8") as fz:
        fz.write("\f".join(c.pages("it")))
    c.indexed("good/item0001_djvu.txt.gz", "item0001", "good book: gzip'd Internet Archive text")
    with gzip.open(c.path("good/novel-gz.txt.gz"), "wt", encoding="utf-8") as fz:
        fz.write("\f".join(c.pages("en")))
    c.indexed("good/novel-gz.txt.gz", "novel-gz", "good book: gzip'd text")
    folder = c.path("good/scanned-book/meta.json").parent
    (folder / "meta.json").write_text(json.dumps(_meta("good-page-folder")), encoding="utf-8")
    for n, page in enumerate(c.pages("en"), 1):
        (folder / f"{n:04d}.txt").write_text(page, encoding="utf-8")
    c.indexed("good/scanned-book", "good-page-folder", "good book: a folder of page files")


# --- empty, binary, NUL, encodings ----------------------------------------------------------


def empty_and_binary(c: Corpus) -> None:
    c.path("empty/empty.txt").write_bytes(b"")
    c.error("empty/empty.txt", "empty file", "empty text file")
    c.path("empty/blank.txt").write_bytes(b" \r\n\t\n  \n")
    c.error("empty/blank.txt", "empty file", "text file of whitespace only")
    c.path("empty/empty.jsonl").write_bytes(b"\n\n")
    c.error("empty/empty.jsonl", "empty file", "JSONL file without a record")
    c.path("empty/empty.hocr").write_bytes(b"")
    c.error("empty/empty.hocr", "empty file", "empty hOCR file")
    png = b"\x89PNG\r\n\x1a\n" + bytes(c.rng.integers(0, 256, 20000, dtype=np.uint8))
    c.path("binary/scan.txt").write_bytes(png)
    c.error("binary/scan.txt", "binary file, not text", "an image saved as .txt")
    c.path("binary/random.jsonl").write_bytes(bytes(c.rng.integers(0, 256, 5000, dtype=np.uint8)))
    c.error("binary/random.jsonl", "binary file, not text", "random bytes named .jsonl")
    c.path("nul/nul-start.txt").write_bytes(b"\x00" * 64 + c.text().encode())
    c.error("nul/nul-start.txt", "binary file, not text", "NUL bytes at the start")
    text = c.text(3000).encode()
    damaged = text[:12000] + b"\x00" * 4096 + text[12000:]
    c.path("nul/zero-block.txt").write_bytes(damaged)
    c.error("nul/zero-block.txt", "NUL characters in the text", "a zero-filled block mid-file")
    c.path("ignored/cover.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(2000))
    c.ignored("ignored/cover.jpg", "a scan beside the books: not an input, skipped silently")


def invalid_utf8(c: Corpus) -> None:
    text = c.text(2000).encode()
    broken = b"".join(line + b" \xff\xfe caf\xe9 \xc3\x28\n" for line in text.split(b"\n"))
    c.path("encoding/invalid-utf8.txt").write_bytes(broken)
    c.indexed(
        "encoding/invalid-utf8.txt",
        "invalid-utf8",
        "invalid UTF-8: indexed with a warning naming the guessed encoding",
        warning="not valid UTF-8",
    )
    record = json.dumps({"id": "invalid-utf8-jsonl", "text": "@@"}).encode()
    record = record.replace(b"@@", text.replace(b"\n", b"\\n")[:6000] + b" \xff caf\xe9")
    c.path("encoding/invalid-utf8.jsonl").write_bytes(record + b"\n")
    c.indexed(
        "encoding/invalid-utf8.jsonl:1",
        "invalid-utf8-jsonl",
        "JSONL that is not UTF-8: indexed with a warning",
        warning="not valid UTF-8",
    )


# --- size: one-line gigabytes and a gzip bomb -----------------------------------------------


def _write_repeated(fh: Any, size: int, unit: bytes) -> None:
    """``size`` bytes of ``unit`` repeated, written 1 MB at a time."""
    block = (unit * (MB // len(unit) + 1))[:MB]
    for _ in range(size // MB):
        fh.write(block)
    fh.write(block[: size % MB])


def big_inputs(c: Corpus, big_mb: int) -> None:
    size = big_mb * MB
    words = b"lorem ipsum dolor sit amet consectetur adipiscing elit "
    with c.path("big/one-line.txt").open("wb") as fh:
        _write_repeated(fh, size, words)
    c.error("big/one-line.txt", f"file is {big_mb} MB, over the limit of", "one huge line")
    with c.path("big/one-line-record.jsonl").open("w", encoding="utf-8") as fh:
        write_jsonl_record(fh, {"id": "big-neighbour-1"}, c.pages())
        fh.write('{"id": "big-record", "text": "')
        fh.flush()
        _write_repeated(fh.buffer, size, words)
        fh.write('"}\n')
        write_jsonl_record(fh, {"id": "big-neighbour-3"}, c.pages())
    c.indexed("big/one-line-record.jsonl:1", "big-neighbour-1", "record before a huge one")
    c.error("big/one-line-record.jsonl:2", "over the limit of", "a JSONL record of one huge line")
    c.indexed("big/one-line-record.jsonl:3", "big-neighbour-3", "record after a huge one")
    with gzip.open(c.path("big/bomb.txt.gz"), "wb", compresslevel=9) as fz:
        _write_repeated(fz, size, words)
    c.error("big/bomb.txt.gz", "decompressed text is over the limit of", "gzip bomb")


# --- XML: nesting, entity expansion, external entities --------------------------------------


def deep_markup(c: Corpus) -> None:
    depth = 100_000
    nested = "<TextBlock>" * depth + "</TextBlock>" * depth
    page = f"<Page><PrintSpace>{nested}</PrintSpace></Page>"
    alto = _alto([]).replace("<Layout>\n", f"<Layout>\n{page}")
    c.path("xml/deep.xml").write_text(alto, encoding="utf-8")
    where = f"xml/deep.xml:{_line_of(alto, '<TextBlock>')}"
    c.error(where, "XML nested deeper than", "ALTO nested 100,000 deep")
    spans = "<span>" * depth + "word" + "</span>" * depth
    c.path("xml/deep.hocr").write_text(_hocr(spans), encoding="utf-8")
    c.error("xml/deep.hocr", "markup nested deeper than", "hOCR nested 100,000 deep")


def _laughs() -> str:
    decls = ['<!ENTITY lol "lol">']
    decls += [f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">' for i in range(1, 10)]
    return "\n".join(decls).replace("&lol0;", "&lol;")


def entity_attacks(c: Corpus, secret: Path) -> None:
    page = c.text(120)
    laughs = f"<!DOCTYPE alto [\n{_laughs()}\n]>\n"
    alto = _alto([page], laughs).replace("<TextLine>", '<TextLine><String CONTENT="&lol9;"/>', 1)
    c.path("xml/billion-laughs.xml").write_text(alto, encoding="utf-8")
    where = f"xml/billion-laughs.xml:{_line_of(alto, '<!ENTITY')}"
    c.error(where, "XML entity declaration refused", "billion laughs (ALTO)")
    hocr = _hocr(page + "\n&lol9;", laughs.replace("alto", "html"))
    c.path("xml/billion-laughs.hocr").write_text(hocr, encoding="utf-8")
    c.error("xml/billion-laughs.hocr", "XML entity declaration refused", "billion laughs (hOCR)")

    url = secret.resolve().as_uri()
    general = f'<!DOCTYPE alto [\n<!ENTITY xxe SYSTEM "{url}">\n]>\n'
    alto = _alto([page], general).replace("</TextLine>", "&xxe;</TextLine>", 1)
    c.path("xml/xxe-general.xml").write_text(alto, encoding="utf-8")
    where = f"xml/xxe-general.xml:{_line_of(alto, '<!ENTITY')}"
    c.error(where, "XML entity declaration refused", "XXE: external entity at a local file")
    parameter = f'<!DOCTYPE alto [\n<!ENTITY % xxe SYSTEM "{url}">\n%xxe;\n]>\n'
    alto = _alto([page], parameter)
    c.path("xml/xxe-parameter.xml").write_text(alto, encoding="utf-8")
    where = f"xml/xxe-parameter.xml:{_line_of(alto, '<!ENTITY')}"
    c.error(where, "XML entity declaration refused", "XXE: external parameter entity")
    alto = _alto([page], f'<!DOCTYPE alto SYSTEM "{url}">\n')
    c.path("xml/xxe-dtd.xml").write_text(alto, encoding="utf-8")
    c.indexed("xml/xxe-dtd.xml", "xxe-dtd", "external DTD at a local file: never read, text kept")
    hocr = _hocr(page + "\n&xxe;", f'<!DOCTYPE html [\n<!ENTITY xxe SYSTEM "{url}">\n]>\n')
    c.path("xml/xxe.hocr").write_text(hocr, encoding="utf-8")
    c.error("xml/xxe.hocr", "XML entity declaration refused", "XXE in hOCR")

    alto = _alto(c.pages(words=3000))
    cut = alto[: len(alto) * 2 // 3]
    c.path("xml/truncated.xml").write_text(cut, encoding="utf-8")
    c.error(f"xml/truncated.xml:{cut.count(chr(10)) + 1}", "malformed XML", "ALTO cut short")


# --- gzip -----------------------------------------------------------------------------------


def damaged_gzip(c: Corpus) -> None:
    packed = gzip.compress(c.text(6000).encode(), compresslevel=6)
    c.path("gzip/truncated.txt.gz").write_bytes(packed[: len(packed) // 2])
    c.error("gzip/truncated.txt.gz", "truncated gzip file", "gzip cut short (interrupted copy)")
    alto = gzip.compress(_alto(c.pages(words=6000)).encode())
    c.path("gzip/truncated-alto.xml.gz").write_bytes(alto[: len(alto) * 2 // 3])
    c.error("gzip/truncated-alto.xml.gz", "truncated gzip file", "gzip'd ALTO cut short")
    c.path("gzip/not-gzip.txt.gz").write_bytes(c.text().encode())
    c.error("gzip/not-gzip.txt.gz", "damaged gzip file", "plain text named .gz")
    corrupt = bytearray(packed)
    for i in range(len(corrupt) // 3, len(corrupt) // 3 + 64):
        corrupt[i] ^= 0x55
    c.path("gzip/corrupt.txt.gz").write_bytes(bytes(corrupt))
    c.error("gzip/corrupt.txt.gz", "damaged gzip file", "gzip with flipped bytes")


# --- JSONL types, metadata, ids, zero pages and words, duplicates ---------------------------


def wrong_types(c: Corpus) -> None:
    text = c.text(200)
    records: list[tuple[Any, str | None]] = [
        ({"id": "types-ok", "text": text}, None),
        ({"id": {"n": 1}, "text": text}, "'id' must be a string or an integer, not an object"),
        ({"id": True, "text": text}, "'id' must be a string or an integer, not a boolean"),
        ({"id": "t4", "pages": "one page as a string"}, "'pages' is not a list of strings"),
        ({"id": "t5", "pages": [1, 2, 3]}, "'pages' is not a list of strings"),
        ({"id": "t6", "text": 42}, "'text' is not a string"),
        ({"id": "t7", "text": text, "language": ["en", "de"]}, "'language' must be a string"),
        ({"id": "t8", "text": text, "year": {"from": 1850}}, "'year' must be an integer"),
        (["a", "list"], "record is not a JSON object"),
        (None, "record is not a JSON object"),
    ]
    lines = [json.dumps(record) for record, _ in records]
    lines.append('{"id": "t11", "text": "unterminated')
    lines.append('{"id": "t12", "pages": ' + "[" * 100_000 + "]" * 100_000 + "}")
    c.path("jsonl/wrong-types.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    c.indexed("jsonl/wrong-types.jsonl:1", "types-ok", "good record among bad ones")
    for n, (_, phrase) in enumerate(records[1:], 2):
        c.error(f"jsonl/wrong-types.jsonl:{n}", phrase or "", "JSONL field of the wrong type")
    c.error("jsonl/wrong-types.jsonl:11", "malformed JSON", "JSONL line cut short")
    c.error("jsonl/wrong-types.jsonl:12", "nested too deeply", "JSONL nested 100,000 deep")
    c.path("sidecar/bad-meta.txt").write_text(text, encoding="utf-8")
    c.path("sidecar/bad-meta.json").write_text(json.dumps({"id": ["a", 1]}), encoding="utf-8")
    c.error("sidecar/bad-meta.json", "metadata: 'id' must be", "sidecar id of the wrong type")


def odd_ids(c: Corpus) -> None:
    ids = ["collection/vol 1/../item", "Ünïcödé/книга/書名", "x" * 600, "emoji-📚-id"]
    with c.path("ids/records.jsonl").open("w", encoding="utf-8") as fh:
        for book_id in ids:
            write_jsonl_record(fh, {"id": book_id}, c.pages(words=800))
    c.indexed("ids/records.jsonl:1", ids[0], "id with slashes and dots")
    c.indexed("ids/records.jsonl:2", ids[1], "unicode id with slashes")
    c.error("ids/records.jsonl:3", "id is 600 bytes long", "id too long for Elasticsearch", "index")
    c.indexed("ids/records.jsonl:4", ids[3], "id with an emoji (outside the BMP)")
    write_txt(c.path("ids/Οδύσσεια-книга.txt"), {}, c.pages(words=800))
    c.path("ids/Οδύσσεια-книга.json").unlink()
    c.indexed("ids/Οδύσσεια-книга.txt", "Οδύσσεια-книга", "unicode file name as id")
    write_txt(c.path("ids/with-slash.txt"), {"id": "shelf/3/with-slash"}, c.pages(words=800))
    c.indexed("ids/with-slash.txt", "shelf/3/with-slash", "sidecar id with slashes")


def zero_books(c: Corpus) -> None:
    records = [{"id": "no-pages", "pages": []}, {"id": "empty-text", "text": ""}]
    records.append({"id": "blank-pages", "pages": ["", "   ", "\n\n"]})
    lines = "".join(json.dumps(r) + "\n" for r in records)
    c.path("zero/records.jsonl").write_text(lines, encoding="utf-8")
    c.error(
        "zero/records.jsonl:1", "book has no pages", "JSONL record with an empty page list", "index"
    )
    c.error("zero/records.jsonl:2", "book has no pages", "JSONL record with empty text", "index")
    c.error("zero/records.jsonl:3", "book has no words", "JSONL record of blank pages", "index")
    c.path("zero/digits-only.txt").write_text("12\f13 — 14\f*** 15 ***\f", encoding="utf-8")
    c.error("zero/digits-only.txt", "book has no words", "page numbers and no text", "index")
    blank_pages = '<Page ID="p1"><PrintSpace/></Page><Page ID="p2"><PrintSpace/></Page>'
    alto = _alto([]).replace("<Layout>\n", f"<Layout>\n{blank_pages}")
    c.path("zero/no-strings.xml").write_text(alto, encoding="utf-8")
    c.error("zero/no-strings.xml", "book has no words", "ALTO pages without a String", "index")


def duplicates(c: Corpus) -> None:
    write_txt(c.path("dups/a.txt"), {"id": "dup-id"}, c.pages(words=800))
    c.indexed("dups/a.txt", "dup-id", "first of two files with one id: kept")
    write_txt(c.path("dups/b.txt"), {"id": "dup-id"}, c.pages(words=800))
    c.error(
        "dups/b.txt", "duplicate id 'dup-id': already read from", "second file with the id", "index"
    )
    with c.path("dups/records.jsonl").open("w", encoding="utf-8") as fh:
        for _ in range(2):
            write_jsonl_record(fh, {"id": "dup-jsonl"}, c.pages(words=800))
    c.indexed("dups/records.jsonl:1", "dup-jsonl", "first JSONL record with an id")
    c.error(
        "dups/records.jsonl:2",
        "duplicate id 'dup-jsonl'",
        "second JSONL record with the id",
        "index",
    )


def make_bad_corpus(out: Path, big_line_mb: int = 1024, seed: int = 16) -> dict[str, Any]:
    """Write the corpus and its manifest into ``out``; returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    c = Corpus(out, seed)
    secret = c.path(".private/secret.txt")
    secret.write_text(f"{SECRET_MARKER}\n", encoding="utf-8")
    good_books(c)
    empty_and_binary(c)
    invalid_utf8(c)
    big_inputs(c, big_line_mb)
    deep_markup(c)
    entity_attacks(c, secret)
    damaged_gzip(c)
    wrong_types(c)
    odd_ids(c)
    zero_books(c)
    duplicates(c)
    manifest = {
        "big_line_mb": big_line_mb,
        "note": f"index with --max-book-mb below {big_line_mb}; 'where' is relative to this folder",
        "secret_marker": SECRET_MARKER,
        "expected": c.expected,
    }
    (out / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder to write (created if missing)")
    parser.add_argument(
        "--big-line-mb",
        type=int,
        default=1024,
        help="size of the one-line text, the one-line JSONL record and the gzip bomb (MB)",
    )
    parser.add_argument("--seed", type=int, default=16, help="seed of the good books' prose")
    args = parser.parse_args()
    manifest = make_bad_corpus(args.out_dir, args.big_line_mb, args.seed)
    counts: dict[str, int] = {}
    for entry in manifest["expected"]:
        counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
    print(f"wrote {args.out_dir}: {counts} (manifest.json)")


if __name__ == "__main__":
    main()
