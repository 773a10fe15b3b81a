"""run_index on a real Elasticsearch node: every input kind, re-runs, bad input, kill/resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bookdup.features import FEATURES_VERSION
from indexer import index_worker
from indexer.index_job import IndexOptions, raw_hash, run_index
from readers import Source, read_source
from store.iterate import iter_documents
from store.runs import get_run, last_runs
from store.schema import IndexNames, drop_indices
from tests.fixtures_books import (
    ALICE_DE,
    PRIDE,
    REPO,
    SCARLET,
    build_corpus,
    gutenberg_body,
    many_books,
    paginate,
    word_slice,
    write_alto,
    write_jsonl,
    write_txt,
)

OPTIONS = IndexOptions(workers=2)


def _docs(client, names: IndexNames, fields: list[str] | None = None) -> dict[str, dict]:
    client.indices.refresh(index=names.books)
    return {h["_id"]: h for h in iter_documents(client, names.books, source=fields, page_size=100)}


def _versions(client, names: IndexNames) -> dict[str, int]:
    client.indices.refresh(index=names.books)
    response = client.search(
        index=names.books, size=1000, version=True, _source=["index_run"], query={"match_all": {}}
    )
    return {h["_id"]: (h["_version"], h["_source"]["index_run"]) for h in response["hits"]["hits"]}


def _segments(client, names: IndexNames) -> list[tuple[int, int]]:
    """(live docs, deleted docs) of each segment of the books index's shards."""
    shards = client.indices.segments(index=names.books)["indices"]
    return [
        (segment["num_docs"], segment["deleted_docs"])
        for index in shards.values()
        for copies in index["shards"].values()
        for copy in copies
        for segment in copy["segments"].values()
    ]


@pytest.fixture(scope="module")
def indexed(es_client, tmp_path_factory):
    """The ground-truth corpus (every input kind) indexed once into its own prefix."""
    corpus = build_corpus(tmp_path_factory.mktemp("corpus"))
    names = IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}")
    summary = run_index(es_client, names, corpus.paths, OPTIONS)
    yield corpus, names, summary
    drop_indices(es_client, names)


def test_every_input_kind_is_indexed_with_its_features(es_client, indexed) -> None:
    corpus, names, summary = indexed
    assert summary.failures == []
    assert summary.as_counts() == {
        "read": len(corpus.ids),
        "indexed": len(corpus.ids),
        "unchanged": 0,
        "failed": 0,
        "warnings": 0,
        "resumed_from": None,
    }
    assert set(corpus.kinds.values()) >= {"txt", "jsonl", "alto", "hocr", "pages", "djvu"}
    docs = _docs(es_client, names)
    assert sorted(docs) == corpus.ids
    for book_id, hit in docs.items():
        doc = hit["_source"]
        assert doc["book_id"] == book_id
        assert doc["language"] == corpus.languages[book_id], book_id
        assert doc["language_confidence"] > 0.5
        assert doc["extra"]["kind"].split("/")[0] == corpus.kinds[book_id]
        # 16 bands, one keyword term each; thousands of unique-word hashes
        assert len(doc["bands"]) >= 8 and all("_" in b for b in doc["bands"])
        assert doc["n_unique"] > 500 and len(doc["uniq"]) == len(set(doc["uniq"]))
        assert len(doc["uniq"]) >= doc["n_unique"] * 0.9  # modulus 1: (almost) every hash
        assert doc["n_words"] > 3000 and doc["n_pages"] >= 10
        assert doc["flags"] == []
        assert {"unique_words", "minhash", "page_minhashes"} <= set(doc["features"])
        assert doc["index_run"] == summary.run_id
        # before any dedup a book is its own cluster
        assert doc["edition_cluster"] == doc["work_cluster"]
    assert docs[ALICE_DE]["_source"]["declared_language"] == "de"
    assert docs[PRIDE]["_source"]["title"] == "Pride and Prejudice"
    # identical text in another format extracts to the very same content
    assert docs[PRIDE]["_source"]["content_hash"] == docs["pride-exact"]["_source"]["content_hash"]

    run = get_run(es_client, names, summary.run_id)
    assert run["status"] == "finished" and run["kind"] == "index"
    assert run["counts"] == summary.as_counts()


