"""Broken miniatures written from the spec's sentences: each breaks ONE rule the way a real team might.

Every class is :class:`~tests.miniatures.spec_freedoms.FromTheSpec` (which the kit passes) with one step
replaced. The docstring quotes the sentence it breaks and tells how a team would have got there.
``matrix_spec.toml`` lists each with the requirement it violates. They are grouped by why a kit might
let them through: inputs it never varies, outputs it never reads, engine calls it never inspects.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

import reference
from conformance._protocol import (
    Hints,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    SearchRequest,
    WireCandidate,
)
from conformance.adapters.reference import store_search
from reference._schema import (
    DENSE_FIELD,
    KEY_FIELD,
    OUTPUT_FIELDS,
    SPARSE_FIELD,
    TEXT_FIELD,
    category_filter,
)
from tests.miniatures.spec_freedoms import FromTheSpec, Scored, evidence_key, hint_overlaps

__all__ = [
    "AliasBackfilledAsDense",
    "AliasLiteralWithDenseDistance",
    "CapCountsDuplicates",
    "DedupKeepsLastCopy",
    "DenseAlsoSparseSearch",
    "DenseDistanceDefaultMaxInPostProcess",
    "DenseDistanceOnlyWhenAllHave",
    "DenseKeywordProbe",
    "DenseSearchThenQueryByKey",
    "DroppedAllReturnN",
    "DroppedOmitsDuplicates",
    "DropsRankOne",
    "EmptyResultNotLow",
    "EuclideanDenseDistance",
    "EuclideanDenseScore",
    "FilterOnDenseLegOnly",
    "FilteredLookupSkipsTopTwo",
    "FixedRrfK",
    "HintsRescueLowQuality",
    "HybridScoreFromDenseDistance",
    "HybridSortedAscending",
    "LevelFromBoostedScore",
    "LookupDefaultThresholds",
    "LookupDenseQuarterMax",
    "LookupHintBoost",
    "LookupIgnoresCaps",
    "LowQualityAtThreshold",
    "ManyKeywordBoost",
    "MinMaxRankBatchOfOne",
    "NullDenseScoreFullQuality",
    "PositionNotRankQuality",
    "PostProcessDefaultMaxL2",
    "ProbePlaceholderDistance",
    "QualitySortWithDenseDistance",
    "RetryBelowHighlyRelevant",
    "RetryKeepsCategoryFilter",
    "RetryLowBothKeepsFiltered",
    "RetryOnL2Cutoff",
    "RoundedQualities",
    "RrfTheoreticalMaxQuality",
    "SearchRanksFromZero",
    "TopQualityIsMean",
    "TopQualityOverAllCandidates",
    "TopSimilarityOneMinusDistance",
    "UnclampedPostProcessQuality",
    "UsableNeedsHintSupport",
]

DEFAULTS = PostProcessConfig()
# The legacy post-processor's additive L0 boosts (design note, section 2.3).
BOOSTS = {"l0_domain_overlap": 0.15, "l0_entity_overlap": 0.20, "l0_keyword_overlap": 0.10}
BOOSTS["l0_source_type_match"] = 0.05


def boost(s: Scored, hints: Hints) -> float:
    return sum(BOOSTS[reason] for reason in hint_overlaps(s.candidate, hints))


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
    fused scores are not that RRF's.
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


# == 2. outputs a naive kit never reads ===========================================================


class RoundedQualities(FromTheSpec):
    """single-normalizer: "qualityScore SHALL equal max(0, 1 - min(d, maxL2Distance)/maxL2Distance)". The
    normalizer rounds to 4 decimals "for stable JSON"; gates then read the rounded value (0.49996 -> 0.5).
    """

    def quality(self, label, score, *, rank, batch, max_l2, dense_distance=None):  # type: ignore[no-untyped-def]
        q = super().quality(
            label, score, rank=rank, batch=batch, max_l2=max_l2, dense_distance=dense_distance
        )
        return round(q, 4)


class TopSimilarityOneMinusDistance(FromTheSpec):
    """quality-gates: "``topSimilarity`` (or equivalent top quality field) ... SHALL use the normalized
    qualityScore". Gates are right, but the reported top field is the legacy ``1 - d`` of the best
    block's L2 (``denseDistance`` in hybrid mode), not its qualityScore.
    """

    def reply(self, accepted, dropped, top, config, hints):  # type: ignore[no-untyped-def]
        out = super().reply(accepted, dropped, top, config, hints)
        if not accepted:
            return out
        best = max(accepted, key=lambda s: s.quality).candidate
        dense = self.canonicalize_label(best.score_label) == "dense"
        d = best.score if dense else best.dense_distance
        if d is None:
            return out
        return out.model_copy(update={"top_quality_score": max(0.0, 1.0 - d)})


class HybridScoreFromDenseDistance(FromTheSpec):
    """no-l2-overwrite: "the store SHALL NOT replace hybrid hit scores with a parallel dense L2 map". The
    hybrid ``score`` is ``1 / (1 + denseDistance)`` ("a similarity people can read"); the fused score is
    kept in ``rawScore``.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        return [h.model_copy(update={"score": 1.0 / (1.0 + h.dense_distance)}) for h in hits]


