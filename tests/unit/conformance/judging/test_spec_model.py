"""The executable model of the spec, on hand-made replies: what it fails, and every freedom it must pass.

Each case is written from a sentence of the spec (or a reading in features/spec/readings.md), not from
any implementation's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.boundary._protocol import Block, Dropped, QualityRequest
from conformance.judging import _spec_model as model
from tests.unit.conformance.judging._model_cases import CONFIG, block, cand, dq, reply, rules

# -- labels and the normalizer ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "canonical"),
    [("l2_distance", "dense"), ("rrf_fused", "hybrid"), ("bm25_only_no_dense", "hybrid"), ("dense", "dense")],
)
def test_aliases_must_canonicalize(label: str, canonical: str) -> None:
    assert model.check_label(label, canonical) == []
    other = "hybrid" if canonical == "dense" else "dense"
    assert rules(model.check_label(label, other)) == {"canonical-label"}


def test_unknown_labels_are_not_judged() -> None:
    assert model.check_label("L2_DISTANCE", "anything") == []


@pytest.mark.parametrize(("d", "m", "q"), [(0.5, 2, 0.75), (3.0, 2, 0.0), (None, 4, 0.0), (1, 4, 0.75)])
def test_dense_formula_is_pinned(d: float | None, m: float, q: float) -> None:
    request = QualityRequest(score_label="dense", score=d, max_l2_distance=m)
    assert model.check_quality(request, q) == []
    assert rules(model.check_quality(request, q + 0.01)) == {"dense-formula"}


def test_float32_arithmetic_conforms_but_rounding_to_four_decimals_does_not() -> None:
    request = QualityRequest(score_label="dense", score=1.00008, max_l2_distance=2.0)
    exact = 1 - 1.00008 / 2
    in_float32 = float(np.float32(1) - np.float32(1.00008) / np.float32(2))
    assert model.check_quality(request, in_float32) == []
    assert rules(model.check_quality(request, round(exact, 4))) == {"dense-formula"}


def test_quality_outside_0_and_1_breaks_the_range() -> None:
    request = QualityRequest(score_label="hybrid", original_rank=3, batch_size=4)
    assert rules(model.check_quality(request, -0.1)) == {"quality-range"}
    assert rules(model.check_quality(request, float("nan"))) == {"quality-range"}


def test_hybrid_rank_one_is_one_and_other_ranks_are_free() -> None:
    assert rules(model.check_quality(QualityRequest(score_label="rrf_fused", original_rank=1), 0.9)) == {
        "rank-one"
    }
    assert model.check_quality(QualityRequest(score_label="hybrid", original_rank=2, batch_size=9), 0.0) == []


def test_hybrid_with_dense_distance_may_use_the_formula_or_a_rank_mapping() -> None:
    request = QualityRequest(score_label="hybrid", original_rank=1, batch_size=3, dense_distance=1.0)
    assert model.check_quality(request, 0.5) == []  # the L2 formula on denseDistance
    assert model.check_quality(request, 1.0) == []  # rank 1 of any rank mapping
    # 1 - d/4, another max: R7 fixes no formula for the "absolute similarity", so the kit only notes it
    found = model.check_quality(request, 0.75)
    assert rules(found) == {"dense-distance-formula"}
    assert model.failing(found) == []


# -- post-process: structure ------------------------------------------------------------------------------


def test_a_conforming_reply_passes() -> None:
    cs = [cand("A", 1, 0.2), cand("B", 2, 0.6), cand("C", 3, 1.8)]
    assert model.check_post_process(cs, CONFIG, reply([block(c, dq(c.score)) for c in cs])) == []


def test_out_of_rank_order_fails() -> None:
    cs = [cand("A", 1, 0.2), cand("B", 2, 0.6)]
    assert "rank-order" in rules(
        model.check_post_process(cs, CONFIG, reply([block(cs[1], 0.7), block(cs[0], 0.9)]))
    )


def test_equal_ranks_may_come_in_either_order() -> None:
    cs = [cand("A", 1, 0.2), cand("B", 2, 0.6), cand("C", 2, 0.6)]
    blocks = [block(cs[0], 0.9), block(cs[2], 0.7), block(cs[1], 0.7)]
    assert model.check_post_process(cs, CONFIG, reply(blocks)) == []


def test_silently_dropping_the_best_ranked_candidate_fails() -> None:
    cs = [cand("A", 1, 0.2), cand("B", 2, 0.6)]
    assert rules(model.check_post_process(cs, CONFIG, reply([block(cs[1], 0.7)]))) == {"best-ranks-kept"}


def test_caps_keep_the_best_ranked_chunks() -> None:
    config = CONFIG.model_copy(update={"max_chunks_per_document": 1, "return_n": 2})
    cs = [cand("A", 2, 0.3, chunk=0), cand("A", 1, 0.9, chunk=1), cand("B", 3, 0.5)]
    good = [block(cs[1], dq(0.9)), block(cs[2], dq(0.5))]
    assert model.check_post_process(cs, config, reply(good)) == []
    best_quality_instead = [block(cs[0], dq(0.3)), block(cs[2], dq(0.5))]
    assert "best-ranks-kept" in rules(model.check_post_process(cs, config, reply(best_quality_instead)))


def test_blocks_must_be_candidates_with_chunk_identity_keys() -> None:
    cs = [cand("A", 1, 0.2)]
    stranger = Block(
        evidence_key="Z#0", doc_id="Z", chunk_index=0, original_rank=1, quality_score=0.9, score_label="dense"
    )
    wrong_key = block(cs[0], 0.9).model_copy(update={"evidence_key": "A-0"})
    assert "evidence-identity" in rules(model.check_post_process(cs, CONFIG, reply([stranger])))
    # The evidenceKey spelling is the protocol's, not the spec's: noted, never failed.
    found = model.check_post_process(cs, CONFIG, reply([wrong_key]))
    assert rules(found) == {"evidence-key"}
    assert model.failing(found) == []
    renumbered = block(cs[0], 0.9).model_copy(update={"original_rank": 7})
    found = model.check_post_process(cs, CONFIG, reply([renumbered]))
    assert rules(found) == {"evidence-key"}
    assert model.failing(found) == []


def test_duplicates_and_return_n() -> None:
    cs = [cand("A", 1, 0.2), cand("A", 2, 0.2)]
    found = model.check_post_process(cs, CONFIG, reply([block(cs[0], 0.9), block(cs[1], 0.9)]))
    assert {"dedup", "best-ranks-kept"} <= rules(found)
    config = CONFIG.model_copy(update={"return_n": 1})
    more = [cand("A", 1, 0.2), cand("B", 2, 0.4)]
    found = model.check_post_process(more, config, reply([block(c, dq(c.score)) for c in more]))
    assert {"return-n", "best-ranks-kept"} <= rules(found)


def test_block_labels_keep_their_candidates_canonical_label() -> None:
    cs = [cand("A", 1, 0.03, label="rrf_fused", dd=0.4)]
    assert model.check_post_process(cs, CONFIG, reply([block(cs[0], 1.0, "hybrid")])) == []
    # An evidence block is a new emission: echoing the candidate's alias breaks R1.
    assert rules(model.check_post_process(cs, CONFIG, reply([block(cs[0], 1.0, "rrf_fused")]))) == {
        "emitted-alias"
    }
    assert rules(model.check_post_process(cs, CONFIG, reply([block(cs[0], 1.0, "dense")]))) == {
        "dense-distance-label"
    }
    cs2 = [cand("A", 1, 0.03, label="hybrid")]
    assert rules(
        model.check_post_process(cs2, CONFIG, reply([block(cs2[0], 1.0, "bm25_only_no_dense")]))
    ) == {"no-bm25-only-label"}


# -- post-process: qualities --------------------------------------------------------------------------------


def test_dense_blocks_carry_the_formula_for_the_configured_max() -> None:
    config = CONFIG.model_copy(update={"max_l2_distance": 4.0})
    cs = [cand("A", 1, 1.0)]
    assert model.check_post_process(cs, config, reply([block(cs[0], 0.75)])) == []
    found = model.check_post_process(cs, config, reply([block(cs[0], 0.5)], low=False))
    assert "dense-formula" in rules(found)


@pytest.mark.parametrize(
    "mapping", [lambda r: 1 / r, lambda r: 0.5 ** (r - 1), lambda r: max(0.0, 1 - (r - 1) / 3)]
)
def test_any_monotone_rank_mapping_conforms(mapping) -> None:
    cs = [cand(d, r, 0.03 - r / 1000, label="hybrid") for r, d in enumerate("ABCDE", start=1)]
    assert model.check_post_process(cs, CONFIG, reply([block(c, mapping(c.original_rank)) for c in cs])) == []


def test_equal_ranks_get_equal_quality_and_qualities_never_rise() -> None:
    cs = [
        cand("A", 1, 0.03, label="hybrid"),
        cand("B", 2, 0.02, label="hybrid"),
        cand("C", 2, 0.02, label="hybrid"),
    ]
    by_position = [block(cs[0], 1.0), block(cs[1], 0.8), block(cs[2], 0.6)]
    assert rules(model.check_post_process(cs, CONFIG, reply(by_position))) == {"rank-monotone"}
    rising = [block(cs[0], 1.0), block(cs[1], 0.5), block(cs[2], 0.5)]
    assert model.check_post_process(cs, CONFIG, reply(rising)) == []
    assert rules(model.check_post_process(cs[:2], CONFIG, reply([block(cs[0], 0.9), block(cs[1], 0.9)]))) == {
        "rank-one"
    }


def test_dense_distance_on_every_hit_allows_the_formula_or_a_rank_mapping() -> None:
    cs = [cand("A", 1, 0.033, label="hybrid", dd=1.2), cand("B", 2, 0.032, label="hybrid", dd=0.4)]
    assert model.check_post_process(cs, CONFIG, reply([block(cs[0], 0.4), block(cs[1], 0.8)])) == []
    assert model.check_post_process(cs, CONFIG, reply([block(cs[0], 1.0), block(cs[1], 0.5)])) == []
    quarter = [block(cs[0], 0.7), block(cs[1], 0.9)]  # 1 - d/4: another similarity, noted
    found = model.check_post_process(cs, CONFIG, reply(quarter))
    assert rules(found) == {"dense-distance-formula"}
    assert model.failing(found) == []
    rising = [block(cs[0], 0.9), block(cs[1], 0.7)]  # rises with the distance, and no rank mapping either
    assert "dense-distance-quality" in rules(model.check_post_process(cs, CONFIG, reply(rising)))


def test_mixed_dense_distance_batches_follow_the_distance_or_one_rank_mapping() -> None:
    cs = [
        cand("A", 1, 0.033, label="hybrid", dd=1.2),
        cand("B", 2, 0.032, label="hybrid"),
        cand("C", 3, 0.031, label="hybrid", dd=0.2),
    ]
    by_distance_where_given = [block(cs[0], 0.4), block(cs[1], 0.9), block(cs[2], 0.9)]
    assert model.check_post_process(cs, CONFIG, reply(by_distance_where_given)) == []
    rank_only = [block(cs[0], 1.0), block(cs[1], 0.5), block(cs[2], 0.2)]
    assert model.check_post_process(cs, CONFIG, reply(rank_only)) == []
    quarter = [block(cs[0], 0.7), block(cs[1], 0.9), block(cs[2], 0.95)]  # 1 - d/4 where given: noted
    assert model.failing(model.check_post_process(cs, CONFIG, reply(quarter))) == []
    against = [block(cs[0], 0.9), block(cs[1], 0.9), block(cs[2], 0.3)]  # nearer, worse: no similarity
    assert rules(model.check_post_process(cs, CONFIG, reply(against))) == {"dense-distance-quality"}


def test_the_one_normalizer_is_asked_with_either_batch_size() -> None:
    cs = [
        cand("A", 1, 0.03, label="hybrid"),
        cand("A", 2, 0.02, label="hybrid"),
        cand("B", 3, 0.01, label="hybrid"),
    ]

    def after_dedup(request: QualityRequest) -> float:
        return 1 - (request.original_rank - 1) / request.batch_size

    blocks = [block(cs[0], 1.0), block(cs[2], 1 - 2 / 2)]  # n = 2 distinct chunks
    assert model.check_post_process(cs, CONFIG, reply(blocks), normalizer=after_dedup) == []
    found = model.check_post_process(
        cs, CONFIG, reply([block(cs[0], 1.0), block(cs[2], 0.1)]), normalizer=after_dedup
    )
    assert "one-normalizer" in rules(found)


def test_ranks_past_the_count_are_judged_on_the_range_and_any_reading_of_n() -> None:
    """Readings 22: a second page (ranks 11 and 12 of two candidates). n may be the count or the highest
    rank; a normalizer may decline a rank past its n; a quality below 0 breaks the range."""
    cs = [cand("A", 11, 0.03, label="hybrid"), cand("B", 12, 0.02, label="hybrid")]

    def on_highest_declining_past(request: QualityRequest) -> float | None:
        if request.original_rank > request.batch_size:
            return None  # what the judge makes of a normalizer that rejects the question
        return 1 - (request.original_rank - 1) / request.batch_size

    on_highest = [block(cs[0], 1 - 10 / 12), block(cs[1], 1 - 11 / 12)]
    assert model.check_post_process(cs, CONFIG, reply(on_highest), normalizer=on_highest_declining_past) == []
    clamped_on_count = [block(cs[0], 0.0), block(cs[1], 0.0)]
    assert model.check_post_process(cs, CONFIG, reply(clamped_on_count)) == []
    unclamped_on_count = [block(cs[0], 1 - 10 / 2), block(cs[1], 1 - 11 / 2)]
    assert "quality-range" in rules(model.check_post_process(cs, CONFIG, reply(unclamped_on_count)))
    neither = [block(cs[0], 0.5), block(cs[1], 0.4)]
    found = model.check_post_process(cs, CONFIG, reply(neither), normalizer=on_highest_declining_past)
    assert "one-normalizer" in rules(found)


# -- gates -------------------------------------------------------------------------------------------------


def test_low_quality_is_the_top_quality_below_the_threshold() -> None:
    cs = [cand("A", 1, 1.01)]
    assert model.check_post_process(cs, CONFIG, reply([block(cs[0], dq(1.01))], low=True)) == []
    assert rules(model.check_post_process(cs, CONFIG, reply([block(cs[0], dq(1.01))], low=False))) == {
        "low-quality"
    }
    assert rules(model.check_post_process([], CONFIG, reply([], low=False))) == {"low-quality"}


def test_a_gate_that_follows_a_wrong_quality_is_the_qualitys_fault() -> None:
    cs = [cand("A", 1, 1.2)]  # quality 0.4: low
    wrong = reply([block(cs[0], 0.7)], low=False, top=0.7)  # consistent with its own wrong quality
    assert rules(model.check_post_process(cs, CONFIG, wrong)) == {"dense-formula"}
    inconsistent = reply([block(cs[0], 0.4)], low=False, top=0.7)  # right quality, gates of another
    assert rules(model.check_post_process(cs, CONFIG, inconsistent)) == {"low-quality", "top-quality"}


def test_top_may_be_the_first_block_or_the_highest() -> None:
    cs = [cand("A", 1, 0.033, label="hybrid", dd=1.2), cand("B", 2, 0.032, label="hybrid", dd=0.4)]
    blocks = [block(cs[0], 0.4), block(cs[1], 0.8)]
    assert model.check_post_process(cs, CONFIG, reply(blocks, low=True, top=0.4)) == []
    assert model.check_post_process(cs, CONFIG, reply(blocks, low=False, top=0.8)) == []
    assert rules(model.check_post_process(cs, CONFIG, reply(blocks, low=False, top=0.6))) == {"top-quality"}


def test_top_over_removed_candidates_fails() -> None:
    config = CONFIG.model_copy(update={"return_n": 1})
    cs = [cand("A", 1, 1.6), cand("B", 2, 0.1)]  # B outscores A but return-n removes it
    found = model.check_post_process(cs, config, reply([block(cs[0], dq(1.6))], low=False, top=dq(0.1)))
    assert {"low-quality", "top-quality"} <= rules(found)


def test_a_gate_at_the_threshold_within_float32_may_go_either_way() -> None:
    cs = [cand("A", 1, 1.0000004)]
    assert model.check_post_process(cs, CONFIG, reply([block(cs[0], 0.5)], low=False)) == []
    assert model.check_post_process(cs, CONFIG, reply([block(cs[0], 0.5)], low=True)) == []


# -- dropped -----------------------------------------------------------------------------------------------


def test_a_dropped_list_is_optional_but_when_given_complete_and_true() -> None:
    config = CONFIG.model_copy(update={"max_chunks_per_document": 1, "return_n": 2})
    cs = [
        cand("A", 1, 0.2),
        cand("A", 2, 0.3, chunk=1),
        cand("B", 3, 0.4),
        cand("A", 4, 0.2),
        cand("C", 5, 0.1),
    ]
    kept = [block(cs[0], dq(0.2)), block(cs[2], dq(0.4))]
    assert model.check_post_process(cs, config, reply(kept)) == []
    true = (
        Dropped(evidence_key="A#1", original_rank=2, reason="per_document_cap"),
        Dropped(evidence_key="C#0", original_rank=5, reason="return_n"),
        Dropped(evidence_key="A#0", original_rank=4, reason="duplicate"),
    )
    assert model.check_post_process(cs, config, reply(kept, dropped=true)) == []
    # The spec names no dropped list: what is wrong with one is noted, never failed (readings 16).
    lying = (true[0].model_copy(update={"reason": "return_n"}), *true[1:])
    twice = (*true, true[2])
    for given in (lying, true[:2], twice):
        found = model.check_post_process(cs, config, reply(kept, dropped=given))
        assert rules(found) == {"dropped"}
        assert model.failing(found) == []
    own_codes = tuple(
        d.model_copy(update={"reason": code}) for d, code in zip(true, ("CAP", "N", "DUP"), strict=True)
    )
    assert model.check_post_process(cs, config, reply(kept, dropped=own_codes)) == []


def test_extra_reply_fields_are_allowed() -> None:
    cs = [cand("A", 1, 0.2)]
    extra = reply([block(cs[0], dq(0.2))], completeness="PARTIAL")
    assert model.check_post_process(cs, CONFIG, extra) == []


def test_hybrid_blocks_ordered_by_their_dense_distance_break_r7_as_well() -> None:
    cs = [
        cand("A", 1, 0.033, label="hybrid", dd=1.2),
        cand("B", 2, 0.032, label="hybrid", dd=0.4),
        cand("C", 3, 0.031, label="hybrid", dd=0.8),
    ]
    nearest_first = [block(cs[1], 0.8), block(cs[2], 0.6), block(cs[0], 0.4)]
    found = rules(model.check_post_process(cs, CONFIG, reply(nearest_first)))
    assert {"rank-order", "dense-distance-order"} <= found
    two = [block(cs[1], 0.8), block(cs[0], 0.4)]  # two blocks nearest first: as likely chance as a cause
    assert "dense-distance-order" not in rules(model.check_post_process(cs[:2], CONFIG, reply(two)))
