"""The read side's collection state: kept while the collection is unchanged, read again after a
book is indexed (the server checks it every ``ttl`` seconds)."""

from __future__ import annotations

from pathlib import Path

from indexer.index_job import IndexOptions, run_index
from query.context import ReadSide
from tests.fixtures_books import gutenberg_body, paginate, word_slice, write_txt


def _book(folder: Path, name: str, skip: int) -> Path:
    lines = word_slice(gutenberg_body("pride-en-pg1342"), 3000, skip_words=skip)
    return write_txt(folder / f"{name}.txt", paginate(lines, 40), title=name)


def test_state_is_kept_until_a_book_is_indexed(es_client, index_names, tmp_path: Path) -> None:
    options = IndexOptions(workers=1)
    run_index(es_client, index_names, [_book(tmp_path, "one", 0)], options)
    rs = ReadSide(es_client, index_names, ttl=0.0)  # check the collection on every call
    first = rs.state()
    first.cache.get_many(["one"])  # warm: a kept state keeps its cache
    assert rs.state() is first  # nothing changed: the same state, cache and all
    assert "one" in first.cache.get_many(["one"])

    run_index(es_client, index_names, [_book(tmp_path, "two", 5000)], options)
    second = rs.state()
    assert second is not first
    assert second.stop.n_books == 2 and first.stop.n_books == 1
    assert rs.state() is second
