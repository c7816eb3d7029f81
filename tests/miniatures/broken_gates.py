"""Broken miniatures of the gates (R5): low quality, relevance level and the reported top quality.

Each breaks exactly one thing of :class:`~tests.miniatures._miniature.Miniature`; see :mod:`.broken`.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.boundary._protocol import Hints, PostProcessConfig, PostProcessReply, PostProcessRequest

from ._miniature import Miniature, Scored, hint_support

__all__ = ["EmptyResultNotLowQuality", "HintGatedLowQuality", "HintGatedPrecise", "TopSimilarityIsRawScore"]


class HintGatedLowQuality(Miniature):
    """Calls a result low quality unless some accepted block matches an L0 hint by contains.

    Violates R5 "Low quality uses top qualityScore": "SHALL NOT require L0 hint contains-match to treat
    the result as usable when quality meets threshold".
    """

    def low_quality(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: Sequence[Scored]
    ) -> bool:
        supported = any(any(hint_support(s.candidate, hints).values()) for s in accepted)
        return super().low_quality(top, config, hints, accepted) or not supported


class HintGatedPrecise(Miniature):
    """Grants PRECISE only with domain/entity/keyword contains support; otherwise RELEVANT (legacy 2.3.4).

    Violates R5 "PRECISE does not require hint support": "the system MAY assign `PRECISE` or
    `HIGHLY_RELEVANT` without requiring domain/entity/keyword contains support".
    """

    def relevance(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: Sequence[Scored]
    ) -> str:
        level = super().relevance(top, config, hints, accepted)
        if level == "PRECISE":
            support = (hint_support(s.candidate, hints) for s in accepted)
            if not any(s["domain"] or s["entity"] or s["keyword"] for s in support):
                return "RELEVANT"
        return level


class EmptyResultNotLowQuality(Miniature):
    """Calls a result with no accepted evidence usable: low quality only for a top quality below threshold.

    Violates R5 as the design note 4.3 states it: "isLowQuality = 无可用证据 或 topSimilarity <
    referenceThreshold" (no usable evidence OR the top quality below the reference threshold); a
    filtered lookup that finds nothing is then never retried.
    """

    def low_quality(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: Sequence[Scored]
    ) -> bool:
        return top is not None and top < config.reference_threshold


class TopSimilarityIsRawScore(Miniature):
    """Reports the first block's raw engine score as ``topQualityScore``; the gates still use quality.

    Violates R5: "`topSimilarity` (or equivalent top quality field) ... SHALL use the normalized
    `qualityScore`, not raw L2-under-hybrid fakes".
    """

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        reply = super().post_process(request)
        if not reply.blocks:
            return reply
        first = reply.blocks[0]
        raw = next(
            c.score
            for c in request.candidates
            if (c.doc_id, c.chunk_index, c.original_rank)
            == (first.doc_id, first.chunk_index, first.original_rank)
        )
        return reply.model_copy(update={"top_quality_score": raw})
