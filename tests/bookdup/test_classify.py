"""Classifier: filter functions, per-class confidences and the argmax on crafted signals."""

from __future__ import annotations

import dataclasses

import pytest

from bookdup.classify import (
    CLASSIFIER_PARAMS,
    RELATIONS,
    ClassifierParams,
    band,
    classify,
    describe_local,
    describe_neighbours,
    ramp,
)
from bookdup.signals import RelationSignals

#: Signals of two copies of one 100-page text on the same pages (noisy, so not identical).
SAME = RelationSignals(
    same_content=False, book_similarity=0.3, page_similarity=0.3, page_match_fraction=1.0,
    page_agreement=1.0, n_pages_x=100, n_pages_y=100, n_page_matches=1500, slope=1.0,
    offset=0.0, fit_residual=0.0, delta_pages=0, delta_page_count=0.0, consecutive_corr=0.0,
    sequential_fraction=1.0, coverage_x=1.0, coverage_y=1.0, span_x=1.0, span_y=1.0,
    contiguity_x=1.0, contiguity_y=1.0, x=3000, y=1500, shared=1200, lcs=1150, cs=0.54,
    its=0.85,
)  # fmt: skip


def with_(**changes) -> RelationSignals:
    return dataclasses.replace(SAME, **changes)


def test_ramp_and_band():
    assert ramp(0.5, (0.0, 1.0)) == 0.5 and ramp(-1, (0.0, 1.0)) == 0.0 and ramp(2, (0, 1)) == 1
    assert ramp(0.2, (1.0, 0.0)) == pytest.approx(0.8)  # reversed edges: low-pass
    assert band(0.01, (0.02, 0.06)) == 1.0 and band(-0.1, (0.02, 0.06)) == 0.0
    assert band(0.04, (0.02, 0.06)) == pytest.approx(0.5)


def test_every_confidence_in_unit_interval_and_all_returned():
    r = classify(SAME)
    assert set(r.confidences) == set(RELATIONS)
    assert all(0.0 <= v <= 1.0 for v in r.confidences.values())
    assert r.confidence == max(r.confidences.values())


@pytest.mark.parametrize(
    ("signals", "expected", "direction"),
    [
        (SAME, "SAME_PAGINATION", None),
        (with_(same_content=True, book_similarity=1.0), "EXACT", None),
        (with_(book_similarity=0.99), "EXACT", None),
        (with_(slope=0.73, consecutive_corr=0.6, page_agreement=0.7, delta_pages=27),
         "DIFFERENT_PAGINATION", None),
        (with_(same_content=True, slope=1.37, consecutive_corr=0.5, page_agreement=0.7),
         "DIFFERENT_PAGINATION", None),  # same text re-paginated is not EXACT
        (with_(coverage_y=0.4, span_y=0.4, delta_pages=-150), "CONTIGUOUS_SUBSET", "x_in_y"),
        (with_(coverage_x=0.3, span_x=0.3), "CONTIGUOUS_SUBSET", "y_in_x"),
        (with_(coverage_x=0.5, coverage_y=0.45, n_page_matches=400), "OVERLAPPING_TEXT", None),
        (with_(coverage_x=0.03, coverage_y=0.05, n_page_matches=20, lcs=150, cs=0.05),
         "UNRELATED", None),
    ],
)  # fmt: skip
def test_classes_same_language(signals, expected, direction):
    r = classify(signals, same_language=True, translated=False)
    assert (r.relation, r.direction) == (expected, direction)
    assert r.confidence > 0.5


def test_scattered_cover_is_overlap_not_subset():
    """Covered fully on one side but in scattered pieces on the other: not contiguous."""
    r = classify(with_(coverage_y=0.45, contiguity_y=0.3))
    assert r.relation == "OVERLAPPING_TEXT"


def test_translation_only_when_translated():
    trans = with_(its=0.68, cs=0.15, n_page_matches=270, book_similarity=0.0, order_z=40.0)
    r = classify(trans, same_language=False, translated=True)
    assert r.relation == "TRANSLATION" and r.direction is None
    assert all(r.confidences[c] == 0.0 for c in ("EXACT", "SAME_PAGINATION", "OVERLAPPING_TEXT"))
    assert classify(trans, same_language=False, translated=False).relation != "TRANSLATION"
    weak = classify(with_(its=0.5, n_page_matches=20), same_language=False, translated=True)
    assert weak.relation == "UNRELATED"  # no order evidence (z 0)


