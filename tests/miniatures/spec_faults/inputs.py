"""Faults a kit catches only if it varies the inputs the spec reads (maxL2Distance, thresholds,
rrfK, hints, denseDistance, retry settings) instead of sending its defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.boundary._protocol import (
    Hints,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    SearchRequest,
    WireCandidate,
)
from tests.miniatures.from_the_spec import FromTheSpec, Scored, hint_overlaps

from ._common import DEFAULTS, boost

__all__ = [
    "AliasBackfilledAsDense",
    "AliasLiteralWithDenseDistance",
    "DenseDistanceDefaultMaxInPostProcess",
    "DenseDistanceOnlyWhenAllHave",
    "EmptyResultNotLow",
    "FixedRrfK",
    "LookupDefaultThresholds",
    "LookupHintBoost",
    "LookupIgnoresCaps",
    "ManyKeywordBoost",
    "MinMaxRankBatchOfOne",
    "NullDenseScoreFullQuality",
    "PostProcessDefaultMaxL2",
    "RetryBelowHighlyRelevant",
    "RetryKeepsCategoryFilter",
    "RetryLowBothKeepsFiltered",
    "RetryOnL2Cutoff",
    "TopQualityOverAllCandidates",
    "UsableNeedsHintSupport",
]


# == 1. inputs a naive kit never varies =============================================================


class PostProcessDefaultMaxL2(FromTheSpec):
    """single-normalizer: "``max(0, 1 - min(d, maxL2Distance) / maxL2Distance)``" with the configured max.

    The post-processor was written when every deployment used unit vectors and normalizes with the
    constant 2.0; the normalizer API (``quality_score``) takes the configured value.
    """

    def assemble(self, candidates, config, hints, *, order=None):  # type: ignore[no-untyped-def]
        return super().assemble(
            candidates, config.model_copy(update={"max_l2_distance": 2.0}), hints, order=order
        )


class DenseDistanceDefaultMaxInPostProcess(FromTheSpec):
    """single-normalizer: "using one normalizer API". Post-process normalizes a hybrid hit's
    ``denseDistance`` with the default max 2.0 through a helper of its own; dense scores and the
    ``quality_score`` API use the configured ``maxL2Distance``. (The helper was added with R7's optional
    distance, after the config plumbing existed.)
    """

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        scored = super().score_batch(candidates, config)
        return [
            Scored(s.candidate, self.l2_quality(s.candidate.dense_distance, 2.0))
            if self.canonicalize_label(s.candidate.score_label) == "hybrid"
            and s.candidate.dense_distance is not None
            else s
            for s in scored
        ]


class DenseDistanceOnlyWhenAllHave(FromTheSpec):
    """single-normalizer: "one normalizer API that branches only on canonical label". Post-process uses
    ``denseDistance`` only when every hybrid candidate of the batch carries one, else the rank mapping for
    all; so a hit's quality depends on its neighbours and differs from ``quality_score`` for that hit.
    (Written to avoid mixing two scales in one batch; see readings 5: arguable.)
    """

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        hybrid = [c for c in candidates if self.canonicalize_label(c.score_label) == "hybrid"]
        if not any(c.dense_distance is None for c in hybrid):
            return super().score_batch(candidates, config)
        stripped = [c.model_copy(update={"dense_distance": None}) for c in candidates]
        scored = super().score_batch(stripped, config)
        return [Scored(c, s.quality) for c, s in zip(candidates, scored, strict=True)]


class LookupDefaultThresholds(FromTheSpec):
    """quality-gates: "low-quality detection SHALL compare the top qualityScore to the configured
    reference threshold". ``lookup`` builds its gates from the service defaults (0.75 / 0.5); only
    ``post_process`` receives the request's thresholds.
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        config = request.config.model_copy(
            update={
                "highly_relevant_threshold": DEFAULTS.highly_relevant_threshold,
                "reference_threshold": DEFAULTS.reference_threshold,
            }
        )
        return super().lookup(request.model_copy(update={"config": config}))


