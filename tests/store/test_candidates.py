"""Candidate-query building blocks: the max-df cut against the real node, the consistent sample."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bookdup.arrays import distinct
from bookdup.features import looks_noisy
from store import candidates
from store.bulk import bulk_write
from store.candidates import SAME_UNIQ, high_df_terms, sample_terms


@pytest.mark.parametrize("page", [50_000, 4])
def test_high_df_terms_finds_every_key_above_max_df(es_client, index_names, monkeypatch, page):
    # 40 keys: key k is held by k % 8 books; max_df 4 -> keys with df 5..7 are boilerplate.
    # A 4-bucket page forces the partitioned path, which must still return every such key.
    monkeypatch.setattr(candidates, "_AGG_BUCKETS", page)
    docs = [
        {"book_id": f"b{i}", "uniq": [f"k{k:02d}" for k in range(40) if i < k % 8]}
        for i in range(8)
    ]
    actions = [{"_index": index_names.books, "_id": d["book_id"], "_source": d} for d in docs]
    assert not bulk_write(es_client, actions, refresh="wait_for").failures
    want = {f"k{k:02d}" for k in range(40) if k % 8 > 4}
    assert high_df_terms(es_client, index_names.books, "uniq", 4) == want


def test_sample_is_consistent_and_skips_stop_terms() -> None:
    rng = np.random.default_rng(3)
    shared = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32)
    a = np.concatenate([shared, rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)])
    b = np.concatenate([shared, rng.integers(0, 2**32, 500, dtype=np.uint64).astype(np.uint32)])
    stop = np.sort(shared[:100])
    ta, tb = sample_terms(a, stop, 400), sample_terms(b, stop, 400)
    assert 200 <= len(ta) <= 400 and len(set(ta)) == len(ta)
    assert not {f"{h:08x}" for h in stop.tolist()} & set(ta)
    # the same words are sampled from both books wherever both samples reach them
    ha, hb = {int(t, 16) for t in ta}, {int(t, 16) for t in tb}
    coarse = ha if len(a) > len(b) else hb
    assert coarse & set(shared.tolist()) <= ha & hb


def test_capped_candidates_break_ties_by_book_id_not_document_order(es_client, index_names):
    """Twenty books tie with the query; the cap keeps the five smallest ids, before and after
    the first five are rewritten (which moves them to the end of the document order)."""
    books = [f"b{i:02d}" for i in range(20)]
    terms = ["t1", "t2", "t3"]

    def write(ids: list[str]) -> None:
        actions = [
            {"_index": index_names.books, "_id": i, "_source": {"book_id": i, "uniq": terms}}
            for i in ids
        ]
        assert not bulk_write(es_client, actions, refresh="wait_for").failures

    write(list(reversed(books)))
    body = candidates.CandidateQuery("query", "uniq", terms, 2, 5).body()
    first = es_client.search(index=index_names.books, **body).body
    write(books[:5])
    again = es_client.search(index=index_names.books, **body).body
    assert candidates.hits_with_scores(first) == candidates.hits_with_scores(again)
    assert candidates.hits_with_scores(first) == [(b, 3.0) for b in books[:5]]
    # the ids come from doc values: no hit's stored fields (its whole source) were read
    assert all("_id" not in hit and "_source" not in hit for hit in first["hits"]["hits"])


def _as_dict(weights: candidates.TermWeights) -> dict[int, float]:
    assert np.all(np.diff(weights.hashes.astype(np.int64)) > 0)  # distinct, ascending
    return dict(zip(weights.hashes.tolist(), weights.weights.tolist(), strict=True))


def test_translation_weights_share_one_unit_per_source_word() -> None:
    # word 0 has three translations (5, 6, 7), word 1 one (5 again), word 2 is kept as is (9)
    hashes = np.array([5, 6, 7, 5, 9], dtype=np.uint32)
    source = np.array([0, 0, 0, 1, 2])
    assert _as_dict(candidates.translation_weights(hashes, source)) == {
        5: 1.0,
        6: 1 / 3,
        7: 1 / 3,
        9: 1.0,
    }
    assert _as_dict(candidates.translation_weights(hashes[:0], source[:0])) == {}


def test_translation_weights_are_each_hash_s_largest_weight() -> None:
    """Issue 28: the hashes are sorted without stability; each distinct hash still gets the
    largest weight among its copies, as a dictionary computes it."""
    rng = np.random.default_rng(28)
    source = np.sort(rng.integers(0, 3000, 20_000))
    hashes = rng.integers(0, 2000, source.size).astype(np.uint32)  # many repeats
    kept = rng.random(3000) < 0.1
    expected: dict[int, float] = {}
    per_word = np.bincount(source)
    for h, w in zip(hashes.tolist(), source.tolist(), strict=True):
        weight = 0.05 if kept[w] else 1.0 / per_word[w]
        expected[h] = max(expected.get(h, 0.0), weight)
    assert _as_dict(candidates.translation_weights(hashes, source, kept, 0.05)) == expected


def test_an_untranslated_word_weighs_less_than_any_translation() -> None:
    """A word the lexicon lacks (a name, or an OCR-garbled word no other book holds) weighs
    less than every translated word (the stem queries: tests/bookdup/test_query_terms.py)."""
    hashes = np.array([5, 6, 7, 5, 9], dtype=np.uint32)
    source = np.array([0, 0, 0, 1, 2])
    kept = np.array([False, False, True])
    weights = candidates.translation_weights(hashes, source, kept, 0.05)
    assert _as_dict(weights) == {5: 1.0, 6: 1 / 3, 7: 1 / 3, 9: 0.05}


def test_weighted_query_ranks_by_weight_and_floors_on_count(es_client, index_names):
    """A long book holding four alternatives of common words (1/4 each) ranks under a book
    holding two single-translation words; the count floor still drops a one-term book."""
    docs = {
        "long": ["c1", "c2", "c3", "c4"],
        "true": ["s1", "s2"],
        "one": ["s1"],
    }
    actions = [
        {"_index": index_names.books, "_id": i, "_source": {"book_id": i, "uniq": terms}}
        for i, terms in docs.items()
    ]
    assert not bulk_write(es_client, actions, refresh="wait_for").failures
    terms = ["c1", "c2", "c3", "c4", "s1", "s2"]
    weights = [0.25, 0.25, 0.25, 0.25, 1.0, 1.0]
    weighted = candidates.CandidateQuery("q", "uniq", terms, 2, 10, weights=weights).body()
    counted = candidates.CandidateQuery("q", "uniq", terms, 2, 10).body()
    hits = candidates.hits_with_scores(es_client.search(index=index_names.books, **weighted).body)
    assert hits == [("true", 2.0), ("long", 1.0)]
    hits = candidates.hits_with_scores(es_client.search(index=index_names.books, **counted).body)
    assert hits == [("long", 4.0), ("true", 2.0)]


def test_sample_respects_the_indexed_modulus() -> None:
    rng = np.random.default_rng(5)
    hashes = rng.integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32)
    terms = sample_terms(hashes, np.zeros(0, np.uint32), 4000, min_modulus=2)
    # the target is not reached, yet only hashes the field indexed (even ones) are queried
    assert terms and all(int(t, 16) % 2 == 0 for t in terms)
    assert len(terms) == int(np.unique(hashes[hashes % 2 == 0]).size)
    with pytest.raises(ValueError, match="power of two"):
        sample_terms(hashes, np.zeros(0, np.uint32), 400, min_modulus=3)


class _NoLexicons:
    def targets(self, source: str) -> list[str]:
        return []

    def get(self, source: str, target: str) -> None:
        return None


def _kinds(stop: candidates.StopLists, f, **params_: int) -> dict[str, dict]:
    params = candidates.CandidateParams(**params_)
    searcher = candidates.CandidateSearcher(None, "books", params, stop, _NoLexicons(), {"en"})  # type: ignore[arg-type]
    return {kind: q.body() for kind, q in searcher.labelled_queries(f)}


def test_same_language_queries_fall_back_to_unique_words_where_winnowed_keys_are_missing():
    """A book with winnowed keys asks them for its language and unique words for the others;
    a book without them (indexed before books v4), an index where some books lack them, or a
    lookup without the key table (``bookdup match``) query unique words in every language."""
    import dataclasses

    from bookdup.features import extract_features
    from bookdup.model import Book
    from bookdup.winnow import KeyFrequencies

    rng = np.random.default_rng(5)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, 7)) for _ in range(3000)]
    pages = [" ".join(words[:1500]), " ".join(words[1500:])]
    f = extract_features(Book(id="a", pages=pages, language="en"))
    assert f.winnows.size > 100 and f.unique.hashes.size > 1000
    # every key held by the book and one other, of two books in all
    table = KeyFrequencies(f.winnows, np.full(f.winnows.size, 2, np.uint32), n_books=2)

    def stop(n_books: int, winnows: KeyFrequencies | None) -> candidates.StopLists:
        empty = np.zeros(0, np.uint32)
        return candidates.StopLists(n_books, 50, frozenset(), empty, empty, empty, winnows)

    def excluded(body: dict) -> list:
        return [c for c in body["query"]["bool"]["must_not"] if "term" in c]

    keyed = _kinds(stop(2, table), f)
    assert "winnows" in keyed and excluded(keyed["uniq"]) == [{"term": {"language": "en"}}]
    some_unkeyed = _kinds(stop(3, table), f)  # a third book has no winnowed keys
    assert "winnows" in some_unkeyed and excluded(some_unkeyed["uniq"]) == []
    # across languages it keeps fewer hits than where it stands in for the text keys
    params = candidates.CandidateParams()
    assert keyed["uniq"]["size"] == params.across_uniq_hits < params.max_candidates
    assert some_unkeyed["uniq"]["size"] == params.max_candidates
    unkeyed = dataclasses.replace(f, winnows=np.zeros(0, np.uint32))
    for kinds in (_kinds(stop(2, None), f), _kinds(stop(2, table), unkeyed)):
        assert "winnows" not in kinds and excluded(kinds["uniq"]) == []
    # issue 27's switch: without it bands go only where winnowed keys cannot stand in for them
    assert list(keyed) == ["bands", "winnows", SAME_UNIQ, "uniq"]
    cut = {"bands_with_winnows": False}
    assert list(_kinds(stop(2, table), f, **cut)) == ["winnows", SAME_UNIQ, "uniq"]
    assert list(_kinds(stop(2, table), unkeyed, **cut)) == ["bands", "uniq"]
    assert list(_kinds(stop(2, None), f, **cut)) == ["bands", "uniq"]
    assert list(_kinds(stop(2, table), f, same_language_uniq_hits=0)) == [
        "bands",
        "winnows",
        "uniq",
    ]


def _keyed_book(seed: int, common: int = 0) -> tuple[Any, candidates.StopLists]:
    """An English book of 3,000 random words (``common`` of them drawn from 50 words it
    repeats, the rest each seen once), and stop lists of a two-book collection where another
    book holds each of its winnowed keys."""
    from bookdup.features import extract_features
    from bookdup.model import Book
    from bookdup.winnow import KeyFrequencies

    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, 7)) for _ in range(3000)]
    repeated = words[:50]
    words[:common] = [repeated[i] for i in rng.integers(0, 50, common)]
    rng.shuffle(words)
    f = extract_features(Book(id="a", pages=[" ".join(words)], language="en"))
    table = KeyFrequencies(f.winnows, np.full(f.winnows.size, 2, np.uint32), n_books=2)
    empty = np.zeros(0, np.uint32)
    return f, candidates.StopLists(2, 50, frozenset(), empty, empty, empty, table)


def test_a_keyed_book_asks_its_own_language_for_its_unique_words_too() -> None:
    """Noisy overlaps lose their word 3-grams on both sides but keep a third of their unique
    words (issue 27): a keyed book asks the books of its language for them, idf-weighted,
    ``same_language_uniq_hits`` of them."""
    f, stop = _keyed_book(5, common=2400)
    assert not looks_noisy(f.unique.hashes.size, f.n_words)
    body = _kinds(stop, f)[SAME_UNIQ]
    params = candidates.CandidateParams()
    assert body["size"] == params.same_language_uniq_depth == 50  # read, then 5 kept
    assert body["sort"][-1] == {"n_unique": {"order": "asc", "missing": "_last"}}
    plain = _kinds(stop, f, same_language_uniq_depth=0)[SAME_UNIQ]
    assert plain["size"] == params.same_language_uniq_hits == 5 and len(plain["sort"]) == 2
    assert body["query"]["bool"]["filter"] == [{"term": {"language": "en"}}]
    clauses = body["query"]["bool"]["must"][0]["bool"]["should"]
    assert len(clauses) > 100 and all("term" in c for c in clauses)  # idf-scored terms


def test_a_noisy_book_reads_its_unique_word_list_deeper() -> None:
    """Noise breaks a book's text keys in both books and its excerpts' partners rank past the
    first 10 of its unique-word list: a noisy book keeps ``noisy_uniq_hits`` of
    ``noisy_uniq_depth`` read (every word of the random book is seen once, as a garbled
    word is)."""
    f, stop = _keyed_book(5)
    assert looks_noisy(f.unique.hashes.size, f.n_words)
    params = candidates.CandidateParams()
    searcher = candidates.CandidateSearcher(None, "books", params, stop, _NoLexicons(), {"en"})  # type: ignore[arg-type]
    query = dict(searcher.labelled_queries(f))[SAME_UNIQ]
    assert (query.size, query.per_size) == (params.noisy_uniq_depth, params.noisy_uniq_hits)
    assert (query.size, query.per_size) == (100, 25)
    off = _kinds(stop, f, noisy_uniq_hits=0)[SAME_UNIQ]
    assert off["size"] == params.same_language_uniq_depth  # as any book's
    assert SAME_UNIQ not in _kinds(stop, f, same_language_uniq_hits=0)  # not asked at all


def test_idf_ranked_queries_are_scored_with_the_whole_index_statistics() -> None:
    """With several shards each would score a translated (idf-weighted) query by its own term
    statistics, so the capped candidates would depend on the shard layout: those queries go
    as dfs_query_then_fetch; the counting ones do not need the extra round."""
    from store.msearch import DFS, msearch

    empty = np.zeros(0, np.uint32)
    stop = candidates.StopLists(2, 50, frozenset(), empty, empty, empty, None)
    for idf in (True, False):
        params = candidates.CandidateParams(idf_translations=idf)
        searcher = candidates.CandidateSearcher(None, "books", params, stop, _NoLexicons(), {"en"})  # type: ignore[arg-type]
        assert [searcher.scored_by_idf(k) for k in ("bands", "winnows", "uniq")] == [False] * 3
        assert searcher.scored_by_idf("de") is idf

    class Client:
        sent: list[dict] = []

        def msearch(self, searches: list[dict]):
            self.sent.extend(searches)
            return type("R", (), {"body": {"responses": [{}, {}]}})()

    client = Client()
    msearch(client, "books", [{"q": 1}, {"q": 2}], [DFS, None])  # type: ignore[arg-type]
    assert client.sent == [
        {"index": "books", "search_type": "dfs_query_then_fetch"},
        {"q": 1},
        {"index": "books"},
        {"q": 2},
    ]


def test_candidate_hits_are_read_from_their_sort_values_not_their_stored_fields() -> None:
    """A candidate search asks for no stored field (no ``_id``, no ``_source``: the node would
    decompress each hit's whole book to return them) and reads each hit's book id and score
    from its sort values, as the node answers it then (``_score`` null without
    ``track_scores``)."""
    body = candidates.CandidateQuery("q", "uniq", ["a", "b", "c"], 2, 30).body()
    assert body["stored_fields"] == "_none_" and "_source" not in body
    assert body["sort"] == [{"_score": "desc"}, {"book_id": "asc"}]
    response = {
        "hits": {
            "hits": [
                {"_index": "books", "_score": None, "sort": [3.0, "b1"]},
                {"_index": "books", "_score": None, "sort": [2.5, "a7"]},
            ]
        }
    }
    assert candidates.hits_with_scores(response) == [("b1", 3.0), ("a7", 2.5)]


def test_a_per_size_search_keeps_the_best_hits_per_square_root_of_their_unique_words() -> None:
    """Issue 29: a long book shares many of any book's unique words by chance and outranked a
    noisy excerpt's partner; per square root of the hit's unique words the partner comes
    first. A hit without the count (sort value "_last") keeps its score."""
    query = candidates.CandidateQuery("q", "uniq", ["a", "b"], 1, 50, per_size=2)
    assert query.body()["size"] == 50
    response = {
        "hits": {
            "hits": [
                {"sort": [120.0, "long", 14_400]},
                {"sort": [60.0, "partner", 900]},
                {"sort": [50.0, "mid", 2_500]},
                {"sort": [1.5, "old", 2**63 - 1]},
            ]
        }
    }
    assert query.hits(response) == [("partner", 2.0), ("old", 1.5)]


@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_query_json_is_the_bytes_the_client_writes_for_its_body(idf: bool, weighted: bool) -> None:
    """Issue 28: the job sends each candidate query as JSON text written without the clause
    dicts; the client must send the very bytes it would have written for the body."""
    from elastic_transport import NdjsonSerializer

    terms = ["0000000a", 'q"u\\ote', "Ünïcode ☃", "0000000c"]
    weights = [1.0, 0.05, 1 / 3, 1.0] if weighted else None
    for language, exclude in ((None, None), ("de", None), (None, "en")):
        query = candidates.CandidateQuery(
            'book "1" ☃', "stems", terms, 2, 45, language, exclude, weights, idf
        )
        ser = NdjsonSerializer()
        assert ser.dumps([{"index": "b"}, query.json()]) == ser.dumps(
            [{"index": "b"}, query.body()]
        )
    assert candidates.CandidateQuery("q", "uniq", terms, 5, 10).hopeless


def test_every_labelled_query_s_json_is_its_body_s() -> None:
    """The searcher's queries of a generated book (bands, winnowed keys, unique words), as
    the job sends them (JSON text), equal their bodies as a client would write them."""
    import json

    f, stop = _keyed_book(28)
    params = candidates.CandidateParams()
    searcher = candidates.CandidateSearcher(None, "books", params, stop, _NoLexicons(), {"en"})  # type: ignore[arg-type]
    queries = searcher.labelled_queries(f)
    assert [kind for kind, _ in queries] == ["bands", "winnows", SAME_UNIQ, "uniq"]
    for _, query in queries:
        body = query.body()
        assert len(body["query"]["bool"]["must"][0]["bool"]["should"]) > 10
        assert query.json() == json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _stem_setup():  # type: ignore[no-untyped-def]
    """Two English books of random words, an en-de lexicon and its stem lexicon, a stop list."""
    from bookdup.dictionary import Dictionary
    from bookdup.features import extract_features
    from bookdup.model import Book
    from bookdup.stemming import stem_lexicon
    from bookdup.translate import hashed_lexicon

    rng = np.random.default_rng(28)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, 7)) for _ in range(3000)]
    lexicon = Dictionary.from_mapping(
        "en",
        "de",
        {w: [f"d{t}" for t in rng.integers(0, 4000, rng.integers(1, 6))] for w in words[::2]},
    )

    class Lexicons:
        def targets(self, source: str) -> list[str]:
            return ["de"] if source == "en" else []

        def get(self, source: str, target: str) -> Dictionary | None:
            return lexicon if (source, target) == ("en", "de") else None

    books = [
        extract_features(Book(id=i, pages=[" ".join(rng.choice(words, 2000))], language="en"))
        for i in ("a", "b")
    ]
    stemmed = stem_lexicon(lexicon)
    assert stemmed is not None and books[0].unique.stems is not None
    stems_stop = distinct(rng.choice(hashed_lexicon(stemmed).targets, 300))
    empty = np.zeros(0, np.uint32)
    stop = candidates.StopLists(2, 50, frozenset(), empty, empty, stems_stop, None)
    return books, stemmed, stop, Lexicons()


def test_translated_stem_queries_ask_the_heaviest_translations_of_the_book_s_stems() -> None:
    """The searcher's translated query for the whole book (issue 28; ``translated_windows``
    1): the book's distinct stems through the stem lexicon, weighed once per job, as the
    construction before it asked them (the reference in tests/bookdup/test_query_terms.py); the
    job's stop list, field, language and cap; words sampled instead when translations are not
    weighed."""
    import dataclasses

    from bookdup.features import STEM_MODULUS
    from bookdup.translate import translate_with_source
    from tests.bookdup.test_query_terms import _old_heaviest

    books, stemmed, stop, lexicons = _stem_setup()
    params = candidates.CandidateParams(translated_windows=1)
    searcher = candidates.CandidateSearcher(None, "books", params, stop, lexicons, {"en", "de"})  # type: ignore[arg-type]
    for f in books:
        query = dict(searcher.labelled_queries(f))["de"]
        terms, weights = _old_heaviest(
            stemmed,
            distinct(f.unique.stems),
            stop.stems,
            params.translated_query_terms,
            STEM_MODULUS,
            params.untranslated_weight,
        )
        assert (query.field, query.language, query.size) == ("stems", "de", params.translation_hits)
        assert len(terms) == params.translated_query_terms and query.idf is params.idf_translations
        assert (list(query.terms), query.weights) == (terms, weights)
        assert query.outright is None  # the job's max_translation_candidates
    assert list(searcher._weighted) == [stemmed]  # the lexicon weighed once for both books
    plain = dataclasses.replace(params, weigh_translations=False)
    sampled = candidates.CandidateSearcher(None, "books", plain, stop, lexicons, {"en", "de"})  # type: ignore[arg-type]
    f = books[0]
    query = dict(sampled.labelled_queries(f))["de"]
    hashes, _, _ = translate_with_source(None, f.unique.pages, stemmed, hashes=f.unique.stems)
    picked = sample_terms(hashes, stop.stems, params.translated_query_terms, STEM_MODULUS)
    assert query.weights is None and list(query.terms) == picked and len(picked) > 100


def test_a_translated_query_asks_each_window_of_the_book_apart() -> None:
    """Issue 27: by default a book asks for its translations once per half of its unique
    words (reading order), each search the heaviest translations of that half's stems, half
    the terms, a window's hits (deeper for a book standing in for its editions), the first
    ``window_outright`` verified outright; a partial translation holds one half's words."""
    import dataclasses

    from bookdup.features import STEM_MODULUS
    from tests.bookdup.test_query_terms import _old_heaviest

    books, stemmed, stop, lexicons = _stem_setup()
    params = candidates.CandidateParams(pivot_pairs=False)
    assert params.translated_windows == 2 and params.window_outright == 3
    searcher = candidates.CandidateSearcher(None, "books", params, stop, lexicons, {"en", "de"})  # type: ignore[arg-type]
    f = books[0]
    stems = f.unique.stems
    assert stems is not None
    halves = (stems[: len(stems) // 2], stems[len(stems) // 2 :])
    queries = [q for kind, q in searcher.labelled_queries(f) if kind == "de"]
    assert len(queries) == 2
    for query, half in zip(queries, halves, strict=True):
        terms, weights = _old_heaviest(
            stemmed, distinct(half), stop.stems, 125, STEM_MODULUS, params.untranslated_weight
        )
        assert (list(query.terms), query.weights) == (terms, weights)
        assert (query.size, query.outright) == (params.translation_window_hits, 3)
    deeper = [q for kind, q in searcher.labelled_queries(f, depth=3) if kind == "de"]
    assert [q.size for q in deeper] == [3 + 3 * (params.translation_window_hits - 3)] * 2
    # with the pivot pair keys, whose lists hold what the screened tail held, the outright alone
    pivoted = dataclasses.replace(params, pivot_pairs=True)
    searcher = candidates.CandidateSearcher(None, "books", pivoted, stop, lexicons, {"en", "de"})  # type: ignore[arg-type]
    for depth in (1, 3):
        sizes = [q.size for kind, q in searcher.labelled_queries(f, depth=depth) if kind == "de"]
        assert sizes == [3, 3]
    # a book whose every stem one query can ask is asked whole (a short book's halves could
    # each fall under the floor of shared terms)
    asks_all = dataclasses.replace(params, translated_query_terms=len(distinct(stems)))
    whole = candidates.CandidateSearcher(None, "books", asks_all, stop, lexicons, {"en", "de"})  # type: ignore[arg-type]
    [query] = [q for kind, q in whole.labelled_queries(f) if kind == "de"]
    assert (query.size, query.outright) == (params.translation_hits, None)


def test_pivot_queries_only_with_the_flag_split_under_the_clause_cap_and_sum_scores() -> None:
    """Issue 27: without ``pivot_pairs`` nothing is added (the searches before the keys);
    with it, every one of a book's pivot keys (no stop list) goes in searches of at most
    ``pivot_query_chunk`` idf-scored clauses over the other languages, whose hits come back
    as one list per target language: each book's scores summed, best first, ties by book id,
    capped at ``pivot_hits``; a language no lexicon reaches from the book's is left out."""
    import dataclasses

    from bookdup.features import extract_features
    from bookdup.model import Book
    from bookdup.pivot import QUERY_GAP, QUERY_SENSES, PivotLexicons, key_terms, pivot_keys
    from tests.bookdup.test_pivot import _Lexicons, _words

    rng = np.random.default_rng(27)
    english, german = _words(rng, 1500, "e"), _words(rng, 1500, "d")
    lexicons = _Lexicons(english, german, rng)
    f = extract_features(Book(id="q", pages=[" ".join(german[:1200])], language="de"))
    pivot = PivotLexicons.from_lexicons(lexicons)
    keys = key_terms(pivot_keys(f.unique.stems, "de", pivot, QUERY_SENSES, gap=QUERY_GAP))
    assert len(keys) > 5000
    empty = np.zeros(0, np.uint32)
    stop = candidates.StopLists(2, 50, frozenset(), empty, empty, empty, None, empty)
    sent: list = []

    class Client:
        def msearch(self, searches: list, **_options):
            sent.extend(searches)
            bodies = searches[1::2]
            answers = [{"hits": {"hits": []}} for _ in bodies]
            for at, body in enumerate(bodies):
                if '"pivots"' in body:  # every search: b1, b2 score 1; b3 1.5 in every other
                    hits = [[1.0, "b1", "en"], [1.0, "b2", "en"], [9.0, "f1", "fr"]]
                    hits += [[1.5, "b3", "en"]] if at % 2 else []
                    answers[at] = {"hits": {"hits": [{"sort": h} for h in hits]}}
            return type("R", (), {"body": {"responses": answers}})()

    off = candidates.CandidateParams(pivot_pairs=False)
    on = dataclasses.replace(off, pivot_pairs=True, pivot_query_chunk=2000, pivot_hits=2)
    languages = {"en", "de", "fr"}
    plain = candidates.CandidateSearcher(Client(), "books", off, stop, lexicons, languages)  # type: ignore[arg-type]
    assert plain.pivot_queries(f) == []
    searcher = candidates.CandidateSearcher(Client(), "books", on, stop, lexicons, languages)  # type: ignore[arg-type]
    assert [k for k, _ in searcher.labelled_queries(f)] == [k for k, _ in plain.labelled_queries(f)]
    searches = searcher.pivot_queries(f)
    n = len(searches)
    assert n == -(-len(keys) // 2000) and all(len(q.terms) <= 2000 for q in searches)
    assert sorted(t for q in searches for t in q.terms) == sorted(keys)
    body = searches[0].body()
    assert body["sort"][-1] == {"language": "asc"} and searches[0].idf
    assert body["query"]["bool"]["must_not"][-1] == {"term": {"language": "de"}}
    found = [r for r in searcher.ranked([f]) if r.hits and r.hits[0][0] in ("b1", "b3")]
    # b3: 1.5 in n // 2 searches, b1 and b2: 1 in all of them; French: no lexicon from German
    want = sorted([("b1", float(n)), ("b2", float(n)), ("b3", 1.5 * (n // 2))], key=lambda h: -h[1])
    assert [(r.kind, r.hits) for r in found] == [("en", want[:2])]
    pivot_headers = sent[0::2][-n:]
    assert all(h.get("search_type") == "dfs_query_then_fetch" for h in pivot_headers)
    # one key in 3 sampled: about a third of them, each one of the book's own keys
    third = candidates.CandidateSearcher(
        Client(), "books", dataclasses.replace(on, pivot_query_sample=3), stop, lexicons, languages
    )  # type: ignore[arg-type]
    kept = [t for q in third.pivot_queries(f) for t in q.terms]
    assert set(kept) <= set(keys) and 0.28 < len(kept) / len(keys) < 0.39


def test_a_books_queries_split_into_its_own_language_and_across() -> None:
    """The dedup job's two searches (``DedupParams.translations_by_edition``) ask between
    them exactly a book's queries: bands and winnowed keys in its language; its translated
    queries and the unique words asked of other languages across."""
    import dataclasses

    from bookdup.dictionary import Dictionary
    from bookdup.features import extract_features
    from bookdup.model import Book
    from bookdup.winnow import KeyFrequencies

    rng = np.random.default_rng(3)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, 7)) for _ in range(3000)]
    lexicon = Dictionary.from_mapping("en", "de", {w: [f"d{w}"] for w in words[::2]})

    class Lexicons:
        def targets(self, source: str) -> list[str]:
            return ["de"] if source == "en" else []

        def get(self, source: str, target: str) -> Dictionary | None:
            return lexicon if (source, target) == ("en", "de") else None

    f = extract_features(Book(id="a", pages=[" ".join(rng.choice(words, 4000))], language="en"))
    keys = np.unique(f.winnows)
    table = KeyFrequencies(keys, np.full(keys.size, 2, np.uint32), 10)
    empty = np.zeros(0, np.uint32)
    stop = candidates.StopLists(10, 50, frozenset(), empty, empty, empty, table)
    params = candidates.CandidateParams()
    searcher = candidates.CandidateSearcher(None, "books", params, stop, Lexicons(), {"en", "de"})  # type: ignore[arg-type]
    kinds = {
        k: [kind for kind, _ in searcher.labelled_queries(f, k)]  # type: ignore[arg-type]
        for k in ("all", "same", "across")
    }
    assert kinds["same"] == ["bands", "winnows", SAME_UNIQ]
    assert kinds["across"] == ["uniq", "de", "de"]  # a translated search per window
    assert sorted(kinds["all"]) == sorted(kinds["same"] + kinds["across"])
    # the job's second search reads cached features, without their keys: the same queries
    cached = dataclasses.replace(f, winnows=np.zeros(0, np.uint32))
    assert [kind for kind, _ in searcher.labelled_queries(cached, "across")] == kinds["across"]