def test_translation_is_decided_on_the_order_statistic_not_its():
    """A high TRANS-its with chance order is not a translation; a low one with order is."""
    chance = with_(its=0.68, n_page_matches=270, book_similarity=0.0, order_z=2.0)
    assert classify(chance, same_language=False, translated=True).relation == "UNRELATED"
    ordered = with_(its=0.45, n_page_matches=60, book_similarity=0.0, order_z=30.0)
    assert classify(ordered, same_language=False, translated=True).relation == "TRANSLATION"


def test_edition_classes_need_same_language():
    r = classify(SAME, same_language=False, translated=False)
    assert r.relation == "OVERLAPPING_TEXT"  # a bilingual book sharing text is not an edition


def test_params_are_the_single_place_for_thresholds():
    strict = dataclasses.replace(CLASSIFIER_PARAMS, full_coverage=(0.99, 1.0))
    assert isinstance(strict, ClassifierParams)
    r = classify(with_(coverage_x=0.9, coverage_y=0.9), strict)
    assert r.relation != "SAME_PAGINATION"
    with pytest.raises(dataclasses.FrozenInstanceError):
        strict.full_coverage = (0.0, 0.1)  # type: ignore[misc]


def test_same_work_when_the_words_around_the_names_differ():
    """Two translations of one work in one language: edition-like order, other text."""
    other = with_(order_z=150.0, neighbour_agreement=0.5, neighbour_share=0.85)
    r = classify(other, same_language=True)
    assert r.relation == "SAME_WORK" and r.confidence > 0.9
    assert max(r.confidences[c] for c in ("SAME_PAGINATION", "DIFFERENT_PAGINATION")) < 0.1
    # the same pair seen through heavy OCR noise (few comparable neighbours) or without
    # stored contexts keeps its edition class: nothing says the text differs
    for unsure in (with_(order_z=150.0, neighbour_agreement=0.5, neighbour_share=0.4),
                   with_(order_z=150.0)):  # fmt: skip
        assert classify(unsure, same_language=True).relation == "SAME_PAGINATION"
    # and editions agree
    same = with_(order_z=150.0, neighbour_agreement=0.97, neighbour_share=0.9)
    assert classify(same, same_language=True).relation == "SAME_PAGINATION"


def test_same_work_never_across_languages_nor_without_order():
    other = with_(order_z=150.0, neighbour_agreement=0.5, neighbour_share=0.85)
    assert classify(other, same_language=False).relation != "SAME_WORK"
    chance = with_(order_z=2.0, neighbour_agreement=0.3, neighbour_share=0.85, its=0.5)
    assert classify(chance, same_language=True).relation == "UNRELATED"


def test_abridged_when_the_shorter_holds_fewer_words_throughout():
    # y: the same text cut to 45 % of its words along the whole of x
    cut = with_(text_ratio=0.45, coverage_x=0.85, coverage_y=1.0, slope=0.45, delta_pages=55)
    r = classify(cut, same_language=True)
    assert (r.relation, r.direction) == ("ABRIDGED", "y_in_x") and r.confidence > 0.9
    flipped = with_(text_ratio=1 / 0.45, coverage_x=1.0, coverage_y=0.85)
    assert (classify(flipped).relation, classify(flipped).direction) == ("ABRIDGED", "x_in_y")
    # a volume (a block of x, the same number of words where they align) stays a subset
    volume = with_(text_ratio=1.0, coverage_x=0.3, span_x=0.3, coverage_y=1.0)
    assert classify(volume).relation == "CONTIGUOUS_SUBSET"
    # a short piece holding half the words of a block of x is no abridgement of x (the
    # longer book is covered in one short block), nor the same text: shared text
    piece = with_(text_ratio=0.5, coverage_x=0.2, span_x=0.2, coverage_y=1.0)
    assert classify(piece).relation == "OVERLAPPING_TEXT"


def test_an_abridgement_is_covered_along_its_pages_not_its_words():
    """A 10 %-noise abridgement aligns a word in ten or more: the words before its first
    aligned one and after its last are not covered (0.72), its pages are (0.95). The cut
    reads the pages; signals stored without page coverage read the coverage as before."""
    cut = with_(
        text_ratio=0.45, coverage_x=1.0, coverage_y=0.72, page_coverage_x=1.0,
        page_coverage_y=0.95, slope=0.45, delta_pages=55,
    )  # fmt: skip
    r = classify(cut)
    assert (r.relation, r.direction) == ("ABRIDGED", "y_in_x") and r.confidence > 0.9
    stored = with_(**{**vars(cut), "page_coverage_x": None, "page_coverage_y": None})
    assert classify(stored).relation != "ABRIDGED"
    assert classify(with_(**{**vars(stored), "coverage_y": 0.95})).relation == "ABRIDGED"


