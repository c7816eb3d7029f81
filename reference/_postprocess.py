"""Evidence post-processing: assembly in retrieval order, never a second ranking.

Steps, in order:

1. ``qualityScore`` for every candidate (the only call site of the normalizer). The batch size for the
   hybrid rank mapping is the number of candidates handed in, before dedup.
2. Stable sort by ``originalRank`` ascending; equal ranks keep their input order.
3. Dedup by evidence key ``docId#chunkIndex``, keeping the best-ranked copy.
4. Per-document cap (``rag.max-chunks-per-document``), keeping the best-ranked chunks.
5. ``rag.return-n`` bounds the total.
6. Gates from ``qualityScore`` only. "Top qualityScore" is read as the highest quality among accepted
   blocks. In dense mode, and in hybrid mode without ``denseDistance``, that is also the first block's
   quality; with ``denseDistance`` the two can differ and the highest one decides.

L0 hints only add explanation entries to ``hitReasons`` (``l0_keyword_overlap`` and friends). They never
change order, quality, level or gates.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import cast

from ._errors import InvalidCandidateError, UnknownScoreLabelError
from ._labels import canonicalize_label
from ._models import (
    Candidate,
    CompletenessHint,
    DropReason,
    L0Hints,
    PostProcessResult,
    RelevanceLevel,
)
from ._quality import check_max_l2, normalize_all, to_quality_score
from ._settings import Settings

__all__ = ["completeness_for", "is_low_quality", "post_process", "relevance_for"]

# What the normalizer reads of a candidate, as one tuple per candidate (attrgetter runs in C).
_NORMALIZER_INPUT = attrgetter("score_label", "score", "original_rank", "dense_distance")


def post_process(
    candidates: Iterable[Candidate],
    settings: Settings | None = None,
    *,
    hints: L0Hints | None = None,
) -> PostProcessResult:
    """Turn retrieval candidates into evidence blocks in retrieval order, with quality gates."""
    settings = settings or Settings()
    hints = hints or L0Hints()
    batch = list(candidates)
    size, max_l2 = len(batch), settings.max_l2_distance
    if batch:
        check_max_l2(max_l2)  # what every normalizer call would check: once for the whole batch
    qualities = _qualities(batch, max_l2)
    ranks = [c.original_rank for c in batch]
    order = sorted(range(size), key=ranks.__getitem__)  # sorted() is stable: equal ranks keep input order

    # Plain dicts here, one validation of the whole result at the end: a single pass through pydantic's
    # core is several times cheaper than a model per candidate when most candidates are capped away.
    blocks: list[dict[str, object]] = []
    dropped: list[dict[str, object]] = []
    seen: set[str] = set()
    per_doc: dict[str, int] = {}
    cap, return_n = settings.max_chunks_per_document, settings.return_n
    for i in order:
        candidate = batch[i]
        doc = candidate.doc_id
        key = f"{doc}#{candidate.chunk_index}"  # evidence_key, built once
        # Each step counts what survived the steps before it, not only what was accepted: the reason
        # names the first step that removes the candidate, i.e. the setting that would bring it back.
        if key in seen:
            reason: DropReason = "duplicate"
            dropped.append({"evidence_key": key, "original_rank": candidate.original_rank, "reason": reason})
            continue
        seen.add(key)
        kept = per_doc.get(doc, 0)
        if kept >= cap:
            reason = "per_document_cap"
        elif len(blocks) >= return_n:
            reason = "return_n"
            per_doc[doc] = kept + 1
        else:
            per_doc[doc] = kept + 1
            blocks.append(_block(candidate, key, qualities[i], hints, settings))
            continue
        dropped.append({"evidence_key": key, "original_rank": candidate.original_rank, "reason": reason})

    top = max((cast(float, b["quality_score"]) for b in blocks), default=None)
    return PostProcessResult.model_validate(
        {
            "blocks": blocks,
            "dropped": dropped,
            "relevance_level": relevance_for(top, settings),
            "top_quality_score": top,
            "is_low_quality": is_low_quality(top, settings),
            "completeness": completeness_for(top, settings),
        },
        by_name=True,
    )


def is_low_quality(top_quality: float | None, settings: Settings) -> bool:
    """No accepted evidence, or the top quality below the reference threshold. Hints play no part."""
    return top_quality is None or top_quality < settings.reference_threshold


def relevance_for(top_quality: float | None, settings: Settings) -> RelevanceLevel:
    """PRECISE at or above the highly-relevant threshold (no hint support needed), lower levels below."""
    if top_quality is None:
        return RelevanceLevel.NONE
    if top_quality >= settings.highly_relevant_threshold:
        return RelevanceLevel.PRECISE
    if top_quality >= settings.reference_threshold:
        return RelevanceLevel.RELEVANT
    if top_quality > 0.0:
        return RelevanceLevel.WEAK
    return RelevanceLevel.NONE


def completeness_for(top_quality: float | None, settings: Settings) -> CompletenessHint:
    """A hint from the top quality alone, on the same two thresholds as the relevance level."""
    if top_quality is not None and top_quality >= settings.highly_relevant_threshold:
        return CompletenessHint.SUFFICIENT
    if top_quality is not None and top_quality >= settings.reference_threshold:
        return CompletenessHint.PARTIAL
    return CompletenessHint.INSUFFICIENT


def _qualities(batch: list[Candidate], max_l2_distance: float) -> list[float]:
    """Every candidate's qualityScore by the single normalizer, in input order."""
    try:
        return normalize_all(map(_NORMALIZER_INPUT, batch), len(batch), max_l2_distance)
    except (InvalidCandidateError, UnknownScoreLabelError):
        for candidate in batch:  # the rare path: find the first bad candidate again, to name it
            _quality(candidate, len(batch), max_l2_distance)
        raise


