"""Evidence post-processing: assembly in retrieval order, never a second ranking.

:func:`post_process` runs the spec's steps in the spec's order:

0. Every candidate handed in goes through the normalizer's checks first, so one bad candidate fails the
   whole batch, named, with the normalizer's own error (a dropped candidate included).
1. Stable sort by ``originalRank`` ascending; equal ranks keep their input order.
2. Dedup by evidence key ``docId#chunkIndex``, keeping the best-ranked copy.
3. Per-document cap (``rag.max-chunks-per-document``), keeping the best-ranked chunks.
4. ``rag.return-n`` bounds the total.
5. ``qualityScore`` of each accepted candidate, by the single normalizer. The batch size of the hybrid
   rank mapping is the number of candidates handed in, before dedup.
6. Gates from ``qualityScore`` only. "Top qualityScore" is read as the highest quality among accepted
   blocks. In dense mode, and in hybrid mode without ``denseDistance``, that is also the first block's
   quality; with ``denseDistance`` the two can differ and the highest one decides.

Every removed candidate is kept in ``dropped`` with the first step that removed it: the reason names the
setting that would bring it back. Steps 2 to 4 count what survived the steps before them, not only what
was accepted, so a document is capped once ``cap`` distinct chunks of it came before, whatever became of
them.

L0 hints only add explanation entries to ``hitReasons`` (``l0_keyword_overlap`` and friends). They never
change order, quality, level or gates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ._errors import InvalidCandidateError, UnknownScoreLabelError
from ._labels import canonicalize_label
from ._models import (
    Candidate,
    CompletenessHint,
    DroppedCandidate,
    DropReason,
    EvidenceBlock,
    L0Hints,
    PostProcessResult,
    RelevanceLevel,
)
from ._quality import check_max_l2, normalize
from ._settings import Settings

__all__ = ["completeness_for", "is_low_quality", "post_process", "relevance_for"]


def post_process(
    candidates: Iterable[Candidate],
    settings: Settings | None = None,
    *,
    hints: L0Hints | None = None,
) -> PostProcessResult:
    """Turn retrieval candidates into evidence blocks in retrieval order, with quality gates."""
    settings = settings or Settings()
    batch = list(candidates)
    batch_size = len(batch)
    max_l2 = settings.max_l2_distance

    # 0. The normalizer's checks, on every candidate (the setting first: it is the same for all).
    if batch:
        check_max_l2(max_l2)
    for candidate in batch:
        _quality(candidate, batch_size, max_l2)

    cap, return_n = settings.max_chunks_per_document, settings.return_n
    accepted: list[Candidate] = []
    dropped: list[DroppedCandidate] = []
    chunks_of: defaultdict[str, set[int]] = defaultdict(set)  # per document, the chunks that came before
    # 1. Sort by originalRank (sorted() is stable: equal ranks keep their input order).
    for candidate in sorted(batch, key=lambda candidate: candidate.original_rank):
        doc, chunk = candidate.doc_id, candidate.chunk_index
        chunks_before = chunks_of[doc]
        reason: DropReason | None = None
        if chunk in chunks_before:  # 2. dedup
            reason = "duplicate"
        elif len(chunks_before) >= cap:  # 3. per-document cap
            reason = "per_document_cap"
        elif len(accepted) >= return_n:  # 4. return-n
            reason = "return_n"
        chunks_before.add(chunk)
        if reason is None:
            accepted.append(candidate)
        else:
            dropped.append(DroppedCandidate(doc, chunk, candidate.original_rank, reason))

    # 5. qualityScore of the accepted candidates (a dropped candidate's is never shown or read).
    qualities = [_quality(candidate, batch_size, max_l2) for candidate in accepted]
    blocks = [
        _block(candidate, quality, hints, settings.excerpt_max_chars)
        for candidate, quality in zip(accepted, qualities, strict=True)
    ]

    # 6. The gates, from the top qualityScore alone.
    top = max(qualities, default=None)
    return PostProcessResult(
        blocks=tuple(blocks),
        dropped=tuple(dropped),
        relevance_level=relevance_for(top, settings),
        top_quality_score=top,
        is_low_quality=is_low_quality(top, settings),
        completeness=completeness_for(top, settings),
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


def _quality(candidate: Candidate, batch_size: int, max_l2_distance: float) -> float:
    """The candidate's qualityScore by the single normalizer (``max_l2_distance`` checked by the caller);
    its errors name the candidate."""
    try:
        return normalize(
            canonicalize_label(candidate.score_label),
            candidate.score,
            candidate.original_rank,
            batch_size,
            max_l2_distance,
            candidate.dense_distance,
        )
    except InvalidCandidateError as exc:
        # A batch has many candidates: say which one, keeping the error's type.
        raise type(exc)(str(exc), candidate=_who(candidate)) from None
    except UnknownScoreLabelError as exc:
        raise UnknownScoreLabelError(exc.label, exc.accepted, candidate=_who(candidate)) from None


def _who(candidate: Candidate) -> str:
    return f"{candidate.evidence_key} (originalRank {candidate.original_rank})"


def _block(candidate: Candidate, quality: float, hints: L0Hints | None, excerpt_chars: int) -> EvidenceBlock:
    """An accepted candidate as an evidence block: its identity, rank, scores and an excerpt."""
    return EvidenceBlock(
        evidence_key=candidate.evidence_key,
        doc_id=candidate.doc_id,
        chunk_index=candidate.chunk_index,
        original_rank=candidate.original_rank,
        quality_score=quality,
        score=candidate.score,
        score_label=canonicalize_label(candidate.score_label),
        dense_distance=candidate.dense_distance,
        excerpt=candidate.text[:excerpt_chars],
        category=candidate.category,
        source_type=candidate.source_type,
        hit_reasons=_hit_reasons(candidate, hints),
    )


def _hit_reasons(candidate: Candidate, hints: L0Hints | None) -> tuple[str, ...]:
    """Explanations only, worth zero points: the retrieval rank, and which L0 hints the chunk's text or
    metadata mention (case-insensitive contains)."""
    reasons = ["retrieval_rank"]
    if hints is None:
        return tuple(reasons)
    text = candidate.text.casefold()
    if hints.domain and hints.domain.casefold() in text:
        reasons.append("l0_domain_overlap")
    if any(entity and entity.casefold() in text for entity in hints.entities):
        reasons.append("l0_entity_overlap")
    if any(keyword and keyword.casefold() in text for keyword in hints.keywords):
        reasons.append("l0_keyword_overlap")
    if hints.source_type and candidate.source_type == hints.source_type:
        reasons.append("l0_source_type_match")
    return tuple(reasons)
