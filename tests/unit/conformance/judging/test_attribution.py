"""Attribution by counterfactual: a failure counts under the requirement governing the input that caused it,
and says what was varied; findings an input does not govern keep their rule."""

from __future__ import annotations

import pytest

from conformance import ImplementationBase
from conformance.boundary._protocol import (
    Block,
    Hints,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    WireCandidate,
)
from conformance.judging import _spec_model as model
from conformance.judging._judge import Judge

CONFIG = PostProcessConfig(return_n=3)


def _quality(c: WireCandidate, n: int, max_l2: float) -> float:
    canonical = model.canonical(c.score_label)
    if canonical == "dense":
        return model.dense_quality(c.score, max_l2)
    if c.dense_distance is not None:
        return model.dense_quality(c.dense_distance, max_l2)
    return max(0.0, 1 - (c.original_rank - 1) / n)


class Straight(ImplementationBase):
    """A plain conforming post-process; subclasses break one thing."""

    name = "straight"
    version = "0"
    capabilities = ("post_process",)

    def order(self, request: PostProcessRequest, scored: list[tuple[WireCandidate, float]]) -> list:
        return sorted(scored, key=lambda s: s[0].original_rank)

    def quality_of(self, c: WireCandidate, n: int, max_l2: float) -> float:
        return _quality(c, n, max_l2)

    def label_of(self, c: WireCandidate) -> str:
        return model.canonical(c.score_label) or c.score_label

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        n = len(request.candidates)
        scored = [(c, self.quality_of(c, n, request.config.max_l2_distance)) for c in request.candidates]
        kept = self.order(request, scored)[: request.config.return_n]
        blocks = [
            Block(
                evidence_key=f"{c.doc_id}#{c.chunk_index}",
                doc_id=c.doc_id,
                chunk_index=c.chunk_index,
                original_rank=c.original_rank,
                quality_score=q,
                score_label=self.label_of(c),
            )
            for c, q in kept
        ]
        top = max((b.quality_score for b in blocks), default=None)
        return PostProcessReply(
            blocks=tuple(blocks),
            relevance_level="X",
            top_quality_score=top,
            is_low_quality=top is None or top < request.config.reference_threshold,
        )


class HintBoost(Straight):
    def order(self, request, scored):
        words = request.hints.keywords
        return sorted(scored, key=lambda s: (-sum(w in s[0].text for w in words), s[0].original_rank))


class DistanceOrder(Straight):
    def order(self, request, scored):
        return sorted(scored, key=lambda s: (s[0].dense_distance or 0.0, s[0].original_rank))


class UnclampedDistanceQuality(Straight):
    def quality_of(self, c, n, max_l2):
        if c.dense_distance is not None:
            return 1 - c.dense_distance / max_l2  # may fall below 0
        return super().quality_of(c, n, max_l2)


class AliasAsDistance(Straight):
    def quality_of(self, c, n, max_l2):
        if c.score_label == "rrf_fused":
            return model.dense_quality(c.score, max_l2)
        return super().quality_of(c, n, max_l2)

    def quality_score(self, request: QualityRequest) -> float:
        raise NotImplementedError


def _judge(implementation: Straight) -> Judge:
    return Judge(implementation, implementation.describe())


def _cand(doc: str, rank: int, text: str = "", *, label: str = "hybrid", dd: float | None = None):
    return WireCandidate(
        doc_id=doc,
        chunk_index=0,
        text=text,
        original_rank=rank,
        score=0.03 - rank / 1000,
        score_label=label,
        dense_distance=dd,
    )


def _fails(judge: Judge, request: PostProcessRequest) -> model.SpecViolationError:
    with pytest.raises(model.SpecViolationError) as caught:
        judge.post_process(request)
    return caught.value


def test_a_conforming_post_process_passes_every_variation() -> None:
    request = PostProcessRequest(
        candidates=(_cand("a", 1, "refund"), _cand("b", 2, dd=0.4)),
        hints=Hints(keywords=("refund",)),
        config=CONFIG,
    )
    assert _judge(Straight()).post_process(request).blocks


def test_hints_that_reorder_count_under_rank_order_and_say_so() -> None:
    request = PostProcessRequest(
        candidates=(_cand("a", 1), _cand("b", 2, "refund policy")),
        hints=Hints(keywords=("refund",)),
        config=CONFIG,
    )
    error = _fails(_judge(HintBoost()), request)
    assert error.requirements == ("rank-order",)  # already R4's: its own rule says more than no-boost
    assert "without the L0 hints" in str(error)


def test_a_distance_that_reorders_counts_under_r7() -> None:
    request = PostProcessRequest(
        candidates=(_cand("a", 1, dd=1.5), _cand("b", 2, dd=0.2)),
        config=CONFIG,
    )
    error = _fails(_judge(DistanceOrder()), request)
    # Both sentences break: R4's order, and R7's "sort order SHALL still follow originalRank".
    assert {"rank-order", "dense-distance-order"} <= set(error.rules)
    assert set(error.requirements) == {"rank-order", "dense-distance-gates"}
    assert "without denseDistance" in str(error)


def test_a_quality_wrong_only_with_a_distance_stays_the_normalizers() -> None:
    request = PostProcessRequest(candidates=(_cand("a", 1, dd=3.0), _cand("b", 2, dd=0.2)), config=CONFIG)
    error = _fails(_judge(UnclampedDistanceQuality()), request)
    assert "quality-range" in error.rules
    assert "single-normalizer" in error.requirements
    assert "dense-distance-gates" not in error.requirements


def test_an_alias_read_as_a_distance_counts_under_r1() -> None:
    request = PostProcessRequest(
        candidates=(_cand("a", 1, label="rrf_fused"), _cand("b", 2, label="rrf_fused")),
        config=CONFIG,
    )
    error = _fails(_judge(AliasAsDistance()), request)
    assert set(error.requirements) == {"score-labels"}
    assert "with the canonical labels" in str(error)


def test_retry_evidence_that_the_hints_explain_counts_under_no_boost_and_the_gates_stay() -> None:
    from conformance.judging._attribution import HINTS, reattribute

    evidence = model.violation("retry-evidence", "merged retry evidence", "the best chunk a#0", "b#0, c#0")
    gate = model.violation("low-quality", "isLowQuality", "True", "False")
    moved, kept = reattribute([evidence, gate], HINTS)
    assert (moved.rule.id, moved.requirement) == ("no-boost", "rank-order")
    assert "seen by retry-evidence" in moved.actual
    assert "without the L0 hints" in (moved.varied or "")
    assert kept.rule.id == "low-quality"  # a gate the hints flip is still R5's


def test_engine_calls_only_the_category_filter_makes_count_under_the_filter_and_dense_only() -> None:
    from conformance.judging._attribution import CATEGORY, reattribute

    calls = model.violation("dense-only", "dense-mode search", "dense ANN searches only", "Query(category)")
    hits = model.violation("dense-hits", "dense hits", "the category's nearest", "other rows")
    path = model.violation("retry-path", "lookup", "'filtered'", "'unfiltered_retry'")
    moved = reattribute([calls, hits, path], CATEGORY)
    assert [(v.rule.id, v.requirement) for v in moved] == [
        ("dense-only", "dense-baseline"),  # still R6's: another kind of call
        ("category-filter", "quality-gates"),  # and the filter's, which alone makes it
        ("category-filter", "quality-gates"),
        ("retry-path", "quality-gates"),
    ]
