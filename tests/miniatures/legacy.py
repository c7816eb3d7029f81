"""The legacy pipeline of the design note (section 2) behind the adapter Protocol: the kit must fail it on
every requirement at once. The pipeline itself is :mod:`benchmarks.subjects.legacy` (the benchmarks time
it too, and never import the tests).
"""

from __future__ import annotations

from typing import Any

import reference
from benchmarks.subjects.legacy import LEGACY_LABELS, LegacyPipeline, LegacyResult
from conformance.adapters.reference import store_search
from conformance.boundary._protocol import (
    LookupReply,
    LookupRequest,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)

from ._miniature import Miniature

__all__ = ["LegacyAdapter"]


class LegacyAdapter(Miniature):
    """The legacy pipeline behind the adapter Protocol: the kit must fail it on every requirement."""

    def _pipeline(self, config: Any = None, **extra: Any) -> LegacyPipeline:
        settings = _settings(config, **extra) if config is not None else reference.Settings()
        return LegacyPipeline(self._store, settings)

    def canonicalize_label(self, label: str) -> str:
        if label not in LEGACY_LABELS:
            raise ValueError(f"unknown score label {label!r}")
        return label  # no canonicalization: every legacy label is first-class

    def quality_score(self, request: QualityRequest) -> float:
        self.canonicalize_label(request.score_label)
        return LegacyPipeline().normalize_l2(request.score, request.max_l2_distance)

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        result = self._pipeline(request.config).post_process(request.candidates, request.hints)
        return _reply(result)

    def search_candidates(self, request: SearchRequest) -> list[WireCandidate]:
        found = store_search(self._pipeline(), request)
        return [WireCandidate.model_validate(c.model_dump()) for c in found]

    def lookup(self, request: LookupRequest) -> LookupReply:
        self._prepared()
        pipeline = self._pipeline(request.config, retrieve_k=request.retrieve_k, rrf_k=request.rrf_k)
        path, result = pipeline.lookup(
            request.query_text,
            request.query_vector,
            mode=request.mode,
            category=request.category,
            hints=request.hints,
        )
        return LookupReply(**_reply(result).model_dump(), path=path)  # type: ignore[arg-type]


def _settings(config: Any, **extra: Any) -> reference.Settings:
    return reference.Settings(
        max_l2_distance=config.max_l2_distance,
        highly_relevant_threshold=config.highly_relevant_threshold,
        reference_threshold=config.reference_threshold,
        return_n=config.return_n,
        max_chunks_per_document=config.max_chunks_per_document,
        **extra,
    )


def _reply(result: LegacyResult) -> PostProcessReply:
    return PostProcessReply(
        blocks=result.blocks,
        dropped=result.dropped,
        relevance_level=result.relevance_level,
        top_quality_score=result.top_base_score,
        is_low_quality=result.is_low_quality,
    )
