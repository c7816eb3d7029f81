"""Plain value types of the reference: candidates in, evidence out.

JSON uses the spec's camelCase names (``docId``, ``originalRank``, ``scoreLabel`` ...); Python code uses
snake_case attributes. Both spellings are accepted on input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    SerializationInfo,
    TypeAdapter,
    field_serializer,
    model_validator,
)
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


class DroppedCandidate(NamedTuple):
    """A candidate that post-processing removed, and why. Nothing is dropped silently.

    A named tuple, not a model: a batch of a thousand candidates drops nearly all of them, and a tuple
    costs a fraction of a model to make. It keeps the chunk's identity as a candidate does (``doc_id``,
    ``chunk_index``, and ``evidence_key`` from them). In JSON it is an object like the other values:
    ``{"evidenceKey": "doc#3", "originalRank": 7, "reason": "per_document_cap"}``.
    """

    doc_id: str
    chunk_index: int
    original_rank: int
    reason: DropReason

    @property
    def evidence_key(self) -> str:
        return evidence_key(self.doc_id, self.chunk_index)


# How JSON and model_dump spell a dropped candidate, by attribute name and by alias.
_DROPPED_JSON = ("evidence_key", "original_rank", "reason")
_DROPPED_ALIASES = tuple(to_camel(name) for name in _DROPPED_JSON)
# A dropped candidate from its fields, checked as the models check theirs (camelCase names, no extras).
_DROPPED_FROM_FIELDS = TypeAdapter(
    DroppedCandidate, config=ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
)


def _dropped(item: Any) -> Any:
    """A dropped candidate as :func:`reference.post_process` makes it, taken as it is; as JSON or a dump
    spells it (an object with ``evidenceKey``), or as a plain tuple of its fields, validated into one."""
    if isinstance(item, DroppedCandidate):
        return item
    if isinstance(item, Mapping):
        item = _dropped_fields(item)
    return _DROPPED_FROM_FIELDS.validate_python(item)


def _dropped_fields(item: Mapping[str, Any]) -> Any:
    """A dropped candidate's JSON object as the tuple's fields; anything unexpected goes to pydantic as
    it is, which names the problem."""
    if set(item) - {*_DROPPED_JSON, *_DROPPED_ALIASES}:
        return item
    found = {}
    for name, alias in zip(_DROPPED_JSON, _DROPPED_ALIASES, strict=True):
        if alias in item or name in item:
            found[name] = item[alias] if alias in item else item[name]
    key = found.pop("evidence_key", None)
    doc, sep, chunk = key.rpartition("#") if isinstance(key, str) else ("", "", "")
    if not (sep and doc and chunk.isdigit()):
        raise ValueError(f"evidenceKey is {key!r}; it must be docId#chunkIndex")
    return {"doc_id": doc, "chunk_index": int(chunk), **found}


class PostProcessResult(_Model):
    """Accepted blocks in retrieval order, every dropped candidate, and the quality gates."""

    blocks: tuple[EvidenceBlock, ...]
    # A DroppedCandidate is taken as it is: rebuilding each tuple of a batch's drops from its fields would
    # cost more than the rest of post-processing. Anything else is validated into one (see _dropped).
    dropped: tuple[Annotated[InstanceOf[DroppedCandidate], BeforeValidator(_dropped)], ...]
    relevance_level: RelevanceLevel
    top_quality_score: float | None = Field(default=None, ge=0.0, le=1.0)
    is_low_quality: bool
    completeness: CompletenessHint

    @field_serializer("dropped")
    def _dropped_as_objects(
        self, dropped: tuple[DroppedCandidate, ...], info: SerializationInfo
    ) -> list[dict[str, Any]]:
        key, rank, reason = _DROPPED_JSON if info.by_alias is False else _DROPPED_ALIASES
        return [{key: d.evidence_key, rank: d.original_rank, reason: d.reason} for d in dropped]
