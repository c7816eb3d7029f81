"""R4 and R5: post-processing keeps retrieval order, applies structural caps, gates on qualityScore."""

import pytest

from reference import (
    Candidate,
    CompletenessHint,
    L0Hints,
    PostProcessResult,
    RelevanceLevel,
    Settings,
    post_process,
)

HIGH_LEVELS = {RelevanceLevel.PRECISE, RelevanceLevel.HIGHLY_RELEVANT}


def cand(doc, chunk, rank, label="hybrid", **extra):
    return Candidate(doc_id=doc, chunk_index=chunk, original_rank=rank, score_label=label, **extra)


def keys(result):
    return [b.evidence_key for b in result.blocks]


def drops(result):
    return [(d.evidence_key, d.original_rank, d.reason) for d in result.dropped]


def dense_result(distance, **settings):
    """One dense hit at the given L2 distance, maxL2 2.0 unless overridden."""
    return post_process([cand("d", 0, 1, "dense", score=distance)], Settings(**settings))


# -- R4: keyword overlap does not promote a lower rank ------------------------------------------------

HINTS = L0Hints(domain="billing", entities=("Acme Pay",), keywords=("refund", "invoice", "chargeback"))


@pytest.mark.parametrize("reverse_input", [False, True])
@pytest.mark.parametrize("label", ["hybrid", "rrf_fused"])
def test_keyword_overlap_does_not_promote_lower_rank(reverse_input, label):
    a = cand("A", 0, 1, label, score=0.016, text="opening hours of the shop")
    b = cand("B", 0, 2, label, score=0.015, text="billing refund invoice chargeback for Acme Pay")
    batch = [b, a] if reverse_input else [a, b]
    result = post_process(batch, Settings(), hints=HINTS)
    assert keys(result) == ["A#0", "B#0"]
    assert result.blocks[0].quality_score >= result.blocks[1].quality_score
    assert "l0_keyword_overlap" in result.blocks[1].hit_reasons
    assert "l0_keyword_overlap" not in result.blocks[0].hit_reasons


def test_keyword_overlap_does_not_promote_lower_rank_in_dense_mode():
    a = cand("A", 0, 1, "dense", score=0.4, text="nothing relevant")
    b = cand("B", 0, 2, "dense", score=0.6, text="refund invoice chargeback")
    result = post_process([b, a], Settings(), hints=HINTS)
    assert keys(result) == ["A#0", "B#0"]


def test_hints_only_add_l0_hit_reasons():
    batch = [
        cand("A", 0, 1, "dense", score=0.3, text="Refund policy", source_type="faq"),
        cand("B", 2, 2, "dense", score=0.9, text="About ACME PAY billing", source_type="manual"),
        cand("C", 1, 3, "dense", score=1.7, text="unrelated"),
    ]
    hints = L0Hints(domain="billing", entities=("acme pay",), keywords=("refund",), source_type="faq")
    plain = post_process(batch, Settings())
    hinted = post_process(batch, Settings(), hints=hints)
    strip = {"hit_reasons"}
    assert [b.model_dump(exclude=strip) for b in hinted.blocks] == [
        b.model_dump(exclude=strip) for b in plain.blocks
    ]
    assert hinted.model_dump(exclude={"blocks"}) == plain.model_dump(exclude={"blocks"})
    assert [b.hit_reasons for b in plain.blocks] == [("retrieval_rank",)] * 3
    assert hinted.blocks[0].hit_reasons == ("retrieval_rank", "l0_keyword_overlap", "l0_source_type_match")
    assert hinted.blocks[1].hit_reasons == ("retrieval_rank", "l0_domain_overlap", "l0_entity_overlap")
    assert hinted.blocks[2].hit_reasons == ("retrieval_rank",)


# -- R4: structural caps after rank order --------------------------------------------------------------


def test_per_document_cap_keeps_the_best_ranked_chunks():
    batch = [
        cand("X", 3, 5),
        cand("X", 0, 2),
        cand("Y", 0, 3),
        cand("X", 1, 1),
        cand("X", 2, 4),
    ]
    result = post_process(batch, Settings(max_chunks_per_document=2, return_n=10))
    assert keys(result) == ["X#1", "X#0", "Y#0"]
    assert drops(result) == [("X#2", 4, "per_document_cap"), ("X#3", 5, "per_document_cap")]


@pytest.mark.parametrize("cap", [1, 2, 3, 4])
def test_per_document_cap_bounds_every_document(cap):
    batch = [cand(doc, i, rank) for rank, (doc, i) in enumerate(((d, i) for i in range(4) for d in "PQ"), 1)]
    result = post_process(batch, Settings(max_chunks_per_document=cap, return_n=50))
    for doc in "PQ":
        kept = [b.original_rank for b in result.blocks if b.doc_id == doc]
        capped = [d.original_rank for d in result.dropped if d.evidence_key.startswith(doc)]
        assert len(kept) == cap
        assert all(k < c for k in kept for c in capped)
        assert {d.reason for d in result.dropped} <= {"per_document_cap"}