class PositionNotRankQuality(FromTheSpec):
    """single-normalizer: "qualityScore SHALL be a monotonically non-increasing function of r". The rank
    mapping reads the position in the sorted batch, so equal ``originalRank`` values get different
    qualities.
    """

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        n = len(candidates)
        ordered = sorted(candidates, key=lambda c: c.original_rank)
        position = {id(c): i for i, c in enumerate(ordered, start=1)}
        return [
            Scored(
                c,
                self.quality(
                    c.score_label,
                    c.score,
                    rank=position[id(c)],
                    batch=n,
                    max_l2=config.max_l2_distance,
                    dense_distance=c.dense_distance,
                ),
            )
            for c in candidates
        ]


class UnclampedPostProcessQuality(FromTheSpec):
    """single-normalizer: "compute a qualityScore in [0, 1]". Post-process inlines ``1 - d / maxL2`` for
    dense and dense-distance hits, without the ``min`` and ``max``; ``quality_score`` clamps.
    """

    def score_batch(self, candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[Scored]:
        out = []
        for s in super().score_batch(candidates, config):
            c, m = s.candidate, config.max_l2_distance
            dense = self.canonicalize_label(c.score_label) == "dense"
            d = c.score if dense else c.dense_distance
            out.append(Scored(c, 1.0 - d / m) if d is not None else s)
        return out


class DropsRankOne(FromTheSpec):
    """rank-order: "only the best-ranked (lowest originalRank) up to the cap SHALL remain". Selection
    starts at index 1 (the loop was copied from code that skipped a header row): the rank-1 candidate
    disappears, unlisted.
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        return super().select(ordered[1:], config)


class LookupDenseQuarterMax(FromTheSpec):
    """single-normalizer: the dense formula with the "configured ``maxL2Distance``". ``lookup`` normalizes
    with 4, the maximum squared L2 of unit vectors, whatever the config says; ``post_process`` is right.
    """

    def lookup(self, request: LookupRequest) -> LookupReply:
        config = request.config.model_copy(update={"max_l2_distance": 4.0})
        return super().lookup(request.model_copy(update={"config": config}))


class LowQualityAtThreshold(FromTheSpec):
    """quality-gates: low quality is the top "below" the reference threshold (design note: ``topSimilarity <
    referenceThreshold``). Written ``<=``: a top exactly at the threshold is low quality and retried.
    """

    def low_quality(self, top, config, hints, accepted):  # type: ignore[no-untyped-def]
        return top is None or top <= config.reference_threshold


class HintsRescueLowQuality(FromTheSpec):
    """quality-gates: "low-quality detection SHALL compare the top qualityScore to the configured reference
    threshold". A result below the threshold is still "usable" when some accepted block mentions a hint
    (the legacy ``hasHintSupport``), so it is neither low quality nor retried.
    """

    def low_quality(self, top, config, hints, accepted):  # type: ignore[no-untyped-def]
        if any(hint_overlaps(s.candidate, hints) for s in accepted):
            return top is None
        return super().low_quality(top, config, hints, accepted)


class LevelFromBoostedScore(FromTheSpec):
    """quality-gates: "relevance_level ... SHALL use the normalized qualityScore, not ... keyword-boosted
    final scores". Order and ``isLowQuality`` are clean; the level reads the top block's quality plus
    its L0 boosts.
    """

    def reply(self, accepted, dropped, top, config, hints):  # type: ignore[no-untyped-def]
        out = super().reply(accepted, dropped, top, config, hints)
        if not accepted:
            return out
        boosted = max(s.quality + boost(s, hints) for s in accepted)
        return out.model_copy(update={"relevance_level": self.level(boosted, config, hints)})


class FilteredLookupSkipsTopTwo(FromTheSpec):
    """rank-order: "only the best-ranked (lowest originalRank) ... SHALL remain". The filtered attempt
    goes through a paging helper whose offset (2, the page of "already shown" hits) was never reset:
    its evidence lacks the two best chunks of the category.
    """

    def retrieve(self, request: LookupRequest, category: str | None) -> list[WireCandidate]:
        if category is None:
            return super().retrieve(request, category)
        wider = request.model_copy(update={"retrieve_k": request.retrieve_k + 2})
        page = super().retrieve(wider, category)[2:]
        return [c.model_copy(update={"original_rank": i}) for i, c in enumerate(page, start=1)]


class DroppedAllReturnN(FromTheSpec):
    """rank-order: removal by "dedup/caps" and return-n, each listed with the reason that removed it.
    Every removed candidate is reported as ``return_n`` ("did not make the top n").
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        accepted, dropped = super().select(ordered, config)
        return accepted, [(s, "return_n") for s, _ in dropped]


class DroppedOmitsDuplicates(FromTheSpec):
    """rank-order: every removed candidate accounted for ("subject only to dedup/caps removing one").
    Duplicates are folded away before selection and never listed; cap and return-n drops are.
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        accepted, dropped = super().select(ordered, config)
        return accepted, [(s, reason) for s, reason in dropped if reason != "duplicate"]


class CapCountsDuplicates(FromTheSpec):
    """rank-order: "only the best-ranked ... up to the cap SHALL remain". Duplicates count against the
    per-document cap (one counter per ``docId`` for every candidate seen), so a document with a repeated
    chunk keeps fewer distinct chunks than the cap allows.
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        accepted, dropped, seen, per_doc = [], [], set(), Counter()
        for s in ordered:
            key, doc = evidence_key(s.candidate), s.candidate.doc_id
            full = per_doc[doc] >= config.max_chunks_per_document
            per_doc[doc] += 1
            if key in seen:
                dropped.append((s, "duplicate"))
            elif full:
                dropped.append((s, "per_document_cap"))
            elif len(accepted) >= config.return_n:
                dropped.append((s, "return_n"))
            else:
                accepted.append(s)
            seen.add(key)
        return accepted, dropped


class DedupKeepsLastCopy(FromTheSpec):
    """rank-order: dedup keeps the best-ranked copy; order by ``originalRank``. Dedup is a dict keyed by
    evidence key, filled in rank order, so a later (worse-ranked) copy overwrites the value while keeping
    the first copy's place.
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        by_key: dict[str, Scored] = {}
        dropped: list[tuple[Scored, str]] = []
        for s in ordered:
            key = evidence_key(s.candidate)
            if key in by_key:
                dropped.append((by_key[key], "duplicate"))
            by_key[key] = s
        accepted, later = super().select(list(by_key.values()), config)
        return accepted, dropped + later


class SearchRanksFromZero(FromTheSpec):
    """score-labels: "hit order SHALL follow the hybrid/RRF result order via originalRank" (ranks start at
    1, the best hit). The reply maps hits with ``enumerate(hits)``: ranks 0..n-1.
    """

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "original_rank": candidate.original_rank - 1}


class EuclideanDenseScore(FromTheSpec):
    """score-labels: "score SHALL be the dense L2 distance" (the engine's value; readings 1 and 15).
    The store takes the square root of Milvus's squared L2, "because L2 means Euclidean"; lookup then
    normalizes that.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "dense":
            return hits
        return [_sqrt_fields(h, "score", "raw_score") for h in hits]


class EuclideanDenseDistance(FromTheSpec):
    """dense-distance-gates: "an optional dense L2 distance for a hit". The hybrid store attaches the
    Euclidean distance (square root of the squared L2) as ``denseDistance``.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        return [_sqrt_fields(h, "dense_distance") for h in super().engine_search(request)]


class TopQualityIsMean(FromTheSpec):
    """quality-gates: "compare the top qualityScore to the configured reference threshold". The "top
    similarity" is the mean quality of the accepted blocks ("how good the evidence is overall").
    """

    def top_quality(self, accepted: list[Scored], scored: list[Scored]) -> float | None:
        return sum(s.quality for s in accepted) / len(accepted) if accepted else None


class RrfTheoreticalMaxQuality(FromTheSpec):
    """single-normalizer: "rank 1 SHALL map to 1.0" and "the mapping SHALL NOT require ... RRF raw
    magnitude". Hybrid quality without a distance is the fused score over its theoretical maximum
    ``2 / (60 + 1)``: a rank-1 hit found by one sub-search only gets 0.5.
    """

    def quality(self, label, score, *, rank, batch, max_l2, dense_distance=None):  # type: ignore[no-untyped-def]
        q = super().quality(
            label, score, rank=rank, batch=batch, max_l2=max_l2, dense_distance=dense_distance
        )
        if self.canonicalize_label(label) == "dense" or dense_distance is not None or score is None:
            return q
        return min(1.0, max(0.0, score / (2.0 / 61.0)))


class HybridSortedAscending(FromTheSpec):
    """score-labels: "hit order SHALL follow the hybrid/RRF result order via originalRank". The store's
    shared tail sorts hits by ``score`` ascending ("smaller is better", true for L2) and renumbers them;
    for fused scores that reverses the RRF order.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        ordered = sorted(hits, key=lambda h: h.score)
        return [h.model_copy(update={"original_rank": i}) for i, h in enumerate(ordered, start=1)]


class QualitySortWithDenseDistance(FromTheSpec):
    """dense-distance-gates: "post-process sort order SHALL still follow originalRank from hybrid results".
    When hits carry ``denseDistance`` the batch is sorted by quality, descending ("now that quality is
    absolute, best first").
    """

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        ordered = super().order(scored, hints)
        if any(s.candidate.dense_distance is not None for s in scored):
            return sorted(ordered, key=lambda s: -s.quality)
        return ordered


class ProbePlaceholderDistance(FromTheSpec):
    """no-l2-overwrite: "SHALL NOT assign max-L2 weak placeholders". ``denseDistance`` comes from a parallel
    dense search; hits it did not return (BM25-only ones) get ``denseDistance = 2.0``, the default
    maxL2Distance, as the legacy backfill did (under the hybrid label this time).
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        probe = store_search(self._prepared(), request.model_copy(update={"mode": "dense"}))
        distance = {evidence_key(p): p.score for p in probe}
        return [h.model_copy(update={"dense_distance": distance.get(evidence_key(h), 2.0)}) for h in hits]


# == 3. engine calls a naive kit never inspects =====================================================


class DenseKeywordProbe(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". After the ANN search, dense mode runs a
    ``query`` with ``text like "%word%"`` for the longest query word and flags exact matches on the hits
    (``exactMatch``, an extra field); ranks, scores and labels are the ANN's.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        self._exact: set[str] = set()
        words = [w for w in re.findall(r"[A-Za-z0-9]+", request.query_text) if len(w) >= 3]
        if request.mode == "dense" and words:
            store = self._prepared()
            word = max(words, key=len)
            rows = store.client.query(
                store.collection,
                filter=f'{TEXT_FIELD} like "%{word}%"',
                output_fields=[KEY_FIELD],
                limit=request.k,
            )
            self._exact = {row[KEY_FIELD] for row in rows}
        return hits

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "exactMatch": evidence_key(candidate) in self._exact}


class DenseAlsoSparseSearch(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". Dense mode also runs a BM25 search on the sparse
    field "to show the lexical score next to the distance" (``bm25``, an extra field on hits); ranks,
    scores and labels are the ANN's.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        self._bm25: dict[str, float] = {}
        if request.mode == "dense" and request.query_text.strip():
            store = self._prepared()
            found = store.client.search(
                store.collection,
                data=[request.query_text],
                anns_field=SPARSE_FIELD,
                limit=request.k,
                filter=category_filter(request.category) if request.category is not None else "",
                output_fields=[KEY_FIELD],
                search_params={"metric_type": "BM25"},
            )
            self._bm25 = {h[KEY_FIELD]: float(h["distance"]) for h in found[0]}
        return hits

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "bm25": self._bm25.get(evidence_key(candidate))}


class DenseSearchThenQueryByKey(FromTheSpec):
    """dense-baseline: "search SHALL call dense ANN only". The ANN search asks for primary keys only and a
    ``query`` by key fetches text and metadata (a habit from servers that return only ids). Arguable:
    the query retrieves nothing the ANN did not choose.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "dense":
            return super().engine_search(request)
        store = self._prepared()
        vector = store._query_array(request.query_vector)  # the store's own checks, typed errors
        found = store.client.search(
            store.collection,
            data=[vector.tolist()],
            anns_field=DENSE_FIELD,
            limit=request.k,
            filter=category_filter(request.category) if request.category is not None else "",
            output_fields=[KEY_FIELD],
            search_params={"metric_type": "L2", "params": {}},
        )[0]
        keys = [h[KEY_FIELD] for h in found]
        if not keys:
            return []
        quoted = ", ".join('"' + k.replace("\\", "\\\\").replace('"', '\\"') + '"' for k in keys)
        rows = store.client.query(
            store.collection, filter=f"{KEY_FIELD} in [{quoted}]", output_fields=OUTPUT_FIELDS
        )
        by_key = {row[KEY_FIELD]: row for row in rows}
        return [
            reference.Candidate(
                doc_id=by_key[key]["doc_id"],
                chunk_index=int(by_key[key]["chunk_index"]),
                text=by_key[key]["text"],
                original_rank=rank,
                score=float(h["distance"]),
                score_label="dense",
                raw_score=float(h["distance"]),
                category=by_key[key].get("category"),
                source_type=by_key[key].get("source_type"),
            )
            for rank, (key, h) in enumerate(zip(keys, found, strict=True), start=1)
        ]


class FilterOnDenseLegOnly(FromTheSpec):
    """score-labels: "hit order SHALL follow the hybrid/RRF result order" of the filtered search. The
    category filter is set on the dense sub-request only; the BM25 one searches every category, so
    filtered hybrid results hold other categories' chunks.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "hybrid" or request.category is None or not request.query_text.strip():
            return super().engine_search(request)
        from pymilvus import AnnSearchRequest, RRFRanker

        store = self._prepared()
        vector = store._query_array(request.query_vector)
        legs = [
            AnnSearchRequest(
                data=[vector.tolist()],
                anns_field=DENSE_FIELD,
                param={"metric_type": "L2", "params": {}},
                limit=request.k,
                expr=category_filter(request.category),
            ),
            AnnSearchRequest(
                data=[request.query_text],
                anns_field=SPARSE_FIELD,
                param={"metric_type": "BM25"},
                limit=request.k,
            ),
        ]
        found = store.client.hybrid_search(
            store.collection,
            legs,
            RRFRanker(request.rrf_k),
            limit=request.k,
            output_fields=[*OUTPUT_FIELDS, DENSE_FIELD],
        )[0]
        out = []
        for rank, h in enumerate(found, start=1):
            e = h["entity"]
            diff = np.asarray(e[DENSE_FIELD], dtype=np.float32) - vector
            out.append(
                reference.Candidate(
                    doc_id=e["doc_id"],
                    chunk_index=int(e["chunk_index"]),
                    text=e["text"],
                    original_rank=rank,
                    score=float(h["distance"]),
                    score_label="hybrid",
                    raw_score=float(h["distance"]),
                    dense_distance=float(np.sum(diff * diff, dtype=np.float32)),
                    category=e.get("category"),
                    source_type=e.get("source_type"),
                )
            )
        return out


def _sqrt_fields(hit: Any, *fields: str) -> Any:
    update = {f: math.sqrt(max(getattr(hit, f), 0.0)) for f in fields if getattr(hit, f) is not None}
    return hit.model_copy(update=update)
