"""Hostile and damaged input at the readers (issue 16 item 4), no node: gzip'd and truncated
files, the size limit, NUL bytes, entity expansion and external entities, deep nesting, JSONL
and metadata of the wrong types; and the generated bad corpus read file by file."""

from __future__ import annotations

import gzip
import json
import random
import string
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from bookdup.model import Book
from readers import ReadError, Source, detect_kind, iter_books, iter_sources, read_source
from readers.common import MAX_XML_DEPTH, MB, decoding_warning
from tests.readers.reading import read_all, read_error, read_one

REPO = Path(__file__).resolve().parents[2]
ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
SECRET = "TOP-SECRET-MARKER-0451"
WORDS = ["It", "was", "the", "best", "of", "times", "it", "was", "the", "worst", "of", "times"]


def prose(lines: int = 30) -> str:
    return "\n".join(" ".join(WORDS[(i + j) % len(WORDS)] for j in range(9)) for i in range(lines))


def alto(body: str = "", doctype: str = "", pages: int = 1) -> str:
    lines = "".join(
        "<TextLine>" + "".join(f'<String CONTENT="{w}"/>' for w in line.split()) + "</TextLine>\n"
        for line in prose(5).split("\n")
    )
    page = f"<Page><PrintSpace><TextBlock>\n{lines}{body}</TextBlock></PrintSpace></Page>\n"
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n{doctype}<alto xmlns="{ALTO_NS}"><Layout>\n'
        + page * pages
        + "</Layout></alto>\n"
    )


def hocr(body: str = "", doctype: str = "<!DOCTYPE html>\n") -> str:
    lines = "".join(f'<span class="ocr_line">{line}</span>\n' for line in prose(5).split("\n"))
    return f'{doctype}<html><body><div class="ocr_page">\n{lines}{body}</div></body></html>\n'


# --- gzip -----------------------------------------------------------------------------------


def gz(path: Path, data: str | bytes) -> Path:
    path.write_bytes(gzip.compress(data.encode() if isinstance(data, str) else data))
    return path


def test_every_kind_can_be_gzipped_and_keeps_its_id_and_sidecar(tmp_path: Path) -> None:
    text = gz(tmp_path / "novel.txt.gz", prose() + "\f" + prose())
    (tmp_path / "novel.json").write_text(json.dumps({"title": "A Novel"}))
    djvu = gz(tmp_path / "item042_djvu.txt.gz", prose())
    jsonl = gz(tmp_path / "export.jsonl.gz", json.dumps({"id": "r1", "text": prose()}) + "\n")
    xml = gz(tmp_path / "scan.xml.gz", alto(pages=2))
    html = gz(tmp_path / "ia_chocr.html.gz", hocr())
    kinds = [detect_kind(p) for p in (text, djvu, jsonl, xml, html)]
    assert kinds == ["txt", "djvu", "jsonl", "alto", "hocr"]
    books = {b.id: b for b in read_all(tmp_path)}
    assert sorted(books) == ["ia_chocr", "item042", "novel", "r1", "scan"]
    assert (books["novel"].title, len(books["novel"].pages)) == ("A Novel", 2)
    assert books["scan"].pages[0].split("\n")[0] == " ".join(WORDS[:9])
    assert len(books["scan"].pages) == 2 and books["ia_chocr"].pages[0].startswith("It was")


def test_a_page_folder_of_gzipped_pages(tmp_path: Path) -> None:
    folder = tmp_path / "book"
    folder.mkdir()
    for n in (1, 2, 10):
        gz(folder / f"page_{n:d}.txt.gz", f"page {n} {prose(2)}")
    (source,) = iter_sources([tmp_path])
    assert (source.kind, [p.name for p in source.pages]) == (
        "pages",
        ["page_1.txt.gz", "page_2.txt.gz", "page_10.txt.gz"],
    )
    assert [p.split()[:2] for p in read_one(folder).pages] == [
        ["page", "1"],
        ["page", "2"],
        ["page", "10"],
    ]


