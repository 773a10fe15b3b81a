"""Readers for layout formats and page folders: ALTO, hOCR, `_djvu.txt`, one file per page."""

from __future__ import annotations

import json
from pathlib import Path

from readers import ReadError, detect_kind
from tests.readers.reading import read_all, read_error, read_one

ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"


def alto_line(*strings: str) -> str:
    """A TextLine from String/HYP/SP snippets; plain words become String elements."""
    parts = [s if s.startswith("<") else f'<String CONTENT="{s}"/>' for s in strings]
    return "<TextLine>" + "<SP/>".join(parts) + "</TextLine>"


def alto_page(*blocks: list[str]) -> str:
    body = "".join("<TextBlock>" + "".join(lines) + "</TextBlock>" for lines in blocks)
    return f"<Page><PrintSpace>{body}</PrintSpace></Page>"


def alto(*pages: str) -> str:
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<alto xmlns="{ALTO_NS}">'
    return head + "<Layout>" + "".join(pages) + "</Layout></alto>"


# --- ALTO -----------------------------------------------------------------------------------


def test_alto_book_with_several_pages_blocks_and_lines(tmp_path: Path) -> None:
    path = tmp_path / "book.xml"
    path.write_text(
        alto(
            alto_page([alto_line("It", "was"), alto_line("a", "dark")], [alto_line("night.")]),
            alto_page([alto_line("The", "end.")]),
        )
    )
    assert detect_kind(path) == "alto"
    book = read_one(path)
    assert book.id == "book"
    assert book.pages == ["It was\na dark\n\nnight.", "The end."]
    assert book.extra == {"kind": "alto", "encoding": "utf-8", "decode_errors": 0}


def test_alto_namespace_prefix_and_version_do_not_matter(tmp_path: Path) -> None:
    path = tmp_path / "prefixed.xml"
    path.write_text(
        '<a:alto xmlns:a="http://schema.ccs-gmbh.com/ALTO"><a:Layout><a:Page><a:TextBlock>'
        '<a:TextLine><a:String CONTENT="Hallo"/><a:SP/><a:String CONTENT="Welt"/></a:TextLine>'
        "</a:TextBlock></a:Page></a:Layout></a:alto>"
    )
    assert detect_kind(path) == "alto"
    assert read_one(path).pages == ["Hallo Welt"]


def test_alto_hyphenation_with_subs_content_yields_the_whole_word_once(tmp_path: Path) -> None:
    part1 = '<String CONTENT="exam" SUBS_TYPE="HypPart1" SUBS_CONTENT="example"/><HYP CONTENT="-"/>'
    part2 = '<String CONTENT="ple" SUBS_TYPE="HypPart2" SUBS_CONTENT="example"/>'
    path = tmp_path / "hyp.xml"
    path.write_text(alto(alto_page([alto_line("an", part1), alto_line(part2, "here")])))
    assert read_one(path).pages == ["an example\nhere"]


def test_alto_hyphenation_across_pages(tmp_path: Path) -> None:
    part1 = '<String CONTENT="Wör" SUBS_TYPE="HypPart1" SUBS_CONTENT="Wörter"/><HYP CONTENT="¬"/>'
    part2 = '<String CONTENT="ter" SUBS_TYPE="HypPart2" SUBS_CONTENT="Wörter"/>'
    path = tmp_path / "pages.xml"
    path.write_text(alto(alto_page([alto_line("viele", part1)]), alto_page([alto_line(part2)])))
    assert read_one(path).pages == ["viele Wörter", ""]


def test_alto_hyp_without_subs_content_keeps_a_line_end_hyphen(tmp_path: Path) -> None:
    path = tmp_path / "bare.xml"
    path.write_text(
        alto(
            alto_page(
                [alto_line("an", '<String CONTENT="exam"/><HYP CONTENT="-"/>'), alto_line("ple")]
            )
        )
    )
    assert read_one(path).pages == ["an exam-\nple"]


def test_malformed_alto_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(f'<alto xmlns="{ALTO_NS}">\n<Layout><Page>\n  <TextBlock></Page>\n</alto>')
    error = read_error(path)
    assert (error.path, error.line) == (str(path), 3)
    assert error.reason == "malformed XML: mismatched tag (column 16)"
    assert str(error) == f"{path}:3: malformed XML: mismatched tag (column 16)"


def test_alto_without_pages_and_empty_alto_file(tmp_path: Path) -> None:
    path = tmp_path / "nopage.xml"
    path.write_text(f'<alto xmlns="{ALTO_NS}"><Description/></alto>')
    assert read_error(path).reason == "no <Page> element in ALTO file"
    empty = tmp_path / "empty.alto"
    empty.write_bytes(b"")
    assert read_error(empty) == ReadError(str(empty), "empty file")


