"""Conforming miniatures written from the spec's sentences: each uses one freedom the spec leaves open.

:class:`FromTheSpec` (:mod:`.from_the_spec`) is a whole implementation written from the spec text; each
class here overrides one of its steps. The kit must pass every class in this module (FromTheSpec
included); a failure means a scenario forbids something the spec allows.

Freedoms, and where the spec (or ``spec-readings``) grants them, are in each class docstring.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.adapters.reference import store_search
from conformance.boundary._protocol import (
    Hints,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    SearchRequest,
    WireCandidate,
)
from tests.miniatures.from_the_spec import FromTheSpec, Scored, evidence_key

__all__ = [
    "DenseHitsCarryDenseDistance",
    "DistinctChunkBatch",
    "ExtraReplyFields",
    "Float32Qualities",
    "FromTheSpec",
    "HighLevelName",
    "HybridDenseProbeDistance",
    "HybridScoresRescaled",
    "HybridWithoutDenseDistance",
    "MergedRetry",
    "NoDroppedList",
    "SteepRankMapping",
    "TwoNamesAboveThreshold",
]


# -- numbers -----------------------------------------------------------------------------------------


class Float32Qualities(FromTheSpec):
    """Qualities computed in float32 and returned as ``numpy.float32``; ranks as ``numpy.int64``.

    Freedom: readings 11 (the formula is the spec's, the precision is not) and the protocol's one
    number rule (numpy scalars are numbers). A Java or Go implementation computes exactly this.
    """

    def l2_quality(self, distance: float | None, max_l2: float) -> Any:
        super().l2_quality(distance, max_l2)  # the same input checks, typed errors
        if distance is None:
            return np.float32(0.0)
        d, m = np.float32(max(distance, 0.0)), np.float32(max_l2)
        return np.maximum(np.float32(0.0), np.float32(1.0) - np.minimum(d, m) / m)

    def rank_quality(self, rank: int, batch: int) -> Any:
        super().rank_quality(rank, batch)
        r, n = np.float32(rank), np.float32(batch)
        return np.maximum(np.float32(0.0), np.float32(1.0) - (r - np.float32(1.0)) / n)

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        out = super().block(s, hints)
        out["original_rank"] = np.int64(out["original_rank"])
        out["chunk_index"] = np.int64(out["chunk_index"])
        return out


# -- gates -------------------------------------------------------------------------------------------


class HighLevelName(FromTheSpec):
    """Its own level names: ``HIGH`` at and above the highly-relevant threshold, ``MEDIUM``/``LOW`` below.

    Freedom: R5 "MAY assign PRECISE or HIGHLY_RELEVANT" permits, it does not oblige (readings 6
    and 12); the level is the same with and without hints.
    """

    def level(self, top: float | None, config: PostProcessConfig, hints: Hints) -> str:
        if top is None:
            return "EMPTY"
        if top >= config.highly_relevant_threshold:
            return "HIGH"
        return "MEDIUM" if top >= config.reference_threshold else "LOW"


class TwoNamesAboveThreshold(FromTheSpec):
    """``HIGHLY_RELEVANT`` from the highly-relevant threshold up, ``PRECISE`` from 0.9 up; hints play no part.

    Freedom: R5 "the system MAY assign PRECISE or HIGHLY_RELEVANT": either name at or above the
    threshold, here chosen by the top quality alone (readings 12).
    """

    def level(self, top: float | None, config: PostProcessConfig, hints: Hints) -> str:
        name = super().level(top, config, hints)
        if name == "PRECISE" and top is not None and top < max(0.9, config.highly_relevant_threshold):
            return "HIGHLY_RELEVANT"
        return name


class ExtraReplyFields(FromTheSpec):
    """Replies carry fields the protocol does not define: a completeness hint and debug information.

    Freedom: R5 names "completeness hints"; readings 13 (unknown optional reply fields are
    reported, never failed).
    """

    def block(self, s: Scored, hints: Hints) -> dict[str, Any]:
        out = super().block(s, hints)
        out["excerpt"] = s.candidate.text[:80]
        out["debug"] = {"rawScore": s.candidate.score, "denseDistance": s.candidate.dense_distance}
        return out

    def reply(self, accepted, dropped, top, config, hints):  # type: ignore[no-untyped-def]
        base = super().reply(accepted, dropped, top, config, hints)
        if top is not None and top >= config.highly_relevant_threshold:
            completeness = "SUFFICIENT"
        elif top is not None and top >= config.reference_threshold:
            completeness = "PARTIAL"
        else:
            completeness = "INSUFFICIENT"
        extra = {"completeness": completeness, "debug": {"candidates": len(accepted) + len(dropped)}}
        return PostProcessReply.model_validate({**base.model_dump(), **extra})

    def hit(self, candidate: Any) -> dict[str, Any]:
        return {**super().hit(candidate), "text": candidate.text, "category": candidate.category}


class NoDroppedList(FromTheSpec):
    """Replies list no removed candidates at all.

    Freedom: the protocol's ``dropped`` is optional ("optionally every removed candidate, then all of
    them"); the spec itself never names a dropped list.
    """

    def reply(self, accepted, dropped, top, config, hints):  # type: ignore[no-untyped-def]
        return super().reply(accepted, [], top, config, hints)


# -- hybrid rank mapping -----------------------------------------------------------------------------


class SteepRankMapping(FromTheSpec):
    """Hybrid rank mapping ``max(0, 1 - (r-1)/3)``: 1.0, 0.67, 0.33, then 0 from rank 4 on.

    Freedom: R3 fixes only rank 1 -> 1.0 and monotone non-increasing without raw magnitudes
    (readings 4); a 0 from an allowed mapping is not a placeholder (readings 14).
    """

    def rank_quality(self, rank: int, batch: int) -> float:
        super().rank_quality(rank, batch)  # input checks
        return max(0.0, 1.0 - (rank - 1) / 3)


class DistinctChunkBatch(FromTheSpec):
    """The hybrid rank mapping's batch size ``n`` counts distinct chunks (after dedup), not candidates.

    Freedom: readings 4 ("Batch" may be the candidates before or after dedup).
    """

    def batch_size(self, candidates: Sequence[WireCandidate]) -> int:
        return len({evidence_key(c) for c in candidates}) or 1


# -- lookup retry ------------------------------------------------------------------------------------


class MergedRetry(FromTheSpec):
    """After a low-quality filtered attempt, the evidence merges both attempts instead of replacing.

    Order (its definition): the unfiltered retry's blocks in their rank order, then the filtered
    attempt's blocks not already present, in theirs; the per-document cap and return-n apply to the
    merged list; gates read the merged blocks. No dropped list (two batches, no single one to account
    for). Freedom: the design note's "合并/替换为 retry 结果" and readings 7.
    """

    def after_retry(
        self, first: PostProcessReply, retry: PostProcessReply, request: LookupRequest
    ) -> LookupReply:
        config = request.config
        merged, seen, per_doc = [], set(), Counter()
        for b in (*retry.blocks, *first.blocks):
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


# -- hybrid hits -------------------------------------------------------------------------------------


class HybridWithoutDenseDistance(FromTheSpec):
    """Hybrid search attaches no ``denseDistance``: hybrid quality and gates come from rank alone.

    Freedom: R7 "MAY use that distance"; without it R3's rank mapping applies.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        return [h.model_copy(update={"dense_distance": None}) for h in hits]


class HybridScoresRescaled(FromTheSpec):
    """Hybrid hit ``score`` is the fused score divided by the best one (rank 1 -> 1.0); no ``rawScore``.

    Freedom: the design note lets the hybrid score be the engine's fused score "on its own scale; order
    does not read its magnitude"; the order of the scores is the RRF order. Not a dense L2 (R2).
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid" or not hits:
            return hits
        best = max(h.score for h in hits) or 1.0
        return [h.model_copy(update={"score": h.score / best, "raw_score": None}) for h in hits]


class DenseHitsCarryDenseDistance(FromTheSpec):
    """Dense hits also carry ``denseDistance``, equal to their ``score`` (the same L2 distance).

    Freedom: ``denseDistance`` is optional information; on a dense hit it can only be its score, and the
    dense formula reads the score.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "dense":
            return hits
        return [h.model_copy(update={"dense_distance": h.score}) for h in hits]


class HybridDenseProbeDistance(FromTheSpec):
    """``denseDistance`` comes from a second, dense-only search with the same limit and filter.

    Hits the dense probe did not return get no ``denseDistance`` (they fall back to the rank mapping);
    score, label and order stay the hybrid search's. Freedom: R7, and readings 9 ("Issuing an extra
    dense search is not itself forbidden ... it must not change score, label or order").
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid":
            return hits
        probe = store_search(self._prepared(), request.model_copy(update={"mode": "dense"}))
        distance = {evidence_key(p): p.score for p in probe}
        return [h.model_copy(update={"dense_distance": distance.get(evidence_key(h))}) for h in hits]