@pytest.mark.parametrize("name", ["cut.txt.gz", "cut_djvu.txt.gz", "cut.hocr.gz"])
def test_truncated_gzip_is_named(tmp_path: Path, name: str) -> None:
    data = hocr() if name.endswith("hocr.gz") else prose(400)
    packed = gzip.compress(data.encode())
    path = tmp_path / name
    path.write_bytes(packed[: len(packed) // 2])
    error = read_error(path)
    assert error.path == str(path)
    assert error.reason.startswith("truncated gzip file: the compressed data ends before")


def test_truncated_gzip_alto_is_found_by_its_head_and_fails_while_streaming(tmp_path: Path) -> None:
    packed = gzip.compress(alto(pages=200).encode())
    path = tmp_path / "book.xml.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    assert detect_kind(path) == "alto"
    assert read_error(path).reason.startswith("truncated gzip file")


def test_truncated_gzip_jsonl_keeps_the_records_before_the_break(tmp_path: Path) -> None:
    rng = random.Random(7)
    vocabulary = ["".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(5000)]
    texts = [" ".join(rng.choices(vocabulary, k=4000)) for _ in range(6)]  # ~32 KB each
    records = [json.dumps({"id": f"r{i}", "text": text}) for i, text in enumerate(texts)]
    packed = gzip.compress(("\n".join(records) + "\n").encode())
    path = tmp_path / "export.jsonl.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    *books, error = read_all(path)
    assert books and all(isinstance(b, Book) for b in books) and len(books) < 6
    assert [b.id for b in books] == [f"r{i}" for i in range(len(books))]
    assert isinstance(error, ReadError) and error.reason.startswith("truncated gzip file")


def test_a_damaged_or_fake_gzip_is_named(tmp_path: Path) -> None:
    fake = tmp_path / "fake.txt.gz"
    fake.write_text(prose())
    assert read_error(fake).reason.startswith("damaged gzip file: Not a gzipped file")
    packed = bytearray(gzip.compress(prose(400).encode()))
    for i in range(len(packed) // 3, len(packed) // 3 + 64):
        packed[i] ^= 0x55
    corrupt = tmp_path / "corrupt.txt.gz"
    corrupt.write_bytes(bytes(packed))
    assert read_error(corrupt).reason.startswith("damaged gzip file: ")


def test_a_damaged_gzip_of_markup_is_reported_not_skipped(tmp_path: Path) -> None:
    """Too damaged to sniff: a `.xml.gz` is still read (and fails), not silently walked past."""
    path = tmp_path / "scan.xml.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 100)
    (source,) = iter_sources([tmp_path])
    assert source.kind == "alto"
    assert read_error(path).reason.startswith("damaged gzip file")


# --- the size limit -------------------------------------------------------------------------


def test_a_file_over_the_limit_is_refused_by_its_size_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "dump.txt"
    with path.open("wb") as fh:  # sparse: 2 GB on paper, nothing on disk, slow to read
        fh.truncate(2048 * MB)
    error = read_error(path)
    assert error == ReadError(str(path), "file is 2048 MB, over the limit of 32 MB for one book")
    error = read_error(path, max_bytes=int(1.5 * MB))
    assert error.reason == "file is 2048 MB, over the limit of 1.5 MB for one book"


def test_a_gzip_bomb_stops_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "bomb.txt.gz"
    with gzip.open(path, "wb", compresslevel=9) as fz:
        for _ in range(64):
            fz.write(b"lorem ipsum " * (MB // 12))
    assert path.stat().st_size < MB
    error = read_error(path, max_bytes=4 * MB)
    assert error.reason == "decompressed text is over the limit of 4 MB for one book"
    assert len(read_one(path, max_bytes=None).pages[0]) > 60 * MB  # no limit: read whole


def test_an_overlong_jsonl_record_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps({"id": "before", "text": prose()}) + "\n")
        fh.write('{"id": "huge", "text": "' + "word " * (4 * MB) + '"}\n')
        fh.write(json.dumps({"id": "after", "text": prose()}) + "\n")
    tracemalloc.start()
    try:
        before, error, after = read_all(path, max_bytes=MB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(before, Book) and isinstance(after, Book)
    assert (before.id, after.id, after.source) == ("before", "after", f"{path}:3")
    assert error == ReadError(
        str(path), "record is 20.0 MB, over the limit of 1 MB for one book", 2
    )
    assert peak < 8 * MB  # the 20 MB line was never held


def test_markup_counts_its_text_not_its_tags(tmp_path: Path) -> None:
    """ALTO and hOCR are streamed: the limit is on the text they hold (the markup is 5-20x)."""
    xml = tmp_path / "book.xml"
    xml.write_text(alto(pages=400))
    html = tmp_path / "book.hocr"
    html.write_text(hocr())
    text_size = sum(len(p) + 1 for p in read_one(xml).pages)
    assert xml.stat().st_size > 5 * text_size
    assert len(read_one(xml, max_bytes=text_size + 1000).pages) == 400
    error = read_error(xml, max_bytes=text_size // 2)
    assert error.reason.startswith("text is over the limit of") and error.line is not None
    assert read_error(html, max_bytes=100).reason.startswith("text is over the limit of")


def test_a_page_folder_counts_all_its_pages(tmp_path: Path) -> None:
    folder = tmp_path / "book"
    folder.mkdir()
    for n in range(1, 6):
        (folder / f"{n:04d}.txt").write_text(prose(20))
    page = len(prose(20))
    assert len(read_one(folder, max_bytes=5 * page + 10).pages) == 5
    error = read_error(folder, max_bytes=3 * page)
    assert error.path == str(folder)
    assert (
        error.reason.startswith("page files hold over") and "the limit for one book" in error.reason
    )


def test_the_limit_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="size limit"):
        iter_books([tmp_path], max_bytes=0)


# --- NUL bytes ------------------------------------------------------------------------------


def test_nul_bytes_past_the_sniff_window_are_named_with_their_position(tmp_path: Path) -> None:
    text = prose(400).encode()
    path = tmp_path / "damaged.txt"
    path.write_bytes(text[:10000] + b"\x00" * 4096 + text[10000:])
    error = read_error(path)
    assert error.reason.startswith("NUL characters in the text (the first at character 10000)")
    path.write_bytes(b"\x00\x00" + text)
    assert read_error(path).reason == "binary file, not text"
    html = tmp_path / "damaged.hocr"
    long_line = f'<span class="ocr_line">{prose(600)}</span>'
    html.write_bytes(hocr(long_line).encode() + b"\x00" * 100)
    assert read_error(html).reason.startswith("NUL characters in the text")


# --- entities and nesting -------------------------------------------------------------------


def laughs(root: str) -> str:
    decls = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">'.replace("&lol0;", "&lol;")
        for i in range(1, 10)
    ]
    return f"<!DOCTYPE {root} [\n" + "\n".join(decls) + "\n]>\n"


@pytest.fixture
def secret(tmp_path: Path) -> str:
    path = tmp_path / "private" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path.as_uri()


def test_billion_laughs_is_refused_before_any_expansion(tmp_path: Path) -> None:
    path = tmp_path / "lol.xml"
    path.write_text(alto('<TextLine><String CONTENT="&lol9;"/>&lol9;</TextLine>', laughs("alto")))
    error = read_error(path)
    assert (error.path, error.line) == (str(path), 3)  # the first declaration's line
    assert error.reason.startswith("XML entity declaration refused: bookdup never expands")
    html = tmp_path / "lol.hocr"
    html.write_text(hocr("&lol9;", laughs("html")))
    assert read_error(html).reason.startswith("XML entity declaration refused")


def test_even_a_harmless_entity_declaration_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "one.xml"
    path.write_text(alto("", '<!DOCTYPE alto [<!ENTITY a "alpha">]>\n'))
    assert read_error(path).reason.startswith("XML entity declaration refused")


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE alto [<!ENTITY xxe SYSTEM "{url}">]>\n',
        '<!DOCTYPE alto [<!ENTITY % xxe SYSTEM "{url}"> %xxe;]>\n',
        '<!DOCTYPE alto [<!ENTITY xxe PUBLIC "-//x//EN" "{url}">]>\n',
    ],
    ids=["general", "parameter", "public"],
)
def test_external_entities_never_read_the_local_file(
    tmp_path: Path, secret: str, doctype: str
) -> None:
    path = tmp_path / "xxe.xml"
    path.write_text(alto("<TextLine>&xxe;</TextLine>", doctype.format(url=secret)))
    error = read_error(path)
    assert error.reason.startswith("XML entity declaration refused")
    assert SECRET not in str(error)


def test_an_external_dtd_is_never_loaded(tmp_path: Path, secret: str) -> None:
    path = tmp_path / "dtd.xml"
    path.write_text(alto("<TextLine>&xxe;</TextLine>", f'<!DOCTYPE alto SYSTEM "{secret}">\n'))
    book = read_one(path)
    assert book.pages[0].startswith("It was") and SECRET not in "".join(book.pages)
    html = tmp_path / "dtd.hocr"
    html.write_text(hocr("&xxe;", f'<!DOCTYPE html SYSTEM "{secret}">\n'))
    book = read_one(html)
    assert book.pages[0].startswith("It was") and SECRET not in "".join(book.pages)


def test_hocr_external_entity_is_refused_and_never_read(tmp_path: Path, secret: str) -> None:
    path = tmp_path / "xxe.hocr"
    path.write_text(hocr("&xxe;", f'<!DOCTYPE html [\n<!ENTITY xxe SYSTEM "{secret}">\n]>\n'))
    error = read_error(path)
    assert error.reason.startswith("XML entity declaration refused") and SECRET not in str(error)


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    depth = 50_000
    xml = tmp_path / "deep.xml"
    xml.write_text(alto("<TextLine>" * depth + "</TextLine>" * depth))
    error = read_error(xml)
    assert error.reason == f"XML nested deeper than {MAX_XML_DEPTH} elements"
    assert error.line == 9
    html = tmp_path / "deep.hocr"
    html.write_text(hocr("<span>" * depth + "x" + "</span>" * depth))
    assert read_error(html).reason == f"markup nested deeper than {MAX_XML_DEPTH} elements"


def test_nesting_within_the_limit_reads(tmp_path: Path) -> None:
    depth = MAX_XML_DEPTH - 10
    html = tmp_path / "nested.hocr"
    html.write_text(hocr("<span>" * depth + "deep word" + "</span>" * depth))
    assert read_one(html).pages[0].endswith("deep word")


# --- JSONL and metadata of the wrong types --------------------------------------------------


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"id": {"n": 1}, "text": "x"}, "'id' must be a string or an integer, not an object"),
        ({"id": ["a"], "text": "x"}, "'id' must be a string or an integer, not a list"),
        ({"id": False, "text": "x"}, "'id' must be a string or an integer, not a boolean"),
        ({"id": 1.5, "text": "x"}, "'id' must be a string or an integer, not a number"),
        ({"title": {"t": 1}, "text": "x"}, "'title' must be a string, not an object"),
        (
            {"author": ["A", 3], "text": "x"},
            "'author' must be a string or a list of strings, not a list",
        ),
        ({"language": ["en"], "text": "x"}, "'language' must be a string, not a list"),
        ({"year": True, "text": "x"}, "'year' must be an integer or a string, not a boolean"),
        ({"id": "p", "pages": "one string"}, "'pages' is not a list of strings"),
        ({"id": "p", "pages": [["nested"]]}, "'pages' is not a list of strings"),
        ({"id": "t", "text": ["a", "b"]}, "'text' is not a string"),
        (42, "record is not a JSON object"),
        ("text", "record is not a JSON object"),
    ],
)
def test_jsonl_fields_of_the_wrong_type(tmp_path: Path, record: object, reason: str) -> None:
    path = tmp_path / "types.jsonl"
    good = {"id": "ok", "text": "fine words"}
    path.write_text(
        json.dumps(good) + "\n" + json.dumps(record) + "\n" + json.dumps(good | {"id": "ok2"})
    )
    first, error, last = read_all(path)
    assert isinstance(first, Book) and isinstance(last, Book)
    assert error == ReadError(str(path), reason, 2)


