"""Broken miniatures of the pure logic: labels, the single normalizer, post-process order and gates.

Each class breaks exactly one thing of :class:`~tests.miniatures._miniature.Miniature` (the reference, step
by step) and says in its docstring which spec text it violates. The kit must fail each of them on the
scenarios listed in ``matrix.toml`` and pass them on every other scenario. Milvus-backed ones (search,
lookup) are in :mod:`tests.miniatures.broken_store`, the gates in :mod:`tests.miniatures.broken_gates`;
all are re-exported here so that one module lists every broken miniature.
"""

from __future__ import annotations

from conformance.boundary._protocol import Hints, PostProcessConfig, QualityRequest

from ._miniature import Miniature, Scored, hint_support
from .broken_gates import (
    EmptyResultNotLowQuality,
    HintGatedLowQuality,
    HintGatedPrecise,
    TopSimilarityIsRawScore,
)
from .broken_store import (
    Bm25OnlyLabel,
    Bm25OnlyMaxL2Placeholder,
    DenseDistanceRelabels,
    DenseDistanceReordersSearch,
    DenseMergesBm25,
    DenseRunsHybrid,
    HybridScoreIsDenseL2,
    RetriesWithoutCategory,
    RetryOnRawScore,
)

__all__ = [
    "Bm25OnlyLabel",
    "Bm25OnlyMaxL2Placeholder",
    "CapBeforeRankSort",
    "DedupByDocId",
    "DenseDistanceRelabels",
    "DenseDistanceReordersPostProcess",
    "DenseDistanceReordersSearch",
    "DenseMergesBm25",
    "DenseRunsHybrid",
    "EmptyResultNotLowQuality",
    "HintGatedLowQuality",
    "HintGatedPrecise",
    "HybridScoreIsDenseL2",
    "IgnoresReturnN",
    "KeywordBoostReorder",
    "L2AliasToHybrid",
    "NoDedup",
    "NonMonotoneRank",
    "NullDenseScoreNotZero",
    "RankOneNotOne",
    "RawRrfMagnitude",
    "RetriesWithoutCategory",
    "RetryOnRawScore",
    "TopSimilarityIsRawScore",
    "UncanonicalAlias",
    "UnclampedDenseQuality",
    "UnclampedRankQuality",
]

# The legacy contains-boosts of the design note, section 2.3.
LEGACY_BOOSTS = {"domain": 0.15, "entity": 0.20, "keyword": 0.10, "source_type": 0.05}


# -- R1 labels -------------------------------------------------------------------------------------


class UncanonicalAlias(Miniature):
    """Leaves the legacy alias ``rrf_fused`` as it is instead of canonicalizing it to ``hybrid``.

    Violates R1 "Legacy aliases canonicalize": "quality normalization SHALL canonicalize it to `dense`
    or `hybrid` respectively before computing quality". Its normalizer reads a label it has no branch
    for as an L2 distance, the legacy pipeline's default, so a fused score looks like a near-perfect match.
    """

    def canonicalize_label(self, label: str) -> str:
        return label if label == "rrf_fused" else super().canonicalize_label(label)

    def quality_score(self, request: QualityRequest) -> float:
        if self.canonicalize_label(request.score_label) not in ("dense", "hybrid"):
            return self.dense_quality(request.score, request.max_l2_distance)
        return super().quality_score(request)


class L2AliasToHybrid(Miniature):
    """Canonicalizes ``l2_distance`` to ``hybrid`` (it names a dense L2 distance: ``dense``).

    Violates R1 "Legacy aliases canonicalize" ("`l2_distance` ... to `dense`"); its L2 scores are then
    read through the hybrid rank mapping.
    """

    def canonicalize_label(self, label: str) -> str:
        return "hybrid" if label == "l2_distance" else super().canonicalize_label(label)


# -- R3 the single normalizer ----------------------------------------------------------------------


class RawRrfMagnitude(Miniature):
    """Hybrid quality from the fused score's magnitude, ``min(1, 30 * score)``, when a score is given.

    Violates R3 "Hybrid quality from rank": "the mapping SHALL NOT require dense L2 or RRF raw
    magnitude". Without a score it falls back to the rank mapping, so only the magnitude check sees it.
    """

    def hybrid_quality(self, request: QualityRequest) -> float:
        if request.score is None:
            return super().hybrid_quality(request)
        return max(0.0, min(1.0, 30.0 * request.score))


class UnclampedDenseQuality(Miniature):
    """Dense quality ``1 - d / maxL2`` without the clamp: a distance beyond maxL2 gives a negative quality.

    Violates R3 "Dense quality from L2": "`max(0, 1 - min(d, maxL2Distance) / maxL2Distance)`" and the
    requirement's "`qualityScore` in `[0, 1]`".
    """

    def dense_quality(self, distance: float | None, max_l2_distance: float) -> float:
        if distance is None:
            return 0.0
        return 1.0 - distance / max_l2_distance