def test_undeclared_latin1_alto_is_decoded_not_rejected(tmp_path: Path) -> None:
    path = tmp_path / "latin.xml"
    text = "Été à Besançon, où l’on mange très bien; le cœur a ses raisons"
    words = text.split()
    path.write_bytes(
        alto(alto_page([alto_line(*words)])).replace(' encoding="UTF-8"', "").encode("cp1252")
    )
    book = read_one(path)
    assert book.pages == [text]
    assert book.extra["encoding"] == "cp1252"


# --- hOCR -----------------------------------------------------------------------------------

HOCR = """<!DOCTYPE html>
<html><head><title>image.png</title><meta charset="utf-8"/>
<meta name='ocr-system' content='tesseract'/></head>
<body>
 <div class='ocr_page' id='page_1' title='image "p1.png"; bbox 0 0 100 100'>
  <div class='ocr_carea'><p class='ocr_par'>
   <span class='ocr_line' title='bbox 1 1 9 9'><span class='ocrx_word'>Alice</span>
     <span class='ocrx_word'>was</span> <span class='ocrx_word'>begin-</span></span>
   <span class='ocr_line'><span class='ocrx_word'>ning</span><span class='ocrx_word'>to</span>
   </span></p>
   <p class='ocr_par'><span class='ocr_line'><span class='ocrx_word'>get&#160;&amp;</span>
   <span class='ocrx_word'>tired</span></span></p></div>
 </div>
 <div class="ocr_page" id="page_2"><span class="ocr_line">Older hOCR: text in the line</span>
 </div>
</body></html>
"""


def test_hocr_pages_lines_and_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "alice.hocr"
    path.write_text(HOCR)
    book = read_one(path)
    assert book.pages == [
        "Alice was begin-\nning to\n\nget & tired",
        "Older hOCR: text in the line",
    ]
    assert book.extra == {"kind": "hocr", "encoding": "utf-8", "decode_errors": 0}


def test_hocr_html_extension_is_sniffed_and_sidecar_read(tmp_path: Path) -> None:
    path = tmp_path / "scan.html"
    path.write_text(HOCR)
    (tmp_path / "scan.json").write_text(json.dumps({"id": "alice-1865", "year": 1865}))
    book = read_one(path)
    assert (book.id, book.year, len(book.pages)) == ("alice-1865", 1865, 2)


def test_hocr_without_pages(tmp_path: Path) -> None:
    path = tmp_path / "plain.hocr"
    path.write_text("<html><body><p>no pages here</p></body></html>")
    assert read_error(path) == ReadError(str(path), "no ocr_page element in hOCR file")


def test_hocr_that_is_not_xhtml(tmp_path: Path) -> None:
    """Unquoted attributes, upper-case tags, void elements without a slash, unclosed paragraphs
    and entities; `<br>` and `<img>` separate words like spaces, and an unclosed `<p>` ends
    where the next one starts (HTML's implied end tag), so the paragraph break is kept."""
    path = tmp_path / "sloppy.hocr"
    path.write_text(
        "<HTML><BODY><DIV CLASS=ocr_page>"
        "<P class=ocr_par><span class=ocr_line>one<br>two<IMG src=x.png>three</span>"
        "<span class=ocr_line><span class=ocrx_word>caf&eacute;</span><span class=ocrx_word>"
        "&lt;au&gt;&nbsp;lait</span></span>"
        "<p class=ocr_par><span class=ocr_header>Chapter&#32;II</span>"
        "<DIV class=ocr_page><span class=ocr_caption>Fig. 1</SPAN><span class=ocr_textfloat>"
        "float</span><!-- <span class=ocr_line>not text</span> --></BODY></HTML>"
    )
    assert read_one(path).pages == [
        "one two three\ncafé <au> lait\n\nChapter II",
        "Fig. 1\nfloat",
    ]


def test_hocr_meta_charset_does_not_override_the_detected_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin.hocr"
    text = "Été à Besançon, où l’on mange très bien"
    html = f'<html><head><meta charset="utf-8"></head><body><div class="ocr_page">{text}</div>'
    path.write_bytes(html.encode("cp1252"))
    book = read_one(path)
    assert (book.pages, book.extra["encoding"]) == ([text], "cp1252")


# --- Internet Archive _djvu.txt -------------------------------------------------------------


def test_djvu_text_id_and_form_feed_pages(tmp_path: Path) -> None:
    path = tmp_path / "aliceinwonderla00carr_djvu.txt"
    path.write_text("ALICE'S ADVENTURES\n\fCHAPTER I\nDown the Rabbit-Hole\n\f\n")
    (tmp_path / "aliceinwonderla00carr.json").write_text('{"title": "Alice", "language": "en"}')
    book = read_one(path)
    assert (book.id, book.title, book.language) == ("aliceinwonderla00carr", "Alice", "en")
    assert book.pages == ["ALICE'S ADVENTURES\n", "CHAPTER I\nDown the Rabbit-Hole\n"]
    assert book.extra["kind"] == "djvu"