def test_rerun_changes_nothing_and_a_changed_file_is_reindexed(es_client, indexed) -> None:
    corpus, names, first = indexed
    before = _versions(es_client, names)
    assert {run for _, run in before.values()} == {first.run_id}

    again = run_index(es_client, names, corpus.paths, OPTIONS)
    assert again.as_counts() == {
        "read": len(corpus.ids),
        "indexed": 0,
        "unchanged": len(corpus.ids),
        "failed": 0,
        "warnings": 0,
        "resumed_from": None,
    }
    assert _versions(es_client, names) == before  # not one document was rewritten

    pages_before = es_client.get(index=names.books, id=SCARLET)["_source"]["n_pages"]
    scarlet = corpus.root / f"{SCARLET}.txt"
    extra = " ".join(word_slice(gutenberg_body("scarletletter-en-pg33"), 300, 40000))
    scarlet.write_text(scarlet.read_text() + extra + "\f", encoding="utf-8")
    changed = run_index(es_client, names, corpus.paths, OPTIONS)
    assert (changed.indexed, changed.unchanged, changed.failures) == (1, len(corpus.ids) - 1, [])
    after = _versions(es_client, names)
    assert after[SCARLET] == (before[SCARLET][0] + 1, changed.run_id)
    assert {k: v for k, v in after.items() if k != SCARLET} == {
        k: v for k, v in before.items() if k != SCARLET
    }
    doc = es_client.get(index=names.books, id=SCARLET)["_source"]
    assert doc["n_pages"] == pages_before + 1
    # merged after the write: every live book in one segment (the candidate queries look
    # their terms up once); the old version is kept as a soft delete, as before the merge
    assert [live for live, _deleted in _segments(es_client, names)] == [len(corpus.ids)]


# --- bad input -----------------------------------------------------------------------------


def _small_book(name: str, skip: int) -> list[str]:
    return paginate(word_slice(gutenberg_body(name), 2500, skip), 40)


def test_bad_inputs_are_reported_per_file_and_never_stop_the_job(
    es_client, index_names, tmp_path: Path
) -> None:
    good1 = write_txt(tmp_path / "good1.txt", _small_book("walden-en-pg205", 3000))
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    binary = tmp_path / "scan.txt"
    binary.write_bytes(bytes(range(256)) * 40)
    jsonl = write_jsonl(
        tmp_path / "batch.jsonl",
        [{"id": "jsonl-good", "pages": _small_book("wuthering-en-pg768", 3000)}],
    )
    with jsonl.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "broken", "text": "unterminated\n')  # line 2
        fh.write(json.dumps({"id": "no-text", "title": "metadata only"}) + "\n")  # line 3
    bad_xml = tmp_path / "bad.xml"
    good_alto = write_alto(tmp_path / "alto.xml", _small_book("scarletletter-en-pg33", 3000))
    bad_text = good_alto.read_text().replace("</TextLine>", "</TextLin>", 1)
    bad_xml.write_text(bad_text)
    bad_line = next(n for n, t in enumerate(bad_text.split("\n"), 1) if "</TextLin>" in t)
    first = write_txt(tmp_path / "dup-a.txt", _small_book("pride-en-pg1342", 3000), id="same")
    second = write_txt(tmp_path / "dup-b.txt", _small_book("pride-en-pg1342", 20000), id="same")
    paths = [good1, empty, binary, jsonl, bad_xml, good_alto, first, second]

    summary = run_index(es_client, index_names, paths, OPTIONS)

    failures = dict(summary.failures)
    assert failures == {
        str(empty): "empty file",
        str(binary): "binary file, not text",
        f"{jsonl}:2": failures[f"{jsonl}:2"],
        f"{jsonl}:3": "record has neither 'pages' nor 'text'",
        f"{bad_xml}:{bad_line}": failures[f"{bad_xml}:{bad_line}"],
        str(second): f"duplicate id 'same': already read from {first}",
    }
    assert failures[f"{jsonl}:2"].startswith("malformed JSON: ")
    assert failures[f"{bad_xml}:{bad_line}"].startswith("malformed XML: mismatched tag")
    assert summary.as_counts() == {
        "read": 10,
        "indexed": 4,
        "unchanged": 0,
        "failed": 6,
        "warnings": 0,
        "resumed_from": None,
    }
    docs = _docs(es_client, index_names, ["source", "n_words"])
    assert sorted(docs) == ["alto", "good1", "jsonl-good", "same"]
    assert docs["same"]["_source"]["source"] == str(first)  # the first one stays

    run = get_run(es_client, index_names, summary.run_id)
    assert {(s["file"], s["reason"]) for s in run["skipped"]} == set(summary.failures)

    # a later run with only the second file still refuses to overwrite the first one's book
    later = run_index(es_client, index_names, [second], OPTIONS)
    assert later.failures == [(str(second), f"duplicate id 'same': already indexed from {first}")]
    doc = es_client.get(index=index_names.books, id="same")["_source"]
    assert (doc["source"], doc["n_words"]) == (str(first), docs["same"]["_source"]["n_words"])


