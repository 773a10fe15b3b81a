"""Writers for the formats `readers` reads: text with form feeds (+ `.json` sidecar),
JSONL records, ALTO XML and hOCR (each with a sidecar for the metadata they cannot carry)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import IO, Any

FORMATS = ("txt", "jsonl", "alto", "hocr")
_CHAR_W, _LINE_H = 18, 40  # nominal glyph box in pixels for the coordinates layouts require


def _sidecar(path: Path, meta: dict[str, Any]) -> None:
    path.with_suffix(".json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")


def write_txt(path: Path, meta: dict[str, Any], pages: list[str]) -> None:
    """Pages separated by form feeds; metadata in a same-stem `.json` sidecar."""
    path.write_text("\f".join(pages), encoding="utf-8")
    _sidecar(path, meta)


def write_jsonl_record(fh: IO[str], meta: dict[str, Any], pages: list[str]) -> None:
    """One JSONL record: the metadata fields plus ``pages``."""
    fh.write(json.dumps({**meta, "pages": pages}, ensure_ascii=False) + "\n")


def _blocks(page: str) -> list[list[str]]:
    """Paragraph blocks (lists of non-empty lines) of a page."""
    blocks: list[list[str]] = [[]]
    for line in page.split("\n"):
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def write_alto(path: Path, meta: dict[str, Any], pages: list[str]) -> None:
    """ALTO v4: Page / PrintSpace / TextBlock / TextLine / String with nominal coordinates."""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#">\n'
        "<Description><MeasurementUnit>pixel</MeasurementUnit></Description>\n<Layout>\n"
    ]
    for p, page in enumerate(pages, 1):
        out.append(f'<Page ID="p{p}" PHYSICAL_IMG_NR="{p}" WIDTH="1600" HEIGHT="2400">')
        out.append('<PrintSpace HPOS="0" VPOS="0" WIDTH="1600" HEIGHT="2400">\n')
        y = 0
        for b, block in enumerate(_blocks(page), 1):
            out.append(f'<TextBlock ID="p{p}_b{b}">')
            for line in block:
                x = 0
                strings = []
                for word in line.split():
                    w = len(word) * _CHAR_W
                    strings.append(
                        f'<String CONTENT={_attr(word)} HPOS="{x}" VPOS="{y}" '
                        f'WIDTH="{w}" HEIGHT="{_LINE_H}"/>'
                    )
                    x += w + _CHAR_W
                out.append(f'<TextLine VPOS="{y}">' + "<SP/>".join(strings) + "</TextLine>\n")
                y += _LINE_H
            out.append("</TextBlock>\n")
            y += _LINE_H
        out.append("</PrintSpace></Page>\n")
    out.append("</Layout>\n</alto>\n")
    path.write_text("".join(out), encoding="utf-8")
    _sidecar(path, meta)


def _attr(s: str) -> str:
    return '"' + escape(s, quote=True) + '"'


def write_hocr(path: Path, meta: dict[str, Any], pages: list[str]) -> None:
    """hOCR: ocr_page / ocr_par / ocr_line / ocrx_word with nominal bounding boxes."""
    out = [
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"/>'
        f"<title>{escape(str(meta.get('title') or ''))}</title>"
        '<meta name="ocr-system" content="bookdup-generate"/>'
        '<meta name="ocr-capabilities" content="ocr_page ocr_par ocr_line ocrx_word"/>'
        "</head><body>\n"
    ]
    for p, page in enumerate(pages):
        out.append(
            f'<div class="ocr_page" id="page_{p + 1}" title="bbox 0 0 1600 2400; ppageno {p}">\n'
        )
        y = 0
        for block in _blocks(page):
            out.append('<p class="ocr_par">')
            for line in block:
                x = 0
                words = []
                for word in line.split():
                    w = len(word) * _CHAR_W
                    words.append(
                        f'<span class="ocrx_word" title="bbox {x} {y} {x + w} {y + _LINE_H}">'
                        f"{escape(word, quote=False)}</span>"
                    )
                    x += w + _CHAR_W
                out.append(
                    f'<span class="ocr_line" title="bbox 0 {y} {x} {y + _LINE_H}">'
                    + " ".join(words)
                    + "</span>\n"
                )
                y += _LINE_H
            out.append("</p>\n")
            y += _LINE_H
        out.append("</div>\n")
    out.append("</body></html>\n")
    path.write_text("".join(out), encoding="utf-8")
    _sidecar(path, meta)
