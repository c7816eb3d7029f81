"""The category retry decided on the implementation's own terms, where the spec's readings disagree.

Whether a filtered hybrid result is "low quality" depends on readings the spec leaves open: a rank
mapping (rank 1 is 1.0: never low) or an absolute similarity of the attached denseDistance (R7 "MAY",
formula unspecified). An implementation that declares ``post_process`` or ``quality`` says which one it
holds: the kit hands its own post-process (or normalizer) the filtered attempt's candidates, as its own
search gives them when it declares ``search`` (so denseDistance is attached exactly as it attaches it),
else as the kit knows them with and without denseDistance; the decisions it reaches are the ones its
lookup must follow. Nothing is judged here: the answers only narrow what the lookup check allows.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..boundary._asking import ask
from ..boundary._errors import ConformanceError
from ..boundary._protocol import (
    Implementation,
    ImplementationInfo,
    LookupRequest,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    WireCandidate,
)
from . import _spec_model as model

__all__ = ["own_low_quality"]


def own_low_quality(
    implementation: Implementation, info: ImplementationInfo, request: LookupRequest, truth: model.LookupTruth
) -> set[bool] | None:
    """The filtered result's low-quality decisions on the terms of ``implementation`` (which declared
    ``info``), or None when the readings agree already or it declares nothing that says which one it holds."""
    filtered = truth.filtered
    if filtered is None or len(model.low_quality_readings(filtered, request.config)) == 1:
        return None
    if not (info.supports("post_process") or info.supports("quality")):
        return None
    try:
        decisions: set[bool] = set()
        for candidates in _own_candidates(implementation, info, request, filtered):
            decided = _decide(implementation, info, request, candidates)
            if decided is None:
                return None
            decisions |= decided
    except ConformanceError:
        return None  # it could not say: the readings decide
    return decisions or None


def _own_candidates(
    implementation: Implementation, info: ImplementationInfo, request: LookupRequest, attempt: model.Attempt
) -> list[tuple[WireCandidate, ...]]:
    if info.supports("search", request.mode):
        search = request.search(request.category)
        reply: SearchReply = ask(implementation, "search", search)
        by_key = {(c.doc_id, c.chunk_index): c for c in (*attempt.candidates, *attempt.spill)}
        own = []
        for hit in sorted(reply.hits, key=lambda h: h.original_rank):
            known = by_key.get((hit.doc_id, hit.chunk_index))
            own.append(
                WireCandidate(
                    doc_id=hit.doc_id,
                    chunk_index=hit.chunk_index,
                    text=known.text if known else "",
                    original_rank=hit.original_rank,
                    score=hit.score,
                    score_label=hit.score_label,
                    raw_score=hit.raw_score,
                    dense_distance=hit.dense_distance,
                    category=known.category if known else None,
                    source_type=known.source_type if known else None,
                )
            )
        return [tuple(own)]
    stripped = tuple(c.model_copy(update={"dense_distance": None}) for c in attempt.candidates)
    return [attempt.candidates, stripped]


def _decide(
    implementation: Implementation,
    info: ImplementationInfo,
    request: LookupRequest,
    candidates: Sequence[WireCandidate],
) -> set[bool] | None:
    config = request.config
    tolerance = model.QUALITY_TOLERANCE + model.DISTANCE_TOLERANCE / config.max_l2_distance
    if info.supports("post_process"):
        ask_request = PostProcessRequest(candidates=tuple(candidates), hints=request.hints, config=config)
        reply: PostProcessReply = ask(implementation, "post_process", ask_request)
        tops = model.top_readings([b.quality_score for b in reply.blocks])
        if any(abs(t - config.reference_threshold) <= tolerance for t in tops):
            return {True, False}
        return {reply.is_low_quality}
    kept = model.kept_candidates(candidates, config, limit=config.return_n)
    if not kept:
        return {True}
    decisions: set[bool] = set()
    for n in model.batch_sizes(candidates, len(kept), len(kept)):
        qualities = [_quality(implementation, c, n, config.max_l2_distance) for c in kept]
        for top in model.top_readings(qualities):
            decisions.add(top < config.reference_threshold)
            if abs(top - config.reference_threshold) <= tolerance:
                decisions.update((True, False))
    return decisions


def _quality(implementation: Implementation, c: WireCandidate, n: int, max_l2: float) -> float:
    request = QualityRequest(
        score_label=c.score_label,
        score=c.score,
        original_rank=c.original_rank,
        batch_size=n,
        max_l2_distance=max_l2,
        dense_distance=c.dense_distance,
    )
    answer: float = ask(implementation, "quality_score", request)
    return answer