def test_order_evidence_opens_the_gate_that_noise_closes():
    """A quarter of each book shared under 8-10 % character noise: its 0.48 (under the DUPNIQ
    gate), yet the shared words run in order far beyond chance (z 20)."""
    noisy_overlap = with_(
        its=0.48, lcs=70, coverage_x=0.28, coverage_y=0.3, n_page_matches=60, contiguity_x=0.5
    )
    assert classify(noisy_overlap).relation == "UNRELATED"  # no order evidence computed
    assert classify(with_(**{**vars(noisy_overlap), "order_z": 20.0})).relation == (
        "OVERLAPPING_TEXT"
    )
    # unrelated books with a chance-level order (real same-language pairs reach z 8.0)
    chance = with_(**{**vars(noisy_overlap), "order_z": 7.5})
    assert classify(chance).relation == "UNRELATED"


def test_a_part_holds_the_same_words_where_it_aligns():
    """A volume against an abridgement of its work: the volume's pages are all covered, in
    one block, but hold twice the abridgement's words there: shared text, not a part."""
    volume_vs_cut = with_(coverage_x=0.4, coverage_y=1.0, span_x=0.4, text_ratio=2.0)
    assert classify(volume_vs_cut).relation == "OVERLAPPING_TEXT"
    volume = with_(coverage_x=0.4, coverage_y=1.0, span_x=0.4, text_ratio=1.05)
    assert classify(volume).relation == "CONTIGUOUS_SUBSET"


def test_a_volume_against_an_abridgement_of_its_whole_work_is_an_overlap():
    """Recorded in the dedup job (generated seed 61, 10 % noise): a 7-page volume against an
    abridgement of its whole work is covered 0.96, in one block, by half the abridgement, but
    holds 1.49 of its words there (the paragraphs the abridgement cut). Real parts read 0.95
    at least (Quixote's first volume), generated ones at 10 % noise 0.81: those stay
    CONTIGUOUS_SUBSET."""
    volume_vs_cut = with_(
        coverage_x=0.47, coverage_y=0.96, page_coverage_x=0.54, page_coverage_y=1.0,
        span_x=0.50, span_y=0.86, n_page_matches=56, lcs=57, shared=108, its=0.54,
        order_z=20.1, text_ratio=1.49, n_pages_x=12, n_pages_y=7, delta_pages=5,
        sequential_fraction=0.8, x=1024, y=881,
    )  # fmt: skip
    assert classify(volume_vs_cut).relation == "OVERLAPPING_TEXT"
    real_part = with_(**{**vars(volume_vs_cut), "text_ratio": 1 / 0.86})
    r = classify(real_part)
    assert (r.relation, r.direction) == ("CONTIGUOUS_SUBSET", "y_in_x")


