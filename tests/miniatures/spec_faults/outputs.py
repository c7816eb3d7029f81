"""Faults a kit catches only if it reads every field of every reply (each block's quality to full
precision, hit scores, dropped candidates, gates).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from conformance.adapters.reference import store_search
from conformance.boundary._protocol import (
    Hints,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    SearchRequest,
    WireCandidate,
)
from tests.miniatures.from_the_spec import FromTheSpec, Scored, evidence_key, hint_overlaps

from ._common import boost

__all__ = [
    "CapCountsDuplicates",
    "DedupKeepsLastCopy",
    "DroppedAllReturnN",
    "DroppedOmitsDuplicates",
    "DropsRankOne",
    "EuclideanDenseDistance",
    "EuclideanDenseScore",
    "FilteredLookupSkipsTopTwo",
    "HintsRescueLowQuality",
    "HybridScoreFromDenseDistance",
    "HybridSortedAscending",
    "LevelFromBoostedScore",
    "LookupDenseQuarterMax",
    "LowQualityAtThreshold",
    "PositionNotRankQuality",
    "ProbePlaceholderDistance",
    "QualitySortWithDenseDistance",
    "RoundedQualities",
    "RrfTheoreticalMaxQuality",
    "SearchRanksFromZero",
    "TopQualityIsMean",
    "TopSimilarityOneMinusDistance",
    "UnclampedPostProcessQuality",
]


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
    Every removed candidate is reported as ``return_n`` ("did not make the top n"). The spec names no
    dropped list nor its codes: noted (``dropped``), not failed (readings 16).
    """

    def select(self, ordered, config):  # type: ignore[no-untyped-def]
        accepted, dropped = super().select(ordered, config)
        return accepted, [(s, "return_n") for s, _ in dropped]


class DroppedOmitsDuplicates(FromTheSpec):
    """rank-order: every removed candidate accounted for ("subject only to dedup/caps removing one").
    Duplicates are folded away before selection and never listed; cap and return-n drops are. The spec
    names no dropped list: noted (``dropped``), not failed (readings 16).
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


def _sqrt_fields(hit: Any, *fields: str) -> Any:
    update = {f: math.sqrt(max(getattr(hit, f), 0.0)) for f in fields if getattr(hit, f) is not None}
    return hit.model_copy(update=update)