def test_return_n_bounds_the_total_keeping_the_best_ranked():
    batch = [cand(f"doc{r}", 0, r) for r in (6, 3, 1, 5, 2, 4)]
    result = post_process(batch, Settings(return_n=3))
    assert keys(result) == ["doc1#0", "doc2#0", "doc3#0"]
    assert drops(result) == [("doc4#0", 4, "return_n"), ("doc5#0", 5, "return_n"), ("doc6#0", 6, "return_n")]


def test_cap_and_return_n_together():
    batch = [cand("X", 0, 1), cand("X", 1, 2), cand("X", 2, 3), cand("Y", 0, 4), cand("Z", 0, 5)]
    result = post_process(batch, Settings(max_chunks_per_document=2, return_n=3))
    assert keys(result) == ["X#0", "X#1", "Y#0"]
    assert drops(result) == [("X#2", 3, "per_document_cap"), ("Z#0", 5, "return_n")]


def test_duplicates_keep_the_best_rank():
    batch = [cand("X", 0, 5, text="late copy"), cand("Y", 0, 1), cand("X", 0, 2, text="early copy")]
    result = post_process(batch, Settings())
    assert keys(result) == ["Y#0", "X#0"]
    assert result.blocks[1].original_rank == 2
    assert result.blocks[1].excerpt == "early copy"
    assert drops(result) == [("X#0", 5, "duplicate")]


def test_duplicate_of_a_chunk_dropped_by_return_n_is_reported_as_duplicate():
    # The documented steps run dedup before the caps, so a second copy is a duplicate whatever happened
    # to the first; calling it return_n would tell the operator that a larger return-n brings it back.
    batch = [cand("A", 0, 1), cand("B", 0, 2), cand("B", 0, 3)]
    result = post_process(batch, Settings(return_n=1))
    assert drops(result) == [("B#0", 2, "return_n"), ("B#0", 3, "duplicate")]


def test_chunk_over_the_cap_is_reported_as_per_document_cap_even_after_return_n_is_full():
    # Raising return-n would never bring X#1 back (X#0 takes the document's only slot), so the reason
    # must name the cap, the step that comes first in the documented order.
    batch = [cand("A", 0, 1), cand("X", 0, 2), cand("X", 1, 3)]
    result = post_process(batch, Settings(return_n=1, max_chunks_per_document=1))
    assert drops(result) == [("X#0", 2, "return_n"), ("X#1", 3, "per_document_cap")]


def test_nothing_is_dropped_silently():
    batch = [cand(d, i, r) for r, (d, i) in enumerate([("a", 0), ("a", 0), ("a", 1), ("a", 2), ("b", 0)], 1)]
    result = post_process(batch, Settings(return_n=2, max_chunks_per_document=2))
    assert len(result.blocks) + len(result.dropped) == len(batch)


# -- ordering ------------------------------------------------------------------------------------------


def test_equal_original_ranks_keep_input_order():
    batch = [cand("p", 0, 1), cand("q", 0, 1), cand("r", 0, 2), cand("s", 0, 1)]
    assert keys(post_process(batch, Settings(return_n=10))) == ["p#0", "q#0", "s#0", "r#0"]
    assert keys(post_process(batch[::-1], Settings(return_n=10))) == ["s#0", "q#0", "p#0", "r#0"]


def test_dense_distance_does_not_reorder_or_relabel_hybrid_hits():
    batch = [
        cand("A", 0, 1, score=0.016, dense_distance=1.6),
        cand("B", 0, 2, score=0.015, dense_distance=0.1),
    ]
    result = post_process(batch, Settings())
    assert keys(result) == ["A#0", "B#0"]
    assert [b.score_label for b in result.blocks] == ["hybrid", "hybrid"]
    assert [b.score for b in result.blocks] == [0.016, 0.015]
    assert result.blocks[0].quality_score == pytest.approx(0.2, abs=1e-9)
    assert result.blocks[1].quality_score == pytest.approx(0.95, abs=1e-9)


@pytest.mark.parametrize(
    ("legacy", "canonical"), [("l2_distance", "dense"), ("bm25_only_no_dense", "hybrid")]
)
def test_blocks_carry_the_canonical_label(legacy, canonical):
    result = post_process([cand("A", 0, 1, legacy, score=0.2)], Settings())
    assert result.blocks[0].score_label == canonical


def test_rank_above_batch_size_gives_quality_in_unit_interval():
    batch = [cand("A", 0, 40), cand("B", 0, 3)]
    result = post_process(batch, Settings())
    assert keys(result) == ["B#0", "A#0"]
    assert all(0.0 <= b.quality_score <= 1.0 for b in result.blocks)
    assert result.blocks[0].quality_score >= result.blocks[1].quality_score


def test_reference_hybrid_batch_size_counts_candidates_before_dedup():
    # Reference choice (readings 4): n is the number of candidates handed in, duplicates included.
    batch = [cand("A", 0, 1), cand("A", 0, 2), cand("B", 0, 3), cand("C", 0, 4)]
    result = post_process(batch, Settings())
    assert [b.quality_score for b in result.blocks] == pytest.approx([1.0, 0.5, 0.25], abs=1e-9)


# -- R5: gates on qualityScore only --------------------------------------------------------------------


