"""Plain value types of the reference: candidates in, evidence out.

JSON uses the spec's camelCase names (``docId``, ``originalRank``, ``scoreLabel`` ...); Python code uses
snake_case attributes. Both spellings are accepted on input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    field_serializer,
    field_validator,
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
    "trusted",
    "trusted_all",
]

_M = TypeVar("_M", bound=BaseModel)


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


class PostProcessResult(_Model):
    """Accepted blocks in retrieval order, every dropped candidate, and the quality gates."""

    blocks: tuple[EvidenceBlock, ...]
    dropped: tuple[DroppedCandidate, ...]
    relevance_level: RelevanceLevel
    top_quality_score: float | None = Field(default=None, ge=0.0, le=1.0)
    is_low_quality: bool
    completeness: CompletenessHint

    @field_validator("dropped", mode="before")
    @classmethod
    def _dropped_objects(cls, value: Any) -> Any:
        """A dropped candidate given as an object (JSON), in either spelling, becomes its tuple."""
        if not isinstance(value, list | tuple):
            return value
        return [_dropped_from(item) if isinstance(item, Mapping) else item for item in value]

    @field_serializer("dropped")
    def _dropped_as_objects(
        self, dropped: tuple[DroppedCandidate, ...], info: SerializationInfo
    ) -> list[dict[str, Any]]:
        key, rank, reason = _DROPPED_JSON if info.by_alias is False else _DROPPED_ALIASES
        return [{key: d.evidence_key, rank: d.original_rank, reason: d.reason} for d in dropped]


def _dropped_from(item: Mapping[str, Any]) -> Any:
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


# What pydantic keeps on every model instance (pydantic 2's BaseModel slots). Where a pydantic release
# keeps something else, trusted() validates instead: slower, the same values.
_STATE = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
_CAN_SET_STATE = tuple(BaseModel.__slots__) == _STATE and all(name in vars(BaseModel) for name in _STATE)
if _CAN_SET_STATE:  # the slots' own setters: a third faster than object.__setattr__ by name
    _set_dict, _set_fields, _set_extra, _set_private = (vars(BaseModel)[name].__set__ for name in _STATE)


@functools.cache
def _field_names(cls: type[BaseModel]) -> frozenset[str]:
    return frozenset(cls.model_fields)


def trusted(cls: type[_M], values: dict[str, Any], *, unset: frozenset[str] = frozenset()) -> _M:
    """A ``cls`` instance holding ``values``, which the caller has made valid for it: no validation.

    ``values`` has every field of ``cls``, by attribute name, in declaration order, each already of its
    field's type and meeting every check of the model (validators included); ``unset`` names fields
    that hold their default and were not given. The instance is what ``cls.model_validate`` returns for
    the given fields, equal, with the same fields set, the same repr and dumps, for a fraction of the
    time. The hot paths of a search use it for values they build from validated input;
    ``tests/reference/test_trusted.py`` holds it to that.
    """
    if not _CAN_SET_STATE:
        given = {name: value for name, value in values.items() if name not in unset}
        return cls.model_validate(given, by_name=True)
    instance = cls.__new__(cls)
    _set_dict(instance, values)
    _set_fields(instance, set(values).difference(unset) if unset else set(_field_names(cls)))
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def trusted_all(cls: type[_M], rows: Iterable[dict[str, Any]]) -> list[_M]:
    """:func:`trusted` for each row, every row giving every field: one call for a whole reply."""
    if not _CAN_SET_STATE:
        return [cls.model_validate(values, by_name=True) for values in rows]
    new, names = cls.__new__, _field_names(cls)
    out: list[_M] = []
    append = out.append
    for values in rows:
        instance = new(cls)
        _set_dict(instance, values)
        _set_fields(instance, set(names))
        _set_extra(instance, None)
        _set_private(instance, None)
        append(instance)
    return out
