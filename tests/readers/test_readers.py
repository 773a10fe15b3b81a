"""Readers for plain text, JSONL and the dispatcher: pages, metadata, encodings, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bookdup.model import Book
from readers import ReadError, Source, detect_kind, iter_books, iter_sources, read_source
from tests.readers.reading import read_all, read_error, read_one

GUTENBERG = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gutenberg"


# --- plain text -----------------------------------------------------------------------------


def test_form_feeds_are_page_breaks_and_trailing_one_adds_no_page(tmp_path: Path) -> None:
    path = tmp_path / "moby.txt"
    path.write_text("Call me Ishmael.\fSome years ago\nnever mind how long.\f")
    book = read_one(path)
    assert book.id == "moby"
    assert book.pages == ["Call me Ishmael.", "Some years ago\nnever mind how long."]
    assert book.source == str(path)
    assert book.extra == {"kind": "txt", "encoding": "utf-8", "decode_errors": 0}


def test_text_without_form_feeds_is_split_every_n_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_bytes("".join(f"line {i}\r\n" for i in range(95)).encode())
    book = read_one(path)
    assert [len(p.split("\n")) for p in book.pages] == [40, 40, 15]
    assert book.pages[1].startswith("line 40\n")
    assert [len(p.split("\n")) for p in read_one(path, lines_per_page=50).pages] == [50, 45]


def test_invalid_lines_per_page_or_encoding_fail_at_call_time(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lines_per_page"):
        iter_books([tmp_path], lines_per_page=0)
    with pytest.raises(ValueError, match="unknown encoding"):
        iter_books([tmp_path], encoding="no-such-codec")


def test_json_sidecar_supplies_metadata_and_extra_keys(tmp_path: Path) -> None:
    (tmp_path / "b1.txt").write_text("Es war einmal.")
    meta = {"id": "maerchen-1", "title": "Märchen", "author": ["A. Grimm", "W. Grimm"]}
    meta |= {"language": "de", "year": "c. 1812", "work": "kinder", "encoding": "bogus"}
    (tmp_path / "b1.json").write_text(json.dumps(meta))
    book = read_one(tmp_path / "b1.txt")
    assert (book.id, book.title, book.author) == ("maerchen-1", "Märchen", "A. Grimm; W. Grimm")
    assert (book.language, book.year) == ("de", 1812)
    assert book.extra["work"] == "kinder"
    assert book.extra["encoding"] == "utf-8"  # what was read wins over metadata


def test_malformed_sidecar_is_reported_against_the_sidecar(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("text")
    (tmp_path / "b.json").write_text('{"title": "x",\n "year": }')
    error = read_error(tmp_path / "b.txt")
    assert error.path == str(tmp_path / "b.json")
    assert error.line == 2
    assert error.reason.startswith("malformed JSON metadata: Expecting value")


def test_sidecar_json_files_are_not_books_when_walking(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "a.json").write_text('{"title": "Alpha"}')
    (tmp_path / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / ".hidden.txt").write_text("not me")
    books = read_all(tmp_path)
    assert [(b.id, b.title) for b in books] == [("a", "Alpha")]


# --- encodings ------------------------------------------------------------------------------


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffÉté".encode())
    book = read_one(path)
    assert book.pages == ["Été"]
    assert book.extra["encoding"] == "utf-8-sig"


def test_latin1_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    text = "Le cœur a ses raisons que la raison ne connaît point. " * 3
    text += "Où êtes-vous, ma chère amie? Déjà l'été s'achève à Besançon."
    path.write_bytes(text.replace("œ", "oe").encode("latin-1"))
    book = read_one(path)
    assert "connaît" in book.pages[0] and "Besançon" in book.pages[0]
    assert book.extra["encoding"] != "utf-8"
    assert book.extra["decode_errors"] == 0


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_and_without_bom_is_text_not_binary(tmp_path: Path, codec: str) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes("Grüße aus Köln.\fZweite Seite.".encode(codec))
    book = read_one(path)
    assert book.pages == ["Grüße aus Köln.", "Zweite Seite."]
    assert book.extra["encoding"].startswith("utf-16")


def test_declared_encoding_counts_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "broken.txt"
    path.write_bytes(b"caf\xe9 and cr\xe8me")
    book = read_one(path, encoding="utf-8")
    assert book.pages == ["caf\ufffd and cr\ufffdme"]
    assert book.extra == {"kind": "txt", "encoding": "utf-8", "decode_errors": 2}
    assert read_one(path, encoding="latin-1").pages == ["café and crème"]


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"  \r\n\n\t"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    assert read_error(path) == ReadError(str(path), "empty file")


@pytest.mark.parametrize(
    "content",
    [b"GIF89a\x00\x01\x02 text", bytes(range(1, 32)) * 10 + b"some text"],
    ids=["nul-bytes", "control-chars"],
)
def test_binary_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "binary.txt"
    path.write_bytes(content)
    error = read_error(path)
    assert error == ReadError(str(path), "binary file, not text")
    assert str(error) == f"{path}: binary file, not text"


def test_missing_path_and_unrecognised_explicit_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    assert read_error(missing) == ReadError(str(missing), "no such file or directory")
    odd = tmp_path / "notes.docx"
    odd.write_bytes(b"PK\x03\x04")
    assert read_error(odd).reason.startswith("unrecognised input kind")


# --- JSONL ----------------------------------------------------------------------------------


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_pages_text_metadata_and_sources(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "books.jsonl",
        [
            json.dumps({"id": "a", "title": "A", "language": "xx", "year": 1901, "pages": ["p1"]}),
            "",
            json.dumps({"title": "no id", "text": "one\ftwo", "shelf": 7}),
        ],
    )
    a, b = read_all(path)
    assert (a.id, a.title, a.language, a.year, a.pages) == ("a", "A", "xx", 1901, ["p1"])
    assert a.source == f"{path}:1"
    assert (b.id, b.pages, b.source) == ("books:3", ["one", "two"], f"{path}:3")
    assert b.extra == {"shelf": 7, "kind": "jsonl", "encoding": "utf-8", "decode_errors": 0}


def test_jsonl_text_without_form_feeds_uses_lines_per_page(tmp_path: Path) -> None:
    text = "\n".join(f"l{i}" for i in range(7))
    path = write_jsonl(tmp_path / "t.jsonl", [json.dumps({"id": "t", "text": text})])
    assert read_one(path, lines_per_page=3).pages == ["l0\nl1\nl2", "l3\nl4\nl5", "l6"]


def test_jsonl_bad_lines_are_reported_with_line_numbers_and_others_continue(
    tmp_path: Path,
) -> None:
    path = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            '{"id": "ok1", "pages": ["x"]}',
            '{"id": "broken", "pages": ["x"',
            '["not", "an", "object"]',
            '{"id": "nothing"}',
            '{"id": "badpages", "pages": [1, 2]}',
            '{"id": "badtext", "text": 5}',
            '{"id": "ok2", "text": "y"}',
        ],
    )
    results = read_all(path)
    assert [r.id for r in results if isinstance(r, Book)] == ["ok1", "ok2"]
    errors = [r for r in results if isinstance(r, ReadError)]
    assert [(e.line, e.reason) for e in errors] == [
        (2, "malformed JSON: Expecting ',' delimiter (column 31)"),
        (3, "record is not a JSON object"),
        (4, "record has neither 'pages' nor 'text'"),
        (5, "'pages' is not a list of strings"),
        (6, "'text' is not a string"),
    ]
    assert str(errors[0]) == f"{path}:2: malformed JSON: Expecting ',' delimiter (column 31)"


def test_jsonl_empty_and_binary(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert read_error(empty) == ReadError(str(empty), "empty file")
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b'{"id": 1}\x00\x00\x00')
    assert read_error(binary) == ReadError(str(binary), "binary file, not text")


def test_jsonl_cp1252_and_utf16(tmp_path: Path) -> None:
    text = "Déjà vu à Besançon, où l’été est très doux. "
    text += "Le cœur a ses raisons que la raison ne connaît point; c’est là qu’il faut chercher."
    line = json.dumps({"id": "fr", "text": text}, ensure_ascii=False) + "\n"
    western = tmp_path / "western.jsonl"
    western.write_bytes(line.encode("cp1252"))
    book = read_one(western)
    assert book.pages == [text]
    assert book.extra["encoding"] == "cp1252"
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(line.encode("utf-16"))
    assert read_one(wide).pages == [text]


def test_jsonl_is_streamed_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    with path.open("w") as f:
        for i in range(3):
            f.write(json.dumps({"id": f"b{i}", "pages": [f"page of {i}"]}) + "\n")
    books = iter_books([path])
    first = next(books)
    assert isinstance(first, Book) and first.id == "b0"
    with path.open("a") as f:  # appended after reading started: a streaming reader still sees it
        f.write(json.dumps({"id": "late", "pages": ["x"]}) + "\n")
    assert [b.id for b in books] == ["b1", "b2", "late"]


# --- dispatcher -----------------------------------------------------------------------------


def test_detect_kind_by_extension_and_sniff(tmp_path: Path) -> None:
    files = {
        "a.txt": "x",
        "item_djvu.txt": "x",
        "b.jsonl": "{}",
        "c.xml": '<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"/>',
        "d.xml": "<tei/>",
        "e.html": "<div class='ocr_page'></div>",
        "f.html": "<p>hello</p>",
        "g.md": "# readme",
    }
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    kinds = {name: detect_kind(tmp_path / name) for name in files}
    assert kinds == {
        "a.txt": "txt",
        "item_djvu.txt": "djvu",
        "b.jsonl": "jsonl",
        "c.xml": "alto",
        "d.xml": "unknown",
        "e.html": "hocr",
        "f.html": "unknown",
        "g.md": "unknown",
    }
    assert detect_kind(tmp_path) == "dir"
    with pytest.raises(FileNotFoundError):
        detect_kind(tmp_path / "missing")


def test_walk_is_recursive_in_natural_order(tmp_path: Path) -> None:
    for name in ["b10.txt", "b9.txt", "sub/a.txt"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name)
    assert [b.id for b in read_all(tmp_path)] == ["b9", "b10", "a"]


def test_sources_are_found_without_reading_and_read_one_by_one(tmp_path: Path) -> None:
    """`iter_books` = `iter_sources` (the walk, nothing read) + `read_source` for each."""
    (tmp_path / "a.txt").write_bytes(b"\x00\x01binary")
    (tmp_path / "item_djvu.txt").write_text("page one\fpage two")
    (tmp_path / "b.jsonl").write_text('{"id": "j1", "text": "x"}\n{"id": "j2", "text": "y"}\n')
    (tmp_path / "vol").mkdir()
    for n in (1, 2):
        (tmp_path / "vol" / f"page-{n}.txt").write_text(f"page {n}")
    (tmp_path / "notes.md").write_text("# not a book")
    sources = list(iter_sources([tmp_path, tmp_path / "missing.txt"]))
    assert sources == [
        Source(tmp_path / "a.txt", "txt"),
        Source(tmp_path / "b.jsonl", "jsonl"),
        Source(tmp_path / "item_djvu.txt", "djvu"),
        Source(
            tmp_path / "vol", "pages", (tmp_path / "vol/page-1.txt", tmp_path / "vol/page-2.txt")
        ),
        ReadError(str(tmp_path / "missing.txt"), "no such file or directory"),
    ]
    assert [s.default_id for s in sources[:4]] == ["a", None, "item", "vol"]
    books = [item for s in sources[:4] for item in read_source(s)]
    assert books[0] == ReadError(str(tmp_path / "a.txt"), "binary file, not text")
    assert [b.id for b in books[1:]] == ["j1", "j2", "item", "vol"]
    assert books[1:] == read_all(tmp_path)[1:]


# --- real data ------------------------------------------------------------------------------


def readme_word_counts() -> dict[str, int]:
    """Word counts from the corpus README's book table (`| id | lang | … | words | …`)."""
    counts: dict[str, int] = {}
    header: list[str] | None = None
    for line in (GUTENBERG / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:2] == ["id", "lang"] and "words" in cells:
            header = cells
        elif header and len(cells) == len(header):
            value = cells[header.index("words")]
            if re.fullmatch(r"[\d,]+", value):
                counts[cells[0]] = int(value.replace(",", ""))
    return counts