def test_fixing_a_jsonl_line_does_not_turn_the_following_records_into_duplicates(
    es_client, index_names, tmp_path: Path
) -> None:
    """Deleting a malformed line shifts the line numbers (part of a JSONL book's source)."""
    records = [
        {"id": f"rec-{i}", "pages": _small_book("walden-en-pg205", 3000 + 2500 * i)}
        for i in range(3)
    ]
    jsonl = tmp_path / "export.jsonl"
    lines = [json.dumps(records[0]), "{not json", json.dumps(records[1]), json.dumps(records[2])]
    jsonl.write_text("\n".join(lines) + "\n")
    first = run_index(es_client, index_names, [jsonl], OPTIONS)
    assert (first.indexed, [w for w, _ in first.failures]) == (3, [f"{jsonl}:2"])

    del lines[1]
    jsonl.write_text("\n".join(lines) + "\n")
    second = run_index(es_client, index_names, [jsonl], OPTIONS)
    assert second.as_counts() == {
        "read": 3,
        "indexed": 0,
        "unchanged": 3,
        "failed": 0,
        "warnings": 0,
        "resumed_from": None,
    }


# --- reading in the workers ----------------------------------------------------------------


def _task() -> index_worker.Task:
    options = IndexOptions(workers=1)
    return index_worker.Task(
        options.lines_per_page, options.encoding, options.uniq_modulus, options.params
    )


def test_worker_answers_unchanged_from_the_prefetched_hash_without_extracting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_txt(tmp_path / "walden.txt", _small_book("walden-en-pg205", 3000))
    source = Source(path, "txt")
    (book,) = read_source(source)
    extracted: list[str] = []
    monkeypatch.setattr(
        index_worker, "extract", lambda book, *_: extracted.append(book.id) or {"book_id": book.id}
    )

    stored = {
        "raw_hash": raw_hash(book),
        "source": "elsewhere/walden.txt",  # the file moved
        "features_version": FEATURES_VERSION,
    }
    unchanged = index_worker.read_and_build(source, stored, _task())
    assert (unchanged.book_id, unchanged.verdict, unchanged.checked) == (
        "walden",
        "unchanged",
        True,
    )
    assert unchanged.result is None and extracted == []

    taken = {"raw_hash": "0" * 40, "source": "other.txt"}
    refused = index_worker.read_and_build(source, taken, _task())
    assert refused.verdict == "duplicate id 'walden': already indexed from other.txt"
    assert extracted == []

    changed = index_worker.read_and_build(source, {"raw_hash": "0" * 40}, _task())
    walden = index_worker.Document.of({"book_id": "walden"})
    assert (changed.verdict, changed.result, extracted) == (None, walden, ["walden"])

    # the same file, stored by a version that lacked the neighbour contexts: extracted again
    old = {k: v for k, v in stored.items() if k != "features_version"}
    upgraded = index_worker.read_and_build(source, old, _task())
    assert (upgraded.verdict, extracted) == (None, ["walden", "walden"])

    # a sidecar naming another id: the prefetched document was the wrong one, the main
    # process checks the real id after the fact
    path.with_suffix(".json").write_text(json.dumps({"id": "walden-1854"}))
    renamed = index_worker.read_and_build(source, stored, _task())
    assert (renamed.book_id, renamed.checked, renamed.verdict) == ("walden-1854", False, None)
    assert renamed.result == index_worker.Document.of({"book_id": "walden-1854"})


def test_worker_reports_bad_input_and_reader_crashes_as_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hocr = tmp_path / "scan.hocr"
    hocr.write_text("<html><body><p>no pages here</p></body></html>")
    outcome = index_worker.read_and_build(Source(hocr, "hocr"), None, _task())
    assert (outcome.where, outcome.book_id) == (str(hocr), None)
    assert outcome.verdict == "no ocr_page element in hOCR file"

    def broken(*_args, **_kwargs):
        raise RuntimeError("reader bug")

    monkeypatch.setattr(index_worker, "read_source", broken)
    outcome = index_worker.read_and_build(Source(hocr, "hocr"), None, _task())
    assert outcome.verdict == "read failed: RuntimeError: reader bug"