class NullDenseScoreNotZero(Miniature):
    """Reads a null dense score as distance 0, i.e. a perfect match (quality 1.0).

    Violates R3 "Dense quality from L2": "(null score → 0)".
    """

    def dense_quality(self, distance: float | None, max_l2_distance: float) -> float:
        return super().dense_quality(0.0 if distance is None else distance, max_l2_distance)


class NonMonotoneRank(Miniature):
    """Rank mapping in deciles that wrap: ``1 - ((r - 1) % 10) / 10``; rank 11 scores like rank 1.

    Violates R3 "Hybrid quality from rank": "`qualityScore` SHALL be a monotonically non-increasing
    function of `r` over that batch" (for every batch larger than 10).
    """

    def rank_quality(self, rank: int, batch_size: int) -> float:
        return 1.0 - ((rank - 1) % 10) / 10


class RankOneNotOne(Miniature):
    """Rank mapping ``1 - r / (n + 1)``: monotone, in [0, 1], but rank 1 gets ``n / (n + 1)``.

    Violates R3 "Hybrid quality from rank": "rank `1` SHALL map to `1.0` when `n >= 1`".
    """

    def rank_quality(self, rank: int, batch_size: int) -> float:
        return 1.0 - rank / (batch_size + 1)


class UnclampedRankQuality(Miniature):
    """Rank mapping ``1 - (r - 1) / 10`` with no floor: monotone, rank 1 is 1.0, rank 12 is -0.1.

    Violates R3's requirement text "a `qualityScore` in `[0, 1]`".
    """

    def rank_quality(self, rank: int, batch_size: int) -> float:
        return 1.0 - (rank - 1) / 10


# -- R4 rank order ---------------------------------------------------------------------------------


class KeywordBoostReorder(Miniature):
    """Re-sorts by quality plus the legacy L0 contains-boosts (domain +0.15, entity +0.20, keyword +0.10,
    source_type +0.05), as the design note's section 2.3 describes.

    Violates R4: "It SHALL NOT re-order primarily by L0 domain/entity/keyword/source_type additive
    boosts" and "Keyword overlap does not promote lower rank".
    """

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        def final(s: Scored) -> float:
            support = hint_support(s.candidate, hints)
            return s.quality + sum(LEGACY_BOOSTS[k] for k, hit in support.items() if hit)

        return sorted(scored, key=final, reverse=True)


class DedupByDocId(Miniature):
    """Deduplicates by ``docId`` instead of the chunk identity ``docId#chunkIndex``: one chunk per document.

    Violates R4 "Structural caps still apply after rank order": "only the best-ranked ... up to the cap
    SHALL remain" (the cap, not one); the design note keeps chunk-level identity (section 3).
    """

    def dedup_key(self, candidate: object) -> str:
        return candidate.doc_id  # type: ignore[attr-defined]


class NoDedup(Miniature):
    """Keeps every copy of a chunk retrieved twice (dedup keyed by chunk AND rank).

    Violates R4 "Structural caps still apply after rank order" and the design note 5.4 step
    "evidenceKey 去重" (dedup by ``docId#chunkIndex``): one chunk becomes two evidence blocks.
    """

    def dedup_key(self, candidate: object) -> str:
        return f"{candidate.doc_id}#{candidate.chunk_index}@{candidate.original_rank}"  # type: ignore[attr-defined]


class CapBeforeRankSort(Miniature):
    """Applies the per-document cap in input order, before sorting by ``originalRank``.

    Violates R4 "Structural caps still apply after rank order": "only the best-ranked (lowest
    `originalRank`) up to the cap SHALL remain".
    """

    def arrange(
        self, scored: list[Scored], hints: Hints, config: PostProcessConfig
    ) -> tuple[list[Scored], list]:
        capped, dropped = self.select(scored, config, return_n=len(scored))  # caps in input order
        accepted, more = self.select(self.order(capped, hints), config)
        return accepted, dropped + more


class IgnoresReturnN(Miniature):
    """Never applies ``rag.return-n``.

    Violates R4 "Structural caps still apply after rank order": "`rag.return-n` SHALL still bound
    total blocks".
    """

    def return_n(self, config: PostProcessConfig) -> int:
        return 1_000_000


class DenseDistanceReordersPostProcess(Miniature):
    """In post-process, orders hybrid candidates by their attached ``denseDistance`` (nearest first).

    Violates R7 "Dense distance does not replace hybrid label": "post-process sort order SHALL still
    follow originalRank from hybrid results", and R4's rank order.
    """

    def order(self, scored: list[Scored], hints: Hints) -> list[Scored]:
        def key(s: Scored) -> tuple[float, int]:
            distance = s.candidate.dense_distance
            return (distance if distance is not None else float("inf"), s.candidate.original_rank)

        return sorted(scored, key=key)