class FixedRrfK(FromTheSpec):
    """score-labels: "hit order SHALL follow the hybrid/RRF result order". The store builds
    ``RRFRanker()`` with its default k = 60 and never reads ``rrfK``, so with another k the order and the
    fused scores are not that RRF's. Since the kit fails only what the spec's words forbid, and the spec
    names RRF but not its k, this is noted (``hybrid-parameters``), not failed (readings 19).
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        return super().engine_search(request.model_copy(update={"rrf_k": 60}))


class LookupHintBoost(FromTheSpec):
    """rank-order: "It SHALL NOT re-order primarily by L0 domain/entity/keyword/source_type additive
    boosts". ``post_process`` is clean; ``lookup`` still calls the legacy ordering (quality + boosts,
    descending) it kept "for the agent path".
    """

    def attempt(self, request: LookupRequest, category: str | None) -> PostProcessReply:
        def boosted(scored: list[Scored], hints: Hints) -> list[Scored]:
            ranked = self.order(scored, hints)
            return sorted(ranked, key=lambda s: -(s.quality + boost(s, hints)))

        return self.assemble(self.retrieve(request, category), request.config, request.hints, order=boosted)


class ManyKeywordBoost(FromTheSpec):
    """rank-order: "B matches more L0 keywords via string contains than A ... A SHALL appear before B".
    A "strong lexical match" rule: a chunk containing four or more of the hint keywords moves ahead of
    the others (stably); with three or fewer nothing moves, so small hint lists look rank-preserving.
    """

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        def strong(s: Scored) -> bool:
            text = s.candidate.text.casefold()
            return sum(1 for k in hints.keywords if k and k.casefold() in text) >= 4

        return sorted(super().order(scored, hints), key=lambda s: not strong(s))


class AliasBackfilledAsDense(FromTheSpec):
    """score-labels: "``bm25_only_no_dense`` ... SHALL canonicalize it to ... ``hybrid``" (and R7: "scoreLabel
    SHALL still canonicalize to hybrid"). A ``bm25_only_no_dense`` candidate that carries
    ``denseDistance`` is read as "its L2 was backfilled since", i.e. dense, scored by its ``score``.
    ``canonicalize_label`` alone (no distance) is right.
    """

    def resolve(self, label: str, dense_distance: float | None) -> str:
        if label == "bm25_only_no_dense" and dense_distance is not None:
            return "dense"
        return self.canonicalize_label(label)

    def quality(self, label, score, *, rank, batch, max_l2, dense_distance=None):  # type: ignore[no-untyped-def]
        resolved = self.resolve(label, dense_distance)
        return super().quality(
            resolved, score, rank=rank, batch=batch, max_l2=max_l2, dense_distance=dense_distance
        )

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        return {
            **super().block(s, hints),
            "score_label": self.resolve(s.candidate.score_label, s.candidate.dense_distance),
        }


class AliasLiteralWithDenseDistance(FromTheSpec):
    """score-labels: "quality normalization SHALL canonicalize it to dense or hybrid respectively before
    computing quality". The ``denseDistance`` branch tests ``label == "hybrid"`` (written before aliases
    existed), so ``rrf_fused`` or ``bm25_only_no_dense`` with a distance get the rank mapping instead.
    """

    def quality(self, label, score, *, rank, batch, max_l2, dense_distance=None):  # type: ignore[no-untyped-def]
        if self.canonicalize_label(label) == "hybrid" and label != "hybrid":
            dense_distance = None
        return super().quality(
            label, score, rank=rank, batch=batch, max_l2=max_l2, dense_distance=dense_distance
        )


class RetryBelowHighlyRelevant(FromTheSpec):
    """quality-gates: "low-quality detection SHALL compare the top qualityScore to the configured reference
    threshold". The category retry fires below the highly-relevant threshold ("retry unless we are sure").
    """

    def should_retry(self, first: PostProcessReply, config: PostProcessConfig) -> bool:
        top = first.top_quality_score
        return top is None or top < config.highly_relevant_threshold


class RetryLowBothKeepsFiltered(FromTheSpec):
    """quality-gates: the retry decision reads qualityScore, and the retry's result is then used (design note:
    "合并/替换为 retry 结果"). When the unfiltered retry is low quality too, this one keeps the filtered
    result and reports path ``filtered`` ("the retry did not help, respect the user's category").
    """

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        if retry.is_low_quality:
            return self.answer(first, "filtered")
        return super().after_retry(first, retry, request)


class TopQualityOverAllCandidates(FromTheSpec):
    """quality-gates: "compare the top qualityScore" of the evidence. The top is taken over every scored
    candidate, duplicates and capped or cut ones included (computed before selection "for speed").
    """

    def top_quality(self, accepted: list[Scored], scored: list[Scored]) -> float | None:
        if not accepted:
            return None
        return max(s.quality for s in scored)


class LookupIgnoresCaps(FromTheSpec):
    """rank-order: "only the best-ranked ... up to the cap SHALL remain" and "``rag.return-n`` SHALL still
    bound total blocks". ``lookup`` passes thresholds and maxL2 through but takes return-n and the
    per-document cap from the service defaults (5 and 2).
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        config = request.config.model_copy(
            update={
                "return_n": DEFAULTS.return_n,
                "max_chunks_per_document": DEFAULTS.max_chunks_per_document,
            }
        )
        return super().lookup(request.model_copy(update={"config": config}))


