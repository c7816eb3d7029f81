"""``reference/_postprocess.py`` as it was at git 02ce19c, before issue 25 made it read as the spec's steps.

The old version, frozen for comparison only (see :mod:`benchmarks.figures.old_reference`): copied
unchanged but for the imports, which take ``trusted`` and ``normalize_all`` from their frozen copies
beside it. Nothing of the reference imports it. Its own docstring follows.

Evidence post-processing: assembly in retrieval order, never a second ranking.

Steps, in order:

1. The normalizer's input checks for every candidate: one bad candidate fails the whole batch, named,
   with the normalizer's own error. The batch size for the hybrid rank mapping is the number of
   candidates handed in, before dedup.
2. Stable sort by ``originalRank`` ascending; equal ranks keep their input order.
3. Dedup by evidence key ``docId#chunkIndex``, keeping the best-ranked copy.
4. Per-document cap (``rag.max-chunks-per-document``), keeping the best-ranked chunks.
5. ``rag.return-n`` bounds the total.
6. ``qualityScore`` of each accepted candidate, by the single normalizer (a dropped candidate's quality
   is never shown or read, so it is not computed).
7. Gates from ``qualityScore`` only. "Top qualityScore" is read as the highest quality among accepted
   blocks. In dense mode, and in hybrid mode without ``denseDistance``, that is also the first block's
   quality; with ``denseDistance`` the two can differ and the highest one decides.

L0 hints only add explanation entries to ``hitReasons`` (``l0_keyword_overlap`` and friends). They never
change order, quality, level or gates.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product, repeat
from math import isfinite
from operator import attrgetter, itemgetter
from typing import NamedTuple

from reference._errors import InvalidCandidateError, UnknownScoreLabelError
from reference._labels import CANONICAL_LABELS, LEGACY_ALIASES, canonicalize_label
from reference._models import (
    Candidate,
    CompletenessHint,
    DroppedCandidate,
    DropReason,
    EvidenceBlock,
    L0Hints,
    PostProcessResult,
    RelevanceLevel,
)
from reference._quality import NEGATIVE_DISTANCE_TOLERANCE, check_max_l2, to_quality_score
from reference._settings import Settings

from .models import trusted, trusted_all
from .quality import normalize_all

__all__ = ["completeness_for", "is_low_quality", "post_process", "relevance_for"]

# What the normalizer reads of a candidate, as one tuple per candidate (attrgetter runs in C).
_NORMALIZER_INPUT = attrgetter("score_label", "score", "original_rank", "dense_distance")
_DOC, _CHUNK, _RANK = attrgetter("doc_id"), attrgetter("chunk_index"), attrgetter("original_rank")
_LABEL, _SCORE, _DENSE_DISTANCE = attrgetter("score_label"), attrgetter("score"), attrgetter("dense_distance")
# Every label that canonicalizes to dense, and to hybrid.
_LABELS_OF = {
    canonical: frozenset(
        label for label in (*CANONICAL_LABELS, *LEGACY_ALIASES) if canonicalize_label(label) == canonical
    )
    for canonical in CANONICAL_LABELS
}
_OVERLAP_REASONS = ("l0_domain_overlap", "l0_entity_overlap", "l0_keyword_overlap", "l0_source_type_match")
_new_tuple = tuple.__new__  # a DroppedCandidate from its fields' tuple, without a Python frame
_is_dropped = itemgetter(3)  # (doc, chunk, rank, reason): a reason means dropped


def post_process(
    candidates: Iterable[Candidate],
    settings: Settings | None = None,
    *,
    hints: L0Hints | None = None,
) -> PostProcessResult:
    """Turn retrieval candidates into evidence blocks in retrieval order, with quality gates."""
    settings = settings or Settings()
    batch = list(candidates)
    size, max_l2 = len(batch), settings.max_l2_distance
    ranks = list(map(_RANK, batch))
    if batch:
        check_max_l2(max_l2)  # what every normalizer call would check: once for the whole batch
        if not _normalizable(batch, ranks):
            _qualities(batch, max_l2)  # raises the normalizer's error for the first bad candidate
    in_order = sorted(ranks)
    if ranks != in_order:  # engine order is rank order already; sorted() is stable for equal ranks
        batch = [batch[i] for i in sorted(range(size), key=ranks.__getitem__)]
    accepted, dropped = _assemble(batch, in_order, settings.max_chunks_per_document, settings.return_n)

    # Quality for the accepted candidates only: every candidate's inputs passed the normalizer's checks
    # above, and a dropped candidate's quality is never shown or read. The batch size is all of it.
    chosen = [batch[i] for i in accepted]
    qualities = normalize_all(map(_NORMALIZER_INPUT, chosen), size, max_l2)
    blocks = _blocks(chosen, qualities, hints, settings.excerpt_max_chars)
    top = max(qualities, default=None)
    return trusted(
        PostProcessResult,
        {
            "blocks": blocks,
            "dropped": dropped,
            "relevance_level": relevance_for(top, settings),
            "top_quality_score": top,
            "is_low_quality": is_low_quality(top, settings),
            "completeness": completeness_for(top, settings),
        },
    )


def _assemble(
    ordered: list[Candidate], ranks: list[int], cap: int, return_n: int
) -> tuple[list[int], tuple[DroppedCandidate, ...]]:
    """Dedup, per-document cap and return-n over candidates in retrieval order: the positions accepted,
    and every candidate dropped with its reason.

    Each step counts what survived the steps before it, not only what was accepted: the reason names
    the first step that removes the candidate, i.e. the setting that would bring it back. So a document
    is capped once ``cap`` distinct chunks of it came before, whatever became of them. The loop only
    finds each candidate's reason; the drops are made from the reasons in one pass in C.
    """
    docs, chunks = list(map(_DOC, ordered)), list(map(_CHUNK, ordered))
    chunks_of: dict[str, set[int]] = {}  # the distinct chunks seen so far, per document
    reasons: list[DropReason | None] = []  # None: accepted
    note, accepted, room = reasons.append, [], return_n
    for position, doc, chunk in zip(range(len(docs)), docs, chunks, strict=True):
        seen = chunks_of.get(doc)
        reason: DropReason | None
        if seen is None:
            chunks_of[doc] = {chunk}
            reason = None if cap >= 1 else "per_document_cap"
        elif chunk in seen:
            reason = "duplicate"
        else:
            reason = "per_document_cap" if len(seen) >= cap else None
            seen.add(chunk)
        if reason is None:
            if room > 0:
                accepted.append(position)
                room -= 1
            else:
                reason = "return_n"
        note(reason)
    fields = zip(docs, chunks, ranks, reasons, strict=True)
    dropped = tuple(map(_new_tuple, repeat(DroppedCandidate), filter(_is_dropped, fields)))
    return accepted, dropped


def _normalizable(batch: list[Candidate], ranks: list[int]) -> bool:
    """True when the normalizer would take every candidate of the batch without an error.

    A few passes in C over the batch instead of the normalizer on each candidate. ``False`` is not an
    error: it sends the batch through the normalizer itself, which raises for the first bad candidate
    (mixed or unknown labels, or a sum of distances too large for a float, take that path too).
    """
    labels = set(map(_LABEL, batch))
    if labels <= _LABELS_OF["hybrid"]:
        if min(ranks) < 1:
            return False  # the rank mapping refuses it, where a candidate has no denseDistance
        read = list(map(_DENSE_DISTANCE, batch))
    elif labels <= _LABELS_OF["dense"]:
        read = list(map(_SCORE, batch))
    else:
        return False
    try:
        total, least = sum(read), min(read, default=0.0)
    except TypeError:  # a null among them: those read as quality 0 and are fine
        read = [distance for distance in read if distance is not None]
        total, least = sum(read), min(read, default=0.0)
    # A NaN or an infinity makes the sum non-finite; a finite sum means every distance is finite.
    return isfinite(total) and least >= -NEGATIVE_DISTANCE_TOLERANCE


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


def _blocks(
    chosen: list[Candidate], qualities: list[float], hints: L0Hints | None, excerpt: int
) -> tuple[EvidenceBlock, ...]:
    """The accepted candidates as evidence blocks; every value is already valid for a block."""
    terms = _HintTerms.of(hints) if hints else None
    rows = []
    for candidate, quality in zip(chosen, qualities, strict=True):
        fields = vars(candidate)  # its field values, read as one dict
        text = fields["text"]
        rows.append(
            {
                "evidence_key": f"{fields['doc_id']}#{fields['chunk_index']}",
                "doc_id": fields["doc_id"],
                "chunk_index": fields["chunk_index"],
                "original_rank": fields["original_rank"],
                "quality_score": quality,
                "score": fields["score"],
                "score_label": canonicalize_label(fields["score_label"]),
                "dense_distance": fields["dense_distance"],
                "excerpt": text[:excerpt],
                "category": fields["category"],
                "source_type": fields["source_type"],
                "hit_reasons": _RANK_ONLY if terms is None else terms.reasons(text, fields["source_type"]),
            }
        )
    return tuple(trusted_all(EvidenceBlock, rows))


class _HintTerms(NamedTuple):
    """L0 hints casefolded once per batch, for the hit reasons of each accepted candidate."""

    domain: str
    entities: tuple[str, ...]
    keywords: tuple[str, ...]
    source_type: str | None

    @classmethod
    def of(cls, hints: L0Hints) -> _HintTerms:
        return cls(
            (hints.domain or "").casefold(),
            tuple([e.casefold() for e in hints.entities if e]),
            tuple([k.casefold() for k in hints.keywords if k]),
            hints.source_type or None,
        )

    def reasons(self, text: str, source_type: str | None) -> tuple[str, ...]:
        """Explanations only, worth zero points: which L0 hints the chunk text or metadata mention."""
        domain = entity = keyword = False
        if self.domain or self.entities or self.keywords:
            text = text.casefold()
            domain = bool(self.domain) and self.domain in text
            entity = any(map(text.__contains__, self.entities))
            keyword = any(map(text.__contains__, self.keywords))
        source = self.source_type is not None and source_type == self.source_type
        return _REASONS[domain, entity, keyword, source]


# Every combination of hint overlaps, its hitReasons made once: (domain, entity, keyword, sourceType).
_REASONS = {
    flags: (
        "retrieval_rank",
        *(reason for reason, on in zip(_OVERLAP_REASONS, flags, strict=True) if on),
    )
    for flags in product((False, True), repeat=4)
}
_RANK_ONLY = ("retrieval_rank",)