def test_rerun_of_books_with_ids_from_metadata_is_unchanged(
    es_client, index_names, tmp_path: Path
) -> None:
    """Ids that are not the file stem (sidecar, meta.json, JSONL) miss the prefetch by stem and
    are checked after the fact: still unchanged, still refused when another file holds them."""
    txt = write_txt(tmp_path / "b1.txt", _small_book("walden-en-pg205", 3000), id="walden-1854")
    folder = tmp_path / "vol"
    folder.mkdir()
    for n, page in enumerate(_small_book("pride-en-pg1342", 3000)[:8], start=1):
        (folder / f"{n:04d}.txt").write_text(page)
    (folder / "meta.json").write_text(json.dumps({"id": "pride-vol"}))
    jsonl = write_jsonl(
        tmp_path / "more.jsonl",
        [{"id": "frank", "pages": _small_book("frankenstein-en-1831-pg84", 3000)}],
    )
    paths = [txt, folder, jsonl]
    first = run_index(es_client, index_names, paths, OPTIONS)
    assert first.as_counts() == {
        "read": 3,
        "indexed": 3,
        "unchanged": 0,
        "failed": 0,
        "warnings": 0,
        "resumed_from": None,
    }
    before = _versions(es_client, index_names)
    assert sorted(before) == ["frank", "pride-vol", "walden-1854"]

    again = run_index(es_client, index_names, paths, OPTIONS)
    assert again.as_counts() == {
        "read": 3,
        "indexed": 0,
        "unchanged": 3,
        "failed": 0,
        "warnings": 0,
        "resumed_from": None,
    }
    assert _versions(es_client, index_names) == before

    copy = write_txt(tmp_path / "b2.txt", _small_book("scarletletter-en-pg33", 3000), id="frank")
    later = run_index(es_client, index_names, [copy], OPTIONS)
    assert later.failures == [(str(copy), f"duplicate id 'frank': already indexed from {jsonl}:1")]


# --- killed and resumed --------------------------------------------------------------------

KILLED_JOB = """
import sys
import time
from pathlib import Path
from store.connection import ConnectionSettings, connect
from indexer.index_job import IndexOptions, run_index
from store.schema import IndexNames
paths = [Path(p) for p in sys.argv[2:]]
client = connect(ConnectionSettings.from_env())
options = IndexOptions(workers=1, bulk_chunk=2)
# a slow job whatever the machine: ~0.1 s per book, so the test can kill it half way
run_index(client, IndexNames(sys.argv[1]), paths, options, progress=lambda _: time.sleep(0.1))
"""


def test_a_killed_job_resumes_and_indexes_every_book_exactly_once(
    es_client, index_names, tmp_path: Path
) -> None:
    paths = many_books(tmp_path / "books", 30, words=6000)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    job = subprocess.Popen(
        [sys.executable, "-c", KILLED_JOB, index_names.prefix, *map(str, paths)],
        cwd=REPO,
        env=env,
        start_new_session=True,  # its own process group: the pool workers die with it
    )
    deadline = time.monotonic() + 90
    count = 0
    try:
        while time.monotonic() < deadline and job.poll() is None:
            es_client.indices.refresh(index=index_names.books)
            count = es_client.count(index=index_names.books)["count"]
            if count >= 4:
                break
            time.sleep(0.05)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
        job.wait(timeout=30)
    assert job.returncode == -signal.SIGKILL, "the job ended before it could be killed"
    time.sleep(0.5)  # a bulk request the job sent just before dying is still applied
    es_client.indices.refresh(index=index_names.books)
    done_before = es_client.count(index=index_names.books)["count"]
    assert 4 <= done_before < len(paths)

    resumed = run_index(es_client, index_names, paths, OPTIONS)
    assert resumed.failures == []
    assert resumed.read == len(paths)
    assert resumed.unchanged == done_before
    assert resumed.indexed == len(paths) - done_before
    es_client.indices.refresh(index=index_names.books)
    assert es_client.count(index=index_names.books)["count"] == len(paths)
    ids = {h["_id"] for h in iter_documents(es_client, index_names.books, source=False)}
    assert ids == {p.stem for p in paths}
    runs = {r["run_id"]: r["status"] for r in _runs(es_client, index_names)}
    assert runs[resumed.run_id] == "finished"
    # the killed run never finished; the rerun marked it interrupted and says it resumed it
    assert sorted(runs.values()) == ["finished", "interrupted"]
    assert resumed.resumed_from is not None and runs[resumed.resumed_from] == "interrupted"


def _runs(client, names: IndexNames) -> list[dict]:
    client.indices.refresh(index=names.runs)
    return [h["_source"] for h in iter_documents(client, names.runs)]