def test_an_excerpt_of_a_sixth_of_a_volume_in_a_big_anthology_is_shared_text():
    """Recorded in the dedup job (held-out seed 62, clean): an anthology holding a sixth of
    a volume, 0.05 of the anthology, 55 aligned words in runs at z 22: an overlap."""
    excerpt = with_(
        coverage_x=0.17, coverage_y=0.05, page_coverage_x=0.19, page_coverage_y=0.09,
        span_x=0.18, span_y=0.09, n_page_matches=55, lcs=65, shared=132, its=0.56,
        order_z=22.4, text_ratio=1.26, n_pages_x=17, n_pages_y=35, delta_pages=-18,
        x=520, y=1199,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    stray = with_(**{**vars(excerpt), "coverage_x": 0.04, "span_x": 0.04, "coverage_y": 0.03})
    assert classify(stray).relation == "UNRELATED"


def test_a_tenth_of_a_book_in_one_dense_run_is_shared_text():
    """Recorded (generated seed 62, clean): an abridgement and an anthology share 0.104 of
    each, 45 aligned words in runs at z 19.8: an excerpt, lost under the old one-sided ramp
    (0.10, 0.20). The nearest unrelated pair anywhere (real, 0.074 of one book, 29 words in
    runs) stays out behind the gate, its order at z 8.3."""
    tenth = with_(
        coverage_x=0.104, coverage_y=0.104, page_coverage_x=0.12, page_coverage_y=0.12,
        span_x=0.11, span_y=0.11, n_page_matches=45, lcs=63, shared=110, its=0.57,
        order_z=19.8, text_ratio=1.0, n_pages_x=14, n_pages_y=28, delta_pages=-14,
    )  # fmt: skip
    assert classify(tenth).relation == "OVERLAPPING_TEXT"
    unrelated = with_(**{**vars(tenth), "coverage_x": 0.074, "coverage_y": 0.015, "its": 0.44,
                         "order_z": 8.3, "n_page_matches": 29, "lcs": 39})  # fmt: skip
    assert classify(unrelated).relation == "UNRELATED"


def test_an_abridgement_read_half_abridged_half_overlap_is_related():
    """Recorded (the real derived set: a 2 %-noise rescan of a work against its abridgement,
    z 114, 348 aligned words in runs): ABRIDGED 0.49 and OVERLAPPING_TEXT 0.48, which is what
    the edition classes leave. UNRELATED is what neither leaves, not the complement of the
    larger alone (0.51, which won)."""
    rescan_vs_cut = with_(
        page_similarity=0.78, page_match_fraction=0.81, page_agreement=0.93, n_pages_x=249,
        n_pages_y=117, n_page_matches=348, slope=0.45, offset=1.84, fit_residual=1.41,
        delta_pages=132, delta_page_count=2.6, consecutive_corr=0.41, coverage_x=0.663,
        coverage_y=0.731, span_x=0.988, span_y=0.992, contiguity_x=0.13, contiguity_y=0.148,
        x=7295, y=11420, shared=958, lcs=379, cs=0.04, its=0.605, order_z=113.8, order_lcs=379,
        neighbour_agreement=0.788, neighbour_share=0.759, text_ratio=0.477,
        page_coverage_x=0.69, page_coverage_y=0.829,
    )  # fmt: skip
    r = classify(rescan_vs_cut)
    assert r.relation == "ABRIDGED"
    assert r.confidences["OVERLAPPING_TEXT"] > 0.4 and r.confidences["UNRELATED"] < 0.1


def test_a_clean_alignment_leaving_an_eighth_uncovered_is_no_part():
    """Recorded in the dedup job (real derived set): an anthology holding 0.865 of a volume,
    aligned cleanly (1,472 of 1,525 shared unique words in order), shares text with it but
    does not contain it. A 5 %-noise rescan of a middle volume covers 0.86 of it only because
    misread words do not align (230 of 913 in order): that stays a CONTIGUOUS_SUBSET."""
    anthology = with_(
        coverage_x=0.865, coverage_y=0.43, page_coverage_x=0.866, page_coverage_y=0.43,
        span_x=0.72, span_y=0.43, n_page_matches=1459, lcs=1472, shared=1525, its=0.86,
        order_z=457.0, text_ratio=1.05, n_pages_x=152, n_pages_y=255, delta_pages=-103,
        x=2644, y=3530, slope=1.3, page_agreement=0.7, consecutive_corr=0.4,
    )  # fmt: skip
    assert classify(anthology).relation == "OVERLAPPING_TEXT"
    noisy_volume = with_(**{**vars(anthology), "lcs": 230, "shared": 913, "its": 0.55})
    r = classify(noisy_volume)
    assert (r.relation, r.direction) == ("CONTIGUOUS_SUBSET", "x_in_y")
    clean_volume = with_(**{**vars(anthology), "coverage_x": 0.905})
    assert classify(clean_volume).relation == "CONTIGUOUS_SUBSET"


def test_an_excerpt_that_is_a_third_of_one_book_is_shared_text():
    """An anthology's excerpt under 10 % character noise (generated, seed 61): 44 % of the
    work it is taken from, 14 % of the anthology, 35 aligned words in runs at z 11.6. Large
    for one book, so substantial; the same run over a few per cent of both books is not."""
    excerpt = with_(
        its=0.44, lcs=49, order_z=11.6, n_page_matches=35, coverage_x=0.44, coverage_y=0.14,
        span_x=0.4, span_y=0.13, text_ratio=1.05, slope=1.15, page_agreement=0.84,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    small_in_both = with_(**{**vars(excerpt), "coverage_x": 0.06, "span_x": 0.06,
                             "coverage_y": 0.04, "span_y": 0.04})  # fmt: skip
    assert classify(small_in_both).relation == "UNRELATED"
    few_words = with_(**{**vars(excerpt), "n_page_matches": 12})
    assert classify(few_words).relation == "UNRELATED"


def test_one_dense_run_at_an_order_two_above_any_unrelated_pair_is_shared_text():
    """A 5 %-noise excerpt of 1,268 words (generated seed 61, `b000160` / `b000173`): one run
    of 45 aligned words covering 0.16 / 0.10 of the books, its 0.46, z 11.1. Real unrelated
    pairs reach z 8.0, generated ones 3.5: the gate is open at 10, where at 12 its part-open
    ramp and the overlap's size ramp left it UNRELATED (stop 53)."""
    excerpt = with_(
        its=0.464, lcs=49, order_z=11.1, n_page_matches=45, coverage_x=0.156, coverage_y=0.099,
        span_x=0.17, span_y=0.14, contiguity_x=1.0, contiguity_y=1.0, text_ratio=1.13,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    at_chance = with_(**{**vars(excerpt), "order_z": 8.0})  # the real unrelated maximum
    assert classify(at_chance).relation == "UNRELATED"


def test_an_anthology_holding_four_fifths_of_a_volume_is_no_edition_of_it():
    """Recorded (the real derived set: an anthology opening with 80 % of a volume, on the
    same pages, one of them rescanned at 10 % noise): each book 0.797 covered, in one run.
    Google's line is a fifth of extra text; every truth edition up to 10 % noise reads 0.84
    or more, and stays one."""
    four_fifths = with_(
        book_similarity=0.039, page_similarity=0.115, page_match_fraction=0.795,
        n_pages_x=119, n_pages_y=117, n_page_matches=1081, delta_pages=2,
        delta_page_count=-2.0, coverage_x=0.797, coverage_y=0.797, span_x=0.781, span_y=0.795,
        x=6412, y=12718, shared=1485, lcs=1090, cs=0.121, its=0.714, order_z=334.3,
        order_lcs=1090, neighbour_agreement=0.819, neighbour_share=0.718, text_ratio=0.992,
        page_coverage_x=0.798, page_coverage_y=0.798,
    )  # fmt: skip
    assert classify(four_fifths).relation == "OVERLAPPING_TEXT"
    edition = with_(**{**vars(four_fifths), "coverage_x": 0.845, "coverage_y": 0.99,
                       "span_x": 0.95, "span_y": 1.0, "page_coverage_x": 0.86,
                       "page_coverage_y": 0.99})  # fmt: skip
    assert classify(edition).relation == "SAME_PAGINATION"


def test_an_edition_re_set_on_as_many_pages_is_another_pagination():
    """Two settings of one text on 11 pages each whose breaks drift by a few lines keep
    0.968 of each page's words on the same page (held-out seed 64 at 5 %); rescans of the
    same pages keep 0.976 or more, at up to 10 % noise."""
    assert classify(with_(page_agreement=0.976)).relation == "SAME_PAGINATION"
    assert classify(with_(page_agreement=0.968)).relation == "DIFFERENT_PAGINATION"


def test_a_small_shared_block_is_an_overlap_once_no_other_books_hold_it():
    """A 200-word excerpt shared by a volume and an anthology: 6-7 % of either, 17 aligned
    words in runs, one dense block at 1 in 10^13 (held-out seed 75 at 2 %). The size ramps
    read it as chance; the collection, asked, holds it apart from no one: it is the pair's
    text. A block many books hold (the Project Gutenberg disclaimer), or one not asked
    about (no collection), stays under the size ramps."""
    excerpt = with_(
        coverage_x=0.0675, coverage_y=0.0602, n_page_matches=17, lcs=19, order_z=3.7,
        its=0.3, local_score=13.2, span_x=0.07, span_y=0.06, page_agreement=0.5,
    )  # fmt: skip
    assert classify(excerpt).relation == "UNRELATED"
    assert classify(dataclasses.replace(excerpt, shared_held_apart=True)).relation == "UNRELATED"
    own = dataclasses.replace(excerpt, shared_held_apart=False)
    assert classify(own).relation == "OVERLAPPING_TEXT"
    weak = dataclasses.replace(own, local_score=CLASSIFIER_PARAMS.overlap_own_block[0])
    assert classify(weak).relation == "UNRELATED"


def test_page_breaks_falling_apart_tell_a_re_set_edition_from_a_rescan():
    """A re-set edition whose page agreement reads as a rescan's (0.975, held-out seed 66 at
    10 %): 4 of its 64 page breaks fall apart from the other book's. A long noisy rescan
    leaves one or two apart by chance, never enough to count."""
    re_set = with_(page_agreement=0.975, page_breaks=64, page_breaks_apart=4)
    assert classify(re_set).relation == "DIFFERENT_PAGINATION"
    assert classify(with_(page_breaks=64, page_breaks_apart=2)).relation == "SAME_PAGINATION"
    assert classify(with_(page_breaks=700, page_breaks_apart=3)).relation == "SAME_PAGINATION"


def test_the_neighbour_sentence_follows_the_same_work_threshold():
    """`compare` and `explain` call neighbours "the same text" above the agreement where
    SAME_WORK loses all confidence, wherever that parameter is set."""
    seen = {"neighbour_agreement": 0.76, "neighbour_share": 0.9}
    assert "the same text" not in describe_neighbours(seen)
    looser = dataclasses.replace(CLASSIFIER_PARAMS, same_work_agreement=(0.75, 0.7))
    assert "the same text" in describe_neighbours(seen, looser)
    assert describe_neighbours({"neighbour_agreement": None}) is None


def test_a_noisy_pair_s_alignment_length_is_read_where_its_order_was():
    """An excerpt of a volume in an anthology under 10 % character noise (generated seed 62,
    ``b000003`` / ``b000012``): 31 words align exactly, 54 once garbled words are matched up to
    one edit, at z 17 (where the order alone now decides: the next test). At z 11 an exact
    |LCS| of 26 alone leaves ``min_lcs`` part shut (UNRELATED); the one the order was read on
    opens it. A window's shorter |LCS| never lowers the exact one."""
    excerpt = with_(
        its=0.46, lcs=26, order_z=11.0, n_page_matches=26, coverage_x=0.24, coverage_y=0.56,
        span_x=0.33, span_y=0.6, contiguity_x=1.0, contiguity_y=1.0, text_ratio=0.53,
        slope=0.6, page_agreement=0.8, n_pages_x=9, n_pages_y=5, x=1192, y=588, shared=83,
    )  # fmt: skip
    assert classify(excerpt).relation == "UNRELATED"
    assert classify(with_(**{**vars(excerpt), "order_lcs": 54})).relation == "OVERLAPPING_TEXT"
    window = with_(**{**vars(excerpt), "order_lcs": 12})
    assert classify(window).confidences == classify(excerpt).confidences


def test_a_noisy_excerpt_with_few_words_in_runs_is_shared_text_on_its_order_alone():
    """Recorded by `bookdup compare` (generated seed 63, 10 % noise on both sides): a work
    and an anthology holding 850 of its words keep 10 aligned words in runs, under
    ``overlap_lcs``, but their order z re-read with one-edit matches is 19.4. An order that
    strong is shared text; at z 9 it is not."""
    excerpt = with_(
        book_similarity=0.0, page_similarity=0.0, page_match_fraction=0.64, page_agreement=0.65,
        n_pages_x=13, n_pages_y=11, n_page_matches=10, slope=1.56, offset=-0.23,
        fit_residual=0.88, delta_pages=2, delta_page_count=-8.5, consecutive_corr=0.27,
        sequential_fraction=0.75, coverage_x=0.49, coverage_y=0.76, span_x=0.38, span_y=0.64,
        x=1079, y=1346, shared=116, lcs=36, cs=0.03, its=0.46, order_z=19.4, order_lcs=67,
        neighbour_agreement=0.0, neighbour_share=0.55, text_ratio=2.46, page_coverage_x=0.70,
        page_coverage_y=0.99,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    assert classify(with_(**{**vars(excerpt), "order_z": 9.0})).relation == "UNRELATED"


def test_a_noisy_excerpt_keeping_16_words_in_runs_is_shared_text():
    """Recorded in the dedup job (generated seed 76 at 10 % noise on both sides, ``b000083`` /
    ``b000104``): a fifth of a 1,176-word volume in a 4,443-word anthology keeps 16 aligned
    words in runs, its densest block 1 in 10^7.5 opening the gate: shared text. A stray run
    or two (9 words) is not."""
    excerpt = with_(
        book_similarity=0.0, page_similarity=0.0, page_match_fraction=0.25, page_agreement=0.75,
        n_pages_x=4, n_pages_y=22, n_page_matches=16, slope=1.0, offset=12.75, fit_residual=0.0,
        delta_pages=-18, delta_page_count=5.25, consecutive_corr=0.25, sequential_fraction=0.0,
        coverage_x=0.1569, coverage_y=0.0391, span_x=0.25, span_y=0.0909, x=529, y=1612,
        shared=114, lcs=29, cs=0.0314, its=0.4399, order_z=5.56, order_lcs=29, local_score=7.52,
        neighbour_agreement=0.85, neighbour_share=0.625, text_ratio=0.678, page_coverage_x=0.2552,
        page_coverage_y=0.0962,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    assert classify(with_(**{**vars(excerpt), "n_page_matches": 9})).relation == "UNRELATED"


def test_one_dense_block_in_order_opens_the_gate_for_a_noisy_excerpt():
    """Recorded in the dedup job's pair path (generated seed 63 at 10 % noise, ``b000182`` /
    ``b000235``): a 516-word excerpt of a 4,500-word book in a 10,700-word anthology. Its
    whole order (z 6.5) and its 0.45 leave the gate shut, but 19 of its matches lie in order
    in one box where chance puts one (``local_score`` 12.5; unrelated pairs stay under 1.5):
    shared text. At a chance score it stays unrelated."""
    excerpt = with_(
        book_similarity=0.0, page_similarity=0.0, page_match_fraction=0.13, page_agreement=0.75,
        n_pages_x=15, n_pages_y=35, n_page_matches=25, slope=1.1, offset=3.8, fit_residual=0.39,
        delta_pages=-20, delta_page_count=14.8, consecutive_corr=0.11, sequential_fraction=1.0,
        coverage_x=0.1545, coverage_y=0.0666, span_x=0.133, span_y=0.114, x=1476, y=3048,
        shared=288, lcs=45, cs=0.021, its=0.4528, order_z=6.52, order_lcs=45, local_score=12.46,
        neighbour_agreement=0.71, neighbour_share=0.48, text_ratio=1.15, page_coverage_x=0.168,
        page_coverage_y=0.117,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    for chance in (0.0, 1.5, CLASSIFIER_PARAMS.min_local[0]):
        assert classify(dataclasses.replace(excerpt, local_score=chance)).relation == "UNRELATED"


def test_the_block_sentence_reads_its_thresholds_from_the_params():
    assert describe_local({"local_score": 0.0}) is None and describe_local(None) is None
    text = describe_local({"local_score": 12.46})
    assert text is not None and "10^12.5" in text and "shared text" in text
    assert "part evidence" in (describe_local({"local_score": 4.0}) or "")
    tight = ClassifierParams(min_local=(5.0, 8.0))
    assert "chance" in (describe_local({"local_score": 4.0}, tight) or "")
    assert "from 5 to 8" in (describe_local({"local_score": 4.0}, tight) or "")


def test_an_anthology_holding_most_of_a_book_leaves_it_an_end_of_its_own():
    """Recorded (generated seed 66 at 10 %, an edition against an anthology holding 84 % of
    itself from it): the anthology reads 0.86 covered, in the ramp noise leaves a true part
    in, but its last 13 % holds no aligned word over 15 mean steps between them: text the
    edition lacks, so no part of it. A part's title page leaves a few steps; a real volume's
    front matter up to 16 steps on 3-4 % of it, and it stays a part."""
    anthology = with_(
        book_similarity=0.008, page_similarity=0.0, page_match_fraction=0.85,
        page_agreement=0.694, n_pages_x=33, n_pages_y=20, n_page_matches=102, slope=1.744,
        offset=-21.1, fit_residual=0.574, delta_pages=13, delta_page_count=-15.7,
        consecutive_corr=0.292, sequential_fraction=0.8, coverage_x=0.275, coverage_y=0.862,
        span_x=0.333, span_y=0.85, x=4019, y=1524, shared=233, lcs=105, cs=0.042, its=0.541,
        order_z=35.0, order_lcs=105, neighbour_agreement=0.747, neighbour_share=0.427,
        text_ratio=0.984, page_coverage_x=0.333, page_coverage_y=0.891, open_end_x=0.406,
        open_end_y=0.129, open_end_steps_x=149.3, open_end_steps_y=15.2,
    )  # fmt: skip
    assert classify(anthology).relation == "OVERLAPPING_TEXT"
    for title_page in ({"open_end_steps_y": 3.0}, {"open_end_y": 0.036, "open_end_steps_y": 16}):
        r = classify(with_(**{**vars(anthology), **title_page}))
        assert (r.relation, r.direction) == ("CONTIGUOUS_SUBSET", "y_in_x")
    unknown = with_(**{**vars(anthology), "open_end_y": None, "open_end_steps_y": None})
    assert classify(unknown).relation == "CONTIGUOUS_SUBSET"  # signals stored before


def test_a_clean_part_leaves_no_end_of_many_steps():
    """Recorded (fresh seed 74 at 0 %, ``b000139`` / ``b000202``): an anthology holding a
    clean volume from its 9th % on reads 0.93 of it covered on a clean alignment (202 of 203
    shared words in order), its first 6.7 % without an aligned word over 14.3 mean steps. A
    noisy part can leave that much (up to 16), a clean one its title page: 8-10 steps suffice
    where the alignment is clean, and the same end on a noisy alignment is still a part."""
    anthology = with_(
        book_similarity=0.203, page_similarity=0.441, page_match_fraction=0.889,
        page_agreement=0.88, n_pages_x=9, n_pages_y=26, n_page_matches=201, slope=0.619,
        offset=8.074, fit_residual=0.333, delta_pages=-17, delta_page_count=11.972,
        consecutive_corr=0.222, sequential_fraction=1.0, coverage_x=0.933, coverage_y=0.188,
        span_x=0.889, span_y=0.192, contiguity_x=1.0, contiguity_y=1.0, x=390, y=1072,
        shared=203, lcs=202, cs=0.312, its=0.744, order_z=81.1, order_lcs=202,
        neighbour_agreement=0.997, neighbour_share=0.776, text_ratio=0.92,
        page_coverage_x=0.992, page_coverage_y=0.205, open_end_x=0.067, open_end_steps_x=14.3,
    )  # fmt: skip
    assert classify(anthology).relation == "OVERLAPPING_TEXT"
    title_page = classify(with_(**{**vars(anthology), "open_end_steps_x": 5.0}))
    assert (title_page.relation, title_page.direction) == ("CONTIGUOUS_SUBSET", "x_in_y")
    noisy = classify(with_(**{**vars(anthology), "lcs": 120, "order_lcs": 120}))
    assert (noisy.relation, noisy.direction) == ("CONTIGUOUS_SUBSET", "x_in_y")


def test_an_end_that_reads_as_chance_beside_the_shared_text_is_the_book_s_own():
    """Recorded (generated seed 61 at 5 %, ``b000268`` / ``b000270``): an anthology holds
    86 % of a 2,000-word volume; the volume's first 14 % holds no aligned word over 10.5 mean
    steps, which noise can leave a true part (up to 13 steps at 10 %). Read again beside the
    shared text in the anthology, that end finds 0.1 matches in order a step, chance, where a
    garbled part's end finds 0.9-2.4: from 8-12 steps it is the volume's own text."""
    anthology = with_(
        book_similarity=0.0156, page_similarity=0.125, page_match_fraction=0.8333,
        page_agreement=0.6537, n_pages_x=6, n_pages_y=34, n_page_matches=67, slope=0.9385,
        offset=25.6964, fit_residual=0.493, delta_pages=-28, delta_page_count=2.6109,
        consecutive_corr=0.6667, sequential_fraction=0.5, coverage_x=0.8628,
        coverage_y=0.1316, span_x=0.8333, span_y=0.1765, contiguity_x=1.0, contiguity_y=1.0,
        x=532, y=2462, shared=107, lcs=71, cs=0.062, its=0.5341, order_z=27.3147,
        order_lcs=71, neighbour_agreement=0.8514, neighbour_share=0.5522, text_ratio=0.9401,
        page_coverage_x=0.9925, page_coverage_y=0.1702, open_end_x=0.1372,
        open_end_steps_x=10.5197, open_end_reread_x=0.0951,
    )  # fmt: skip
    assert classify(anthology).relation == "OVERLAPPING_TEXT"
    garbled = classify(dataclasses.replace(anthology, open_end_reread_x=1.2))
    assert (garbled.relation, garbled.direction) == ("CONTIGUOUS_SUBSET", "x_in_y")
    unread = classify(dataclasses.replace(anthology, open_end_reread_x=None))
    assert unread.relation == "CONTIGUOUS_SUBSET"  # as before the end was read again
    short = classify(dataclasses.replace(anthology, open_end_steps_x=7.5))
    assert short.relation == "CONTIGUOUS_SUBSET"  # under 8 steps an end is what noise leaves


def test_an_overwhelming_block_is_shared_text_with_few_words_in_runs():
    """Recorded (generated seed 67 at 5 %, ``b000020`` / ``b000034``): a 290-word excerpt of a
    3,700-word volume in a 10,800-word anthology, 9 % of the volume. Its densest block is a
    chance of 1 in 10^11.4, but the runs hold 17 of its words where the overlap's size asks
    25: it read 0.36 shared text, UNRELATED. A block that unlikely counts on its own (from
    1 in 10^8, fully from 10^12); at a block the gate only opens on, the runs still decide
    (a stray run or two no, from 16 words yes since stop 61)."""
    excerpt = with_(
        book_similarity=0.0, page_similarity=0.0, page_match_fraction=0.09, page_agreement=0.8,
        n_pages_x=11, n_pages_y=35, n_page_matches=17, slope=1.0, offset=20.0,
        fit_residual=0.3, delta_pages=-24, delta_page_count=10.0, consecutive_corr=0.0,
        sequential_fraction=1.0, coverage_x=0.0882, coverage_y=0.0296, span_x=0.0909,
        span_y=0.0571, x=1150, y=2900, shared=124, lcs=28, cs=0.02, its=0.4076, order_z=4.56,
        order_lcs=28, local_score=11.42, neighbour_agreement=0.8, neighbour_share=0.5,
        text_ratio=1.0, page_coverage_x=0.09, page_coverage_y=0.06,
    )  # fmt: skip
    assert classify(excerpt).relation == "OVERLAPPING_TEXT"
    gate_only = dataclasses.replace(excerpt, local_score=CLASSIFIER_PARAMS.min_local[1])
    assert classify(dataclasses.replace(gate_only, n_page_matches=9)).relation == "UNRELATED"
    assert classify(gate_only).relation == "OVERLAPPING_TEXT"
