"""Plain value types of the reference: candidates in, evidence out.

JSON uses the spec's camelCase names (``docId``, ``originalRank``, ``scoreLabel`` ...); Python code uses
snake_case attributes. Both spellings are accepted on input.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ._errors import InvalidEvidenceIdError, InvalidRankError, InvalidScoreError

__all__ = [
    "Candidate",
    "CompletenessHint",
    "DropReason",
    "DroppedCandidate",
    "EvidenceBlock",
    "L0Hints",
    "PostProcessResult",
    "RelevanceLevel",
]


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,  # JSON speaks the spec's camelCase unless asked otherwise
        frozen=True,
        extra="forbid",
    )


def evidence_key(doc_id: str, chunk_index: int) -> str:
    """The chunk identity used for dedup: ``docId#chunkIndex``."""
    return f"{doc_id}#{chunk_index}"


class Candidate(_Model):
    """One retrieval hit as the store emits it, before post-processing.

    ``score`` is the engine's primary score, interpreted by ``score_label``: an L2 distance (smaller is
    better) for ``dense``, the engine's fused score for ``hybrid``. ``score_label`` is kept as emitted
    (legacy aliases included); only :func:`reference.canonicalize_label` interprets it.
    """

    doc_id: str
    chunk_index: int
    text: str = ""
    original_rank: int
    score: float | None = None
    score_label: str
    raw_score: float | None = None
    dense_distance: float | None = None
    category: str | None = None
    source_type: str | None = None

    @property
    def evidence_key(self) -> str:
        return evidence_key(self.doc_id, self.chunk_index)

    @model_validator(mode="after")
    def _check(self) -> Candidate:
        # Runs for every hit of every search: the common case is three comparisons and three finite
        # checks; the message is built only for a bad candidate.
        score, raw, dense = scores = (self.score, self.raw_score, self.dense_distance)
        if (
            self.doc_id
            and self.chunk_index >= 0
            and self.original_rank >= 1
            and (score is None or math.isfinite(score))
            and (raw is None or math.isfinite(raw))
            and (dense is None or math.isfinite(dense))
        ):
            return self
        who = f"{self.doc_id!r}#{self.chunk_index} (originalRank {self.original_rank})"
        if not self.doc_id:
            raise InvalidEvidenceIdError("docId is empty; every hit needs its document id", candidate=who)
        if self.chunk_index < 0:
            raise InvalidEvidenceIdError(
                f"chunkIndex is {self.chunk_index}; chunk indexes start at 0", candidate=who
            )
        if self.original_rank < 1:
            raise InvalidRankError(
                f"originalRank is {self.original_rank}; ranks start at 1 (the best hit)", candidate=who
            )
        for name, value in zip(("score", "rawScore", "denseDistance"), scores, strict=True):
            if value is not None and not math.isfinite(value):
                raise InvalidScoreError(f"{name} is {value}; scores must be finite numbers", candidate=who)
        return self


class L0Hints(_Model):
    """Query hints from the L0 layer. They only explain hits (``hitReasons``); they never score them."""

    domain: str | None = None
    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    source_type: str | None = None


class RelevanceLevel(StrEnum):
    """Relevance of a post-processed result, from its top ``qualityScore`` alone."""

    PRECISE = "PRECISE"
    HIGHLY_RELEVANT = "HIGHLY_RELEVANT"
    RELEVANT = "RELEVANT"
    WEAK = "WEAK"
    NONE = "NONE"


class CompletenessHint(StrEnum):
    """How far the evidence is likely to answer the query, from the top ``qualityScore`` alone."""

    SUFFICIENT = "SUFFICIENT"
    PARTIAL = "PARTIAL"
    INSUFFICIENT = "INSUFFICIENT"


DropReason = Literal["duplicate", "per_document_cap", "return_n"]


class EvidenceBlock(_Model):
    """An accepted candidate, in retrieval order."""

    evidence_key: str
    doc_id: str
    chunk_index: int
    original_rank: int
    quality_score: float = Field(ge=0.0, le=1.0)
    score: float | None
    score_label: Literal["dense", "hybrid"]
    dense_distance: float | None = None
    excerpt: str
    category: str | None = None
    source_type: str | None = None
    hit_reasons: tuple[str, ...] = ()


class DroppedCandidate(_Model):
    """A candidate that post-processing removed, and why. Nothing is dropped silently."""

    evidence_key: str
    original_rank: int
    reason: DropReason


class PostProcessResult(_Model):
    """Accepted blocks in retrieval order, every dropped candidate, and the quality gates."""

    blocks: tuple[EvidenceBlock, ...]
    dropped: tuple[DroppedCandidate, ...]
    relevance_level: RelevanceLevel
    top_quality_score: float | None = Field(default=None, ge=0.0, le=1.0)
    is_low_quality: bool
    completeness: CompletenessHint