@pytest.mark.skipif(not GUTENBERG.is_dir(), reason="shared Gutenberg corpus not present")
def test_real_gutenberg_books_match_manifest_word_counts() -> None:
    manifest = [
        json.loads(line) for line in (GUTENBERG / "manifest.jsonl").read_text().splitlines()
    ]
    words = readme_word_counts()
    for row in manifest[:3]:
        path = GUTENBERG / row["file"]
        book = read_one(path)
        assert book.id == row["id"]
        n_lines = len(path.read_bytes().splitlines())
        assert len(book.pages) == -(-n_lines // 40)
        n_words = sum(len(page.split()) for page in book.pages)
        assert n_words == pytest.approx(words[row["id"]], rel=0.01)
        assert book.extra["decode_errors"] == 0


def test_text_that_is_not_utf8_is_read_with_a_named_guess(tmp_path: Path) -> None:
    from readers.common import decoding_warning

    text = "Die Straße führte über die Brücke, größer als jede andere. " * 40
    latin = tmp_path / "latin.txt"
    latin.write_bytes(text.encode("latin-1"))
    (book,) = list(iter_books([latin]))
    assert "Straße" in book.pages[0]
    assert book.extra["encoding_guessed"] is True
    warning = decoding_warning(book.extra)
    assert warning is not None and "not valid UTF-8" in warning
    assert book.extra["encoding"] in warning and "--encoding" in warning

    utf8 = tmp_path / "utf8.txt"
    utf8.write_text(text, encoding="utf-8")
    (clean,) = list(iter_books([utf8]))
    assert "encoding_guessed" not in clean.extra and decoding_warning(clean.extra) is None