def _children(pid: int) -> set[int]:
    """Pids whose parent is ``pid`` (Linux /proc)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_die_with_a_killed_job_and_its_run_reads_interrupted(
    es_client, index_names, tmp_path: Path
) -> None:
    """SIGKILL to the job's process alone (not its group): the pool's workers must not outlive
    it, and `bookdup status` must not call the run "running" forever."""
    paths = many_books(tmp_path / "books", 30, words=6000)
    script = KILLED_JOB.replace("workers=1", "workers=2")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    job = subprocess.Popen(
        [sys.executable, "-c", script, index_names.prefix, *map(str, paths)], cwd=REPO, env=env
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and job.poll() is None and len(workers) < 2:
        workers |= _children(job.pid)
        time.sleep(0.05)
    try:
        assert workers, "the job started no worker process"
        running = [r for r in last_runs(es_client, index_names) if r["kind"] == "index"]
        assert [r["status"] for r in running] == ["running"]
    finally:
        os.kill(job.pid, signal.SIGKILL)
        job.wait(timeout=30)
    gone_by = time.monotonic() + 10
    while time.monotonic() < gone_by and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "worker processes outlived the killed job"
    (killed,) = [r for r in last_runs(es_client, index_names) if r["kind"] == "index"]
    assert killed["status"] == "interrupted"
    assert killed["process"]["pid"] == job.pid


def test_a_guessed_encoding_is_indexed_with_a_warning_naming_the_file(
    es_client, index_names, tmp_path: Path
) -> None:
    text = "Il était une fois une forêt où vivait un chêne âgé. " * 200
    bad = tmp_path / "cp1252.txt"
    bad.write_bytes(text.encode("cp1252"))
    good = tmp_path / "utf8.txt"
    good.write_text(text.replace("chêne", "hêtre"), encoding="utf-8")
    summary = run_index(es_client, index_names, [bad, good], OPTIONS)
    assert summary.indexed == 2 and summary.failures == []
    ((where, warning),) = summary.warnings
    assert where == str(bad) and "not valid UTF-8" in warning
    run = get_run(es_client, index_names, summary.run_id)
    assert run is not None and run["warnings"] == [{"file": str(bad), "warning": warning}]


def _comparable(client, names: IndexNames) -> dict[str, dict]:
    """Every books document's ``_source``, without what differs between two runs by design."""
    docs = _docs(client, names)
    drop = {"index_run", "indexed_at"}
    return {i: {k: v for k, v in h["_source"].items() if k not in drop} for i, h in docs.items()}


def test_one_and_two_workers_store_the_same_documents(es_client, tmp_path: Path) -> None:
    """Documents encoded in the workers (`index_worker.Document`) and streamed as bytes: one
    worker or two store the same ``_source`` for every book (the run's fields aside), and
    the run's fields come last, as when the job added them to the document itself."""
    corpus = build_corpus(tmp_path / "corpus")
    one, two = (IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}") for _ in "ab")
    try:
        run_index(es_client, one, corpus.paths, IndexOptions(workers=1, bulk_chunk=3))
        summary = run_index(es_client, two, corpus.paths, IndexOptions(workers=2))
        want = _comparable(es_client, one)
        assert sorted(want) == corpus.ids and _comparable(es_client, two) == want
        stored = _docs(es_client, two)[corpus.ids[0]]["_source"]
        assert list(stored)[-2:] == ["index_run", "indexed_at"]
        assert stored["index_run"] == summary.run_id
    finally:
        drop_indices(es_client, one)
        drop_indices(es_client, two)


def test_extraction_on_dask_writes_the_process_pools_documents(es_client, tmp_path: Path) -> None:
    """``index --scheduler local --workers 2`` (issue 31): the ground-truth corpus and a few bad
    files give the same documents, bit for bit, and the same per-file failures as the process
    pool; the LocalCluster started for the job is gone after it."""
    pytest.importorskip("distributed")
    corpus = build_corpus(tmp_path / "corpus")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    dup = write_txt(tmp_path / "dup.txt", _small_book("walden-en-pg205", 3000), id=PRIDE)
    paths = [*corpus.paths, empty, dup]
    pool_names, dask_names = (IndexNames(prefix=f"test-{uuid.uuid4().hex[:10]}") for _ in "ab")
    try:
        pool = run_index(es_client, pool_names, paths, OPTIONS)
        dask = run_index(es_client, dask_names, paths, IndexOptions(workers=2, scheduler="local"))
        assert dask.failures == pool.failures and len(pool.failures) == 2
        assert dask.as_counts() == pool.as_counts()
        assert dask.indexed == len(corpus.ids)
        want = _comparable(es_client, pool_names)
        assert sorted(want) == corpus.ids
        assert _comparable(es_client, dask_names) == want
    finally:
        drop_indices(es_client, pool_names)
        drop_indices(es_client, dask_names)
