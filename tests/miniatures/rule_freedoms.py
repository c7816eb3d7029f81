"""The nearest freedom of each rule: variants the spec's words allow, and variants the kit only notes.

For every rule of the kit's model (``conformance.judging._spec_model.RULES``), the matrix names a miniature
that takes the freedom the rule must still allow (``freedoms = [...]``), here, in :mod:`.spec_freedoms` or in
:mod:`.conforming`. The kit must pass each of them; the *noted* ones break only the protocol's shapes
(never a sentence of the spec), so the kit must pass them too and name the rule in the report's notes.
Each is a :class:`FromTheSpec` with one step replaced.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from conformance.boundary._protocol import (
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    SearchRequest,
)
from tests.miniatures.from_the_spec import FromTheSpec, Scored
from tests.miniatures.real_data import hybrid_candidates

__all__ = [
    "BatchAfterCaps",
    "ConstantRankMapping",
    "DenseDistanceOwnSimilarity",
    "HybridNoScore",
    "HybridScoreReversed",
    "LargerSubSearches",
    "MergedRetryRenumbered",
    "OwnDropCodes",
    "OwnEvidenceKey",
    "TopQualityMinusOneWhenEmpty",
]


# -- conforming: freedoms the spec's words leave ------------------------------------------------------


class OwnDropCodes(FromTheSpec):
    """Reports removed candidates with its own reason codes: ``DUP``, ``CAP``, ``N``. The spec names no
    dropped list and no codes (readings 16)."""

    CODES: ClassVar[dict[str, str]] = {"duplicate": "DUP", "per_document_cap": "CAP", "return_n": "N"}

    def select(
        self, ordered: list[Scored], config: PostProcessConfig
    ) -> tuple[list[Scored], list[tuple[Scored, str]]]:
        accepted, dropped = super().select(ordered, config)
        return accepted, [(s, self.CODES[reason]) for s, reason in dropped]


class MergedRetryRenumbered(FromTheSpec):
    """After a low-quality filtered attempt, merges both: the retry's blocks in their rank order, then the
    filtered attempt's blocks not already there, renumbered after them (originalRank n+1, n+2, ...),
    the cap and return-n applied to the merged list. The design note says "merge or replace" and nothing
    about ranks (readings 7)."""

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        config = request.config
        merged: list[Any] = []
        seen: set[str] = set()
        per_doc: Counter[str] = Counter()
        last = max((b.original_rank for b in retry.blocks), default=0)
        extra = [
            b.model_copy(update={"original_rank": last + i}) for i, b in enumerate(first.blocks, start=1)
        ]
        for b in (*retry.blocks, *extra):
            if b.evidence_key in seen or per_doc[b.doc_id] >= config.max_chunks_per_document:
                continue
            if len(merged) >= config.return_n:
                break
            seen.add(b.evidence_key)
            per_doc[b.doc_id] += 1
            merged.append(b)
        top = max((b.quality_score for b in merged), default=None)
        reply = PostProcessReply(
            blocks=tuple(merged),
            relevance_level=self.level(top, config, request.hints),
            top_quality_score=top,
            is_low_quality=top is None or top < config.reference_threshold,
        )
        return self.answer(reply, "unfiltered_retry")


class BatchAfterCaps(FromTheSpec):
    """Counts the rank mapping's batch ``n`` after dedup and the per-document cap: "a candidate batch of
    size n" does not say when the batch is counted (readings 4)."""

    def score_batch(self, candidates: Any, config: PostProcessConfig) -> list[Scored]:
        seen: set[tuple[str, int]] = set()
        per_doc: Counter[str] = Counter()
        kept = 0
        for c in sorted(candidates, key=lambda c: c.original_rank):
            key = (c.doc_id, c.chunk_index)
            if key in seen or per_doc[c.doc_id] >= config.max_chunks_per_document:
                seen.add(key)
                continue
            seen.add(key)
            per_doc[c.doc_id] += 1
            kept += 1
        n = max(kept, 1)
        return [
            Scored(
                c,
                self.quality(
                    c.score_label,
                    c.score,
                    rank=c.original_rank,
                    batch=n,
                    max_l2=config.max_l2_distance,
                    dense_distance=c.dense_distance,
                ),
            )
            for c in candidates
        ]


class ConstantRankMapping(FromTheSpec):
    """Hybrid rank mapping that gives every rank 1.0: non-increasing, rank 1 -> 1.0, so it conforms; it
    also kills the retry for hybrid results without denseDistance, which the kit must say as advice
    (design note 5.3)."""

    def rank_quality(self, rank: int, batch: int) -> float:
        return 1.0


class LargerSubSearches(FromTheSpec):
    """Hybrid sub-searches fetch three times the hits asked for before RRF cuts to k: RRF all the same,
    over longer lists. The spec names RRF, not its parameters (readings 19), so the kit notes it."""

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "hybrid":
            return super().engine_search(request)
        return hybrid_candidates(self, request, sub_limit=3 * request.k)


class HybridNoScore(FromTheSpec):
    """Hybrid hits carry no ``score`` (the fused score is the engine's, not needed downstream): R2 forbids
    only a dense L2 in its place (readings 9)."""

    def hit(self, candidate: Any) -> dict[str, Any]:
        hit = super().hit(candidate)
        if hit["score_label"] == "hybrid":
            hit["score"] = None
        return hit


# -- noted: the protocol's shapes, never a spec sentence ---------------------------------------------


class OwnEvidenceKey(FromTheSpec):
    """Spells evidence keys ``docId:chunkIndex``. The protocol says ``docId#chunkIndex``; the spec says
    nothing (readings 13): noted (``evidence-key``)."""

    def block(self, s: Scored, hints: Any) -> dict[str, Any]:
        c = s.candidate
        return {**super().block(s, hints), "evidence_key": f"{c.doc_id}:{c.chunk_index}"}


class HybridScoreReversed(FromTheSpec):
    """Hybrid hit scores are the negated fused score (a "distance-like" convention): not dense L2, so R2
    is kept; on a scale the protocol did not expect, noted (``hybrid-score-scale``)."""

    def hit(self, candidate: Any) -> dict[str, Any]:
        hit = super().hit(candidate)
        if hit["score_label"] == "hybrid" and hit["score"] is not None:
            hit["score"] = -hit["score"]
        return hit


class DenseDistanceOwnSimilarity(FromTheSpec):
    """With denseDistance, a hybrid hit's quality is ``1 / (1 + d)``: an absolute similarity that falls
    with the distance, as R7 allows, but not the L2 formula the kit reads it as: noted
    (``dense-distance-formula``)."""

    def quality(
        self,
        label: str,
        score: float | None,
        *,
        rank: int,
        batch: int,
        max_l2: float,
        dense_distance: float | None = None,
    ) -> float:
        if self.canonicalize_label(label) == "hybrid" and dense_distance is not None:
            return 1.0 / (1.0 + max(dense_distance, 0.0))
        return super().quality(
            label, score, rank=rank, batch=batch, max_l2=max_l2, dense_distance=dense_distance
        )


class TopQualityMinusOneWhenEmpty(FromTheSpec):
    """Reports ``topQualityScore`` -1 when nothing was accepted (a sentinel of its own): noted
    (``top-quality-empty``); the spec speaks of the top quality of at least one block."""

    def reply(self, accepted: Any, dropped: Any, top: Any, config: Any, hints: Any) -> PostProcessReply:
        reply = super().reply(accepted, dropped, top, config, hints)
        return reply if accepted else reply.model_copy(update={"top_quality_score": -1.0})