def _quality(candidate: Candidate, batch_size: int, max_l2_distance: float) -> float:
    try:
        return to_quality_score(
            candidate.score_label,
            candidate.score,
            rank=candidate.original_rank,
            batch_size=batch_size,
            max_l2_distance=max_l2_distance,
            dense_distance=candidate.dense_distance,
        )
    except InvalidCandidateError as exc:
        # A batch has many candidates: say which one, keeping the error's type.
        raise type(exc)(str(exc), candidate=_who(candidate)) from None
    except UnknownScoreLabelError as exc:
        raise UnknownScoreLabelError(exc.label, exc.accepted, candidate=_who(candidate)) from None


def _who(candidate: Candidate) -> str:
    return f"{candidate.evidence_key} (originalRank {candidate.original_rank})"


def _block(
    candidate: Candidate, key: str, quality: float, hints: L0Hints, settings: Settings
) -> dict[str, object]:
    return {
        "evidence_key": key,
        "doc_id": candidate.doc_id,
        "chunk_index": candidate.chunk_index,
        "original_rank": candidate.original_rank,
        "quality_score": quality,
        "score": candidate.score,
        "score_label": canonicalize_label(candidate.score_label),
        "dense_distance": candidate.dense_distance,
        "excerpt": candidate.text[: settings.excerpt_max_chars],
        "category": candidate.category,
        "source_type": candidate.source_type,
        "hit_reasons": ("retrieval_rank", *hit_reasons(candidate, hints)),
    }


def hit_reasons(candidate: Candidate, hints: L0Hints) -> tuple[str, ...]:
    """Explanations only, worth zero points: which L0 hints the chunk text or metadata mention."""
    text = candidate.text.casefold()
    reasons = []
    if hints.domain and hints.domain.casefold() in text:
        reasons.append("l0_domain_overlap")
    if any(e and e.casefold() in text for e in hints.entities):
        reasons.append("l0_entity_overlap")
    if any(k and k.casefold() in text for k in hints.keywords):
        reasons.append("l0_keyword_overlap")
    if hints.source_type and candidate.source_type == hints.source_type:
        reasons.append("l0_source_type_match")
    return tuple(reasons)