def test_empty_batch():
    result = post_process([], Settings())
    assert result.blocks == ()
    assert result.dropped == ()
    assert result.is_low_quality is True
    assert result.top_quality_score is None
    assert result.relevance_level is RelevanceLevel.NONE
    assert result.completeness is CompletenessHint.INSUFFICIENT


def test_default_settings_are_used_when_none_given():
    batch = [cand(f"d{r}", 0, r) for r in range(1, 9)]
    assert post_process(batch) == post_process(batch, Settings())
    assert len(post_process(batch).blocks) == Settings().return_n


@pytest.mark.parametrize(
    ("distance", "low"),
    [(0.0, False), (0.9, False), (1.0, False), (1.0000001, True), (1.5, True), (2.0, True), (None, True)],
)
@pytest.mark.parametrize("hints", [None, L0Hints(), L0Hints(keywords=("absent",), domain="nowhere")])
def test_low_quality_compares_top_quality_to_reference_threshold(distance, low, hints):
    # maxL2 2.0, reference 0.5: distance 1.0 is quality exactly 0.5, at the threshold, so usable.
    batch = [cand("A", 0, 1, "dense", score=distance, text="no hint words here")]
    result = post_process(batch, Settings(max_l2_distance=2.0, reference_threshold=0.5), hints=hints)
    assert result.is_low_quality is low


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.8, 1.0])
def test_low_quality_follows_the_configured_reference_threshold(threshold):
    settings = Settings(reference_threshold=threshold, highly_relevant_threshold=1.0)
    for distance in (0.0, 0.4, 1.0, 1.6, 2.0):
        quality = max(0.0, 1.0 - distance / 2.0)
        assert dense_result(distance, **settings.model_dump()).is_low_quality is (quality < threshold)


def test_low_quality_uses_the_top_block_not_the_later_ones():
    batch = [cand("A", 0, 1, "dense", score=0.2), cand("B", 0, 2, "dense", score=1.9)]
    result = post_process(batch, Settings())
    assert result.top_quality_score == pytest.approx(0.9, abs=1e-9)
    assert result.is_low_quality is False


@pytest.mark.parametrize("distance", [0.0, 0.2, 0.5])
def test_precise_at_or_above_highly_relevant_threshold_without_hints(distance):
    # maxL2 2.0, highly-relevant 0.75: distance 0.5 is quality exactly 0.75.
    for hints in (None, L0Hints(domain="x", entities=("y",), keywords=("z",))):
        batch = [cand("A", 0, 1, "dense", score=distance, text="no support")]
        result = post_process(batch, Settings(highly_relevant_threshold=0.75), hints=hints)
        assert result.relevance_level in HIGH_LEVELS
        assert result.is_low_quality is False


@pytest.mark.parametrize("distance", [0.5000001, 0.8, 1.0, 1.5, 2.0])
def test_below_highly_relevant_threshold_gives_a_lower_level(distance):
    result = dense_result(distance, highly_relevant_threshold=0.75)
    assert result.relevance_level not in HIGH_LEVELS


def test_hybrid_rank_one_without_dense_distance_is_highly_relevant():
    result = post_process([cand("A", 0, 1, score=0.0001), cand("B", 0, 2, score=0.00009)], Settings())
    assert result.top_quality_score == 1.0
    assert result.relevance_level in HIGH_LEVELS
    assert result.is_low_quality is False


@pytest.mark.parametrize(
    ("distance", "level", "completeness"),
    [
        (0.0, RelevanceLevel.PRECISE, CompletenessHint.SUFFICIENT),
        (0.5, RelevanceLevel.PRECISE, CompletenessHint.SUFFICIENT),
        (0.8, RelevanceLevel.RELEVANT, CompletenessHint.PARTIAL),
        (1.0, RelevanceLevel.RELEVANT, CompletenessHint.PARTIAL),
        (1.2, RelevanceLevel.WEAK, CompletenessHint.INSUFFICIENT),
        (2.0, RelevanceLevel.NONE, CompletenessHint.INSUFFICIENT),
        (None, RelevanceLevel.NONE, CompletenessHint.INSUFFICIENT),
    ],
)
def test_reference_levels_below_the_threshold(distance, level, completeness):
    # Lower levels are implementation-defined (readings 6); these are the reference's own.
    result = dense_result(distance)
    assert result.relevance_level is level
    assert result.completeness is completeness


def test_reference_top_quality_is_the_highest_accepted_quality():
    # Reference reading of "top qualityScore" (readings 3) where first and highest differ.
    batch = [cand("A", 0, 1, dense_distance=1.8), cand("B", 0, 2, dense_distance=0.2)]
    result = post_process(batch, Settings())
    assert result.top_quality_score == pytest.approx(0.9, abs=1e-9)
    assert keys(result) == ["A#0", "B#0"]


def test_reference_excerpt_is_cut_to_excerpt_max_chars():
    result = post_process([cand("A", 0, 1, text="abcdefghij")], Settings(excerpt_max_chars=4))
    assert result.blocks[0].excerpt == "abcd"


def test_result_is_a_post_process_result():
    assert isinstance(post_process([cand("A", 0, 1)]), PostProcessResult)