def test_right_types_in_their_usual_forms_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    record = {"id": 17, "title": 1984, "author": ["A", "B"], "year": "c. 1850", "text": "x"}
    path.write_text(json.dumps(record) + "\n")
    book = read_one(path)
    assert (book.id, book.title, book.author, book.year) == ("17", "1984", "A; B", 1850)


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": "d", "pages": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert read_error(path) == ReadError(str(path), "malformed JSON: nested too deeply", 1)
    (tmp_path / "b.txt").write_text(prose())
    (tmp_path / "b.json").write_text("[" * 100_000 + "]" * 100_000)
    error = read_error(tmp_path / "b.txt")
    assert (error.path, error.reason) == (
        str(tmp_path / "b.json"),
        "malformed JSON metadata: nested too deeply",
    )


def test_sidecar_of_the_wrong_type_or_size_is_reported_against_the_sidecar(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text(prose())
    sidecar = tmp_path / "b.json"
    sidecar.write_text(json.dumps({"id": {"x": 1}}))
    assert read_error(tmp_path / "b.txt") == ReadError(
        str(sidecar), "metadata: 'id' must be a string or an integer, not an object"
    )
    sidecar.write_text(json.dumps({"title": "t", "notes": "n" * (2 * MB)}))
    error = read_error(tmp_path / "b.txt")
    assert (error.path, error.reason) == (
        str(sidecar),
        "metadata file is 2.0 MB, over the limit of 1 MB",
    )


# --- encodings: a guess is always said --------------------------------------------------------


def test_a_guessed_encoding_is_flagged_in_every_format(tmp_path: Path) -> None:
    text = "Le cœur a ses raisons que la raison ne connaît point; où êtes-vous, Besançon? " * 3
    jsonl = tmp_path / "fr.jsonl"
    jsonl.write_bytes(
        (json.dumps({"id": "fr", "text": text}, ensure_ascii=False) + "\n").encode("cp1252")
    )
    xml = tmp_path / "fr.xml"
    words = "".join(f'<String CONTENT="{w}"/>' for w in text.split())
    xml.write_bytes(
        alto(f"<TextLine>{words}</TextLine>").replace(' encoding="UTF-8"', "").encode("cp1252")
    )
    html = tmp_path / "fr.hocr"
    html.write_bytes(hocr(text).encode("cp1252"))
    for path in (jsonl, xml, html):
        book = read_one(path)
        assert "connaît" in "".join(book.pages)
        warning = decoding_warning(book.extra)
        assert warning and warning.startswith("not valid UTF-8; decoded as"), (path, book.extra)
    assert decoding_warning(read_one(tmp_path / "fr.xml", encoding="cp1252").extra) is None


# --- the generated corpus, read file by file ------------------------------------------------


def test_the_bad_corpus_at_the_readers(tmp_path: Path) -> None:
    """Every error the readers own comes out once, naming its file (and line); everything the
    index job decides (duplicates, empty books, ids) still comes out as a book."""
    script = REPO / "scripts" / "make_bad_corpus.py"
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    args = [sys.executable, str(script), str(tmp_path), "--big-line-mb", "3"]
    subprocess.run(args, check=True, env=env, capture_output=True)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    found: dict[str, Book | ReadError] = {}
    for item in iter_books([tmp_path], max_bytes=MB):
        if isinstance(item, ReadError):
            where = item.path if item.line is None else f"{item.path}:{item.line}"
        else:
            where = item.source or ""
        assert where not in found, where
        found[where] = item
    for entry in manifest["expected"]:
        item = found.pop(str(tmp_path / entry["where"]), None)
        if entry["outcome"] == "error" and entry["stage"] == "read":
            assert isinstance(item, ReadError) and entry["error"] in item.reason, (entry, item)
        elif entry["outcome"] == "ignored":
            assert item is None, entry
        else:
            assert isinstance(item, Book), (entry, item)
            if entry["outcome"] == "indexed":
                assert item.id == entry["id"]
        assert manifest["secret_marker"] not in str(item)
    assert found == {}


def test_read_source_is_what_the_workers_call(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("word " * 300_000)
    (error,) = read_source(Source(path, "txt"), max_bytes=MB)
    assert isinstance(error, ReadError) and error.reason.startswith("file is 1.4 MB, over")