# --- folders of page files ------------------------------------------------------------------


def test_text_page_folder_in_natural_order_with_meta_json(tmp_path: Path) -> None:
    book_dir = tmp_path / "book1"
    book_dir.mkdir()
    for n in (1, 2, 10):
        (book_dir / f"page_{n}.txt").write_text(f"text of page {n}\n")
    (book_dir / "page_3.txt").write_bytes(b"")  # a blank page keeps pagination
    (book_dir / "page_1.jpg").write_bytes(b"\xff\xd8\xff\x00")
    (book_dir / "meta.json").write_text('{"title": "Pages", "author": "Anon", "year": 1900}')
    assert detect_kind(book_dir) == "pages"
    book = read_one(tmp_path)
    assert book.id == "book1"
    assert book.pages == ["text of page 1", "text of page 2", "", "text of page 10"]
    assert (book.title, book.author, book.year, book.source) == (
        "Pages",
        "Anon",
        1900,
        str(book_dir),
    )
    assert book.extra == {"kind": "pages/txt", "encoding": "utf-8", "decode_errors": 0}


def test_page_folder_of_mixed_encodings_records_both(tmp_path: Path) -> None:
    (tmp_path / "0001.txt").write_text("erste Seite")
    (tmp_path / "0002.txt").write_bytes("zweite Seite, schön".encode("utf-16"))
    book = read_one(tmp_path)
    assert book.pages == ["erste Seite", "zweite Seite, schön"]
    assert book.extra["encoding"] == "utf-16,utf-8"


def test_folder_of_books_is_not_a_page_folder(tmp_path: Path) -> None:
    for name in ("alice-pg11.txt", "carol-pg46.txt", "book1.txt", "book2.txt"):
        (tmp_path / name).write_text(name)
    assert detect_kind(tmp_path) == "dir"
    assert [b.id for b in read_all(tmp_path)] == ["alice-pg11", "book1", "book2", "carol-pg46"]


def test_alto_page_folder_with_book_json_and_cross_file_hyphen(tmp_path: Path) -> None:
    part1 = '<String CONTENT="trans" SUBS_TYPE="HypPart1" SUBS_CONTENT="translation"/><HYP/>'
    part2 = '<String CONTENT="lation" SUBS_TYPE="HypPart2" SUBS_CONTENT="translation"/>'
    (tmp_path / "00000002.xml").write_text(alto(alto_page([alto_line(part2, "ends")])))
    (tmp_path / "00000001.xml").write_text(alto(alto_page([alto_line("a", part1)])))
    (tmp_path / "book.json").write_text('{"id": "t-1", "language": "fr"}')
    book = read_one(tmp_path)
    assert (book.id, book.language) == ("t-1", "fr")
    assert book.pages == ["a translation", "ends"]
    assert book.extra["kind"] == "pages/alto"


def test_hocr_page_folder(tmp_path: Path) -> None:
    for n in (1, 2):
        (tmp_path / f"p-{n}.hocr").write_text(
            f"<div class='ocr_page'><span class='ocr_line'>page {n}</span></div>"
        )
    assert read_one(tmp_path).pages == ["page 1", "page 2"]


def test_bad_page_file_fails_the_book_naming_the_page(tmp_path: Path) -> None:
    (tmp_path / "0001.txt").write_text("fine")
    (tmp_path / "0002.txt").write_bytes(b"\x00\x01\x02binary")
    assert read_error(tmp_path) == ReadError(str(tmp_path / "0002.txt"), "binary file, not text")


def test_page_folder_mixing_kinds_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "0001.txt").write_text("text")
    (tmp_path / "0001.xml").write_text(alto(alto_page([alto_line("text")])))
    error = read_error(tmp_path)
    assert error == ReadError(str(tmp_path), "page folder mixes page file kinds: alto, txt")


def test_lone_numbered_file_is_a_book_unless_the_folder_has_metadata(tmp_path: Path) -> None:
    (tmp_path / "10").mkdir()
    (tmp_path / "10" / "10.txt").write_text("\n".join(["line"] * 50))
    book = read_one(tmp_path)
    assert (book.id, len(book.pages), book.extra["kind"]) == ("10", 2, "txt")
    (tmp_path / "10" / "meta.json").write_text("{}")
    book = read_one(tmp_path)
    assert (book.id, len(book.pages), book.extra["kind"]) == ("10", 1, "pages/txt")