class NullDenseScoreFullQuality(FromTheSpec):
    """single-normalizer: "(null score → 0)". ``d = score or 0.0``: a null dense score becomes distance 0,
    quality 1.0.
    """

    def l2_quality(self, distance: float | None, max_l2: float) -> float:
        return super().l2_quality(distance or 0.0, max_l2)


class EmptyResultNotLow(FromTheSpec):
    """quality-gates: ``isLowQuality`` = no usable evidence or top below the threshold (design note 4.3;
    readings 7). With no accepted block there is no top to compare, so it reports "not low" and a
    category filter that matched nothing is never retried.
    """

    def low_quality(self, top, config, hints, accepted):  # type: ignore[no-untyped-def]
        return top is not None and top < config.reference_threshold


class UsableNeedsHintSupport(FromTheSpec):
    """quality-gates: "SHALL NOT require L0 hint contains-match to treat the result as usable when quality
    meets threshold". When hints are given and no accepted block mentions any of them, the result is
    low quality (and retried) whatever its top quality; without hints the gate is right.
    """

    def low_quality(self, top, config, hints, accepted):  # type: ignore[no-untyped-def]
        given = hints.domain or hints.entities or hints.keywords or hints.source_type
        if given and accepted and not any(hint_overlaps(s.candidate, hints) for s in accepted):
            return True
        return super().low_quality(top, config, hints, accepted)


class MinMaxRankBatchOfOne(FromTheSpec):
    """single-normalizer: "rank 1 SHALL map to 1.0 when n >= 1". Hybrid rank quality is min-max scaled,
    ``(n - r) / (n - 1)``, and a batch of one ("no spread, no information") gets 0.0.
    """

    def rank_quality(self, rank: int, batch: int) -> float:
        super().rank_quality(rank, batch)  # input checks
        if batch == 1:
            return 0.0
        return max(0.0, (batch - rank) / (batch - 1))


class RetryOnL2Cutoff(FromTheSpec):
    """quality-gates: "category-filter low-quality retry decisions SHALL use the normalized qualityScore,
    not raw L2-under-hybrid fakes". The retry keeps the legacy rule: retry when the first hit's L2
    (its ``denseDistance`` in hybrid mode) is above 1.0, the distance that meant quality 0.5 at the
    default maxL2 2.
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        self._first_distance: float | None = None
        return super().lookup(request)

    def retrieve(self, request: LookupRequest, category: str | None) -> list[WireCandidate]:
        hits = super().retrieve(request, category)
        if hits:
            first = hits[0]
            self._first_distance = first.score if request.mode == "dense" else first.dense_distance
        return hits

    def should_retry(self, first: PostProcessReply, config: PostProcessConfig) -> bool:
        if self._first_distance is None:
            return super().should_retry(first, config)
        return self._first_distance > 1.0


class RetryKeepsCategoryFilter(FromTheSpec):
    """quality-gates: the low-quality retry is unfiltered (design note 4.3: "unfiltered retry"). The retry
    goes through the same request object, category still set: path ``unfiltered_retry``, evidence
    still from the category.
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        if request.category is None:
            return super().lookup(request)
        first = self.attempt(request, request.category)
        if not self.should_retry(first, request.config):
            return self.answer(first, "filtered")
        return self.after_retry(first, self.attempt(request, request.category), request)
