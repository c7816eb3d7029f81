"""The adapter boundary: plain pydantic values and one small Protocol.

These same models are the wire format of the out-of-process protocol. No pymilvus type crosses the
boundary. JSON field names are the spec's camelCase names; Python attributes are snake_case.

This module is deliberately independent of :mod:`reference`: the judge must not share the judged
implementation's types, so a bug in one cannot hide in the other.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr
from pydantic.alias_generators import to_camel

__all__ = [
    "BASE_CAPABILITIES",
    "PURE_CAPABILITIES",
    "REPLY_TYPES",
    "Block",
    "Capability",
    "Corpus",
    "CorpusChunk",
    "Dropped",
    "EngineFacts",
    "Flag",
    "Hints",
    "Hit",
    "Implementation",
    "ImplementationInfo",
    "LookupReply",
    "LookupRequest",
    "MilvusEndpoint",
    "Mode",
    "PostProcessConfig",
    "PostProcessReply",
    "PostProcessRequest",
    "QualityRequest",
    "Real",
    "Reply",
    "SearchReply",
    "SearchRequest",
    "WholeNumber",
    "WireCandidate",
    "wrong_number_types",
]

Mode = Literal["dense", "hybrid"]


# -- numbers: one coercion rule for every path (in process and over stdio) ------------------------


def _real(value: Any) -> Any:
    """Any JSON or Python real number (numpy scalars included) becomes a float; text never does.

    pydantic's lax mode would read the string "0.5" as 0.5 and a bool as 1: a reply that sends text or
    a bool where the protocol has a number is a reply error, the same in process and over stdio.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if value is None:
            return value  # optional fields; required ones still reject None
        raise ValueError(f"expected a number, got {type(value).__name__} {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"expected a number a double can hold, got {value!r}") from None


def _whole(value: Any) -> Any:
    """Any integral number (numpy integers and floats such as 3.0 included) becomes an int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if value is None:
            return value
        raise ValueError(f"expected an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    number = float(value)
    if not (math.isfinite(number) and number.is_integer()):
        raise ValueError(f"expected an integer, got {value!r}")
    return int(number)


def _flag(value: Any) -> Any:
    """``true``/``false`` (and numpy's bool in process); never text or a number.

    pydantic's lax mode would read ``"true"``, ``"yes"`` and ``1`` as True, which the JSON Schema
    (``boolean``) refuses: the kit reads a reply the way its schema states, in process and over stdio.
    """
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise ValueError(f"expected true or false, got {type(value).__name__} {value!r}")


_NOT_A_NUMBER = ("expected a number", "expected an integer", "expected true or false")


def wrong_number_types(errors: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """The fields of a reply that hold text (or a bool) where the protocol has a number or a flag (or a
    number where it has a flag): each
    one's path (``blocks.0.qualityScore``; ``""`` for a reply that is itself a number) and what it held,
    from pydantic's ``errors()``. Empty when any error is of another kind: only a reply whose one fault
    is such values can be judged by the value it meant (the judge reads it as the rule's value)."""
    found = []
    for error in errors:
        plain = isinstance(error.get("input"), str | bool | int | float)  # not an object or a list
        if not plain or not any(text in str(error.get("msg", "")) for text in _NOT_A_NUMBER):
            return ()
        loc = [str(p) for p in error.get("loc", ()) if p not in ("result",)]
        found.append((".".join(loc), error.get("input")))
    return tuple(found)


Real = Annotated[float, BeforeValidator(_real)]
"""A float field that accepts any real number type and rejects text and booleans."""
WholeNumber = Annotated[int, BeforeValidator(_whole)]
"""An int field that accepts any integral number type and rejects text and booleans."""
Flag = Annotated[bool, BeforeValidator(_flag)]
"""A bool field that accepts true and false only (numpy's bool in process), never text or numbers."""


class Wire(BaseModel):
    """Base of every boundary value: camelCase JSON, frozen, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,  # the wire is camelCase whoever dumps it
        frozen=True,
        extra="forbid",
        # The kit writes every field of a request, null where a value is absent: the request schema
        # says so (a default is what the kit puts there, not a field it may leave out).
        json_schema_serialization_defaults_required=True,
    )


class Reply(Wire):
    """Base of every value an implementation returns: fields the protocol does not define are kept.

    Implementations add fields (R5 names completeness hints; libraries add their own): the kit reports
    them and never fails or errors a reply for them (see :attr:`pydantic.BaseModel.model_extra`).
    """

    model_config = ConfigDict(extra="allow")


class Capability(StrEnum):
    """What an implementation can be asked. Scenarios needing an undeclared one are NOT APPLICABLE.

    ``search`` and ``lookup`` cover both search modes; ``search:dense``, ``search:hybrid``,
    ``lookup:dense`` and ``lookup:hybrid`` declare one mode only.
    """

    LABELS = "labels"  # canonicalize a scoreLabel
    QUALITY = "quality"  # the single normalizer
    POST_PROCESS = "post_process"  # candidates -> ordered evidence blocks and gates
    SEARCH = "search"  # ingest the kit's corpus into a Milvus the kit provides, then search it
    LOOKUP = "lookup"  # search + post-process + the category low-quality retry, end to end
    SEARCH_DENSE = "search:dense"
    SEARCH_HYBRID = "search:hybrid"
    LOOKUP_DENSE = "lookup:dense"
    LOOKUP_HYBRID = "lookup:hybrid"


BASE_CAPABILITIES = frozenset(
    {Capability.LABELS, Capability.QUALITY, Capability.POST_PROCESS, Capability.SEARCH, Capability.LOOKUP}
)
"""Every capability, both search modes included: what a complete implementation declares."""
PURE_CAPABILITIES = frozenset({Capability.LABELS, Capability.QUALITY, Capability.POST_PROCESS})
"""The capabilities that need no Milvus: labels, the normalizer and post-process (the seed's three
classes). Declaring only these judges 7 of the spec's 12 scenarios: the others need search or lookup."""


def _repeats_allowed(schema: dict[str, Any]) -> None:
    schema.pop("uniqueItems", None)  # a capability named twice is declared once, as the kit reads it


class ImplementationInfo(Reply):
    """What an implementation says about itself: the ``start`` reply over stdio, ``describe()`` in process.

    ``language`` is the language it is written in: reports show ``unknown`` when a stdio program does
    not say (an in-process adapter is Python). Fields the protocol does not define are kept
    (``model_extra``) and reported, like those of every reply.
    """

    name: str
    version: str
    language: str | None = None
    homepage: str | None = None
    capabilities: frozenset[Capability] = Field(json_schema_extra=_repeats_allowed)

    def supports(self, capability: str, mode: str | None = None) -> bool:
        """Whether ``capability`` was declared, for ``mode`` when given (``search``/``lookup`` only).

        Without ``mode``, a mode-qualified declaration (``search:dense``) counts for ``search``.
        """
        declared = {str(c) for c in self.capabilities}
        if capability in declared:
            return True
        if mode is not None:
            return f"{capability}:{mode}" in declared
        return any(c.startswith(f"{capability}:") for c in declared)

    @property
    def needs_milvus(self) -> bool:
        """Whether the implementation must be handed a Milvus and the corpus (search or lookup)."""
        return self.supports("search") or self.supports("lookup")


# -- pure logic ------------------------------------------------------------------------------------


class WireCandidate(Wire):
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


class Hints(Wire):
    """L0 hints. They may explain hits; they must never reorder or rescore them."""

    domain: str | None = None
    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    source_type: str | None = None


class PostProcessConfig(Wire):
    max_l2_distance: float = 2.0
    highly_relevant_threshold: float = 0.75
    reference_threshold: float = 0.5
    return_n: int = 5
    max_chunks_per_document: int = 2


class QualityRequest(Wire):
    score_label: str
    score: float | None = None
    original_rank: int = 1
    batch_size: int = 1
    max_l2_distance: float = 2.0
    dense_distance: float | None = None


class PostProcessRequest(Wire):
    candidates: tuple[WireCandidate, ...]
    hints: Hints = Field(default_factory=Hints)
    config: PostProcessConfig = Field(default_factory=PostProcessConfig)


class Block(Reply):
    """One accepted evidence block. ``evidenceKey`` is the chunk identity ``docId#chunkIndex``."""

    evidence_key: str
    doc_id: str
    chunk_index: WholeNumber
    original_rank: WholeNumber
    quality_score: Real
    score_label: str
    hit_reasons: tuple[str, ...] = ()


class Dropped(Reply):
    """A candidate post-process removed, and why: ``duplicate``, ``per_document_cap`` or ``return_n``."""

    evidence_key: str
    original_rank: WholeNumber
    reason: str


class PostProcessReply(Reply):
    """Accepted blocks in order, optionally every removed candidate (then all of them), and the gates."""

    blocks: tuple[Block, ...]
    dropped: tuple[Dropped, ...] = ()
    relevance_level: str
    top_quality_score: Real | None = None
    is_low_quality: Flag


# -- Milvus-backed ---------------------------------------------------------------------------------


class EngineFacts(Wire):
    """What the kit knows of the engine behind an endpoint (``docs/engines.md``); None: not known.

    ``version`` is the engine's own (``milvus_lite-3.2.2``, ``v2.5.4``); ``api_level`` the Milvus
    server line whose API it serves for what the kit uses (``2.5``), which picks a client SDK line.
    ``filter_literals`` says how to write a category in a filter expression where no template exists.
    """

    version: str
    engine: str
    api_level: str | None = None
    hybrid_search: bool | None = None
    bm25: bool | None = None
    bm25_scores: Literal["non-negative", "non-positive"] | None = None
    filter_templates: bool | None = None
    nullable_fields: bool | None = None
    index_types: tuple[str, ...] = ()
    filter_literals: str | None = None
    # Whether a filter literal can match a category holding a newline (False: no literal can, here).
    newline_categories: bool | None = None
    docs: str = "docs/engines.md"


class MilvusEndpoint(Wire):
    """Where the implementation finds Milvus. It must create collections only under the prefix."""

    uri: str
    token: SecretStr | None = None
    db_name: str | None = None
    collection_prefix: str
    engine: EngineFacts | None = None  # the kit's facts about the engine, where it knows them


class CorpusChunk(Wire):
    doc_id: str
    chunk_index: int
    text: str
    vector: tuple[float, ...]
    category: str | None = None
    source_type: str | None = None


class Corpus(Wire):
    name: str
    dim: int
    chunks: tuple[CorpusChunk, ...]


class SearchRequest(Wire):
    query_text: str
    query_vector: tuple[float, ...]
    mode: Mode
    k: int
    category: str | None = None
    rrf_k: int = 60


class Hit(Reply):
    doc_id: str
    chunk_index: WholeNumber
    original_rank: WholeNumber
    score: Real | None = None
    score_label: str
    raw_score: Real | None = None
    dense_distance: Real | None = None


class SearchReply(Reply):
    hits: tuple[Hit, ...]


class LookupRequest(Wire):
    query_text: str
    query_vector: tuple[float, ...]
    mode: Mode = "hybrid"
    category: str | None = None
    retrieve_k: int = 20
    rrf_k: int = 60
    hints: Hints = Field(default_factory=Hints)
    config: PostProcessConfig = Field(default_factory=PostProcessConfig)

    def search(self, category: str | None) -> SearchRequest:
        """The search one attempt of this lookup makes: filtered to ``category``, or unfiltered (None)."""
        return SearchRequest(
            query_text=self.query_text,
            query_vector=self.query_vector,
            mode=self.mode,
            k=self.retrieve_k,
            category=category,
            rrf_k=self.rrf_k,
        )


class LookupReply(PostProcessReply):
    """The post-process reply of the result that was used, and which path produced it."""

    path: Literal["unfiltered", "filtered", "unfiltered_retry"]


@runtime_checkable
class Implementation(Protocol):
    """What the kit asks of an implementation. Only declared capabilities are ever called."""

    def describe(self) -> ImplementationInfo:
        """Name, version and declared capabilities. Called once, before anything else."""
        ...

    def canonicalize_label(self, label: str) -> str:
        """``labels``: the canonical label (``dense`` or ``hybrid``) for a label or legacy alias."""
        ...

    def quality_score(self, request: QualityRequest) -> float:
        """``quality``: the single normalizer."""
        ...

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        """``post_process``: accepted blocks in order, dropped candidates and the gates."""
        ...

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        """``search``/``lookup``: ingest the corpus with the implementation's own schema and client."""
        ...

    def search(self, request: SearchRequest) -> SearchReply:
        """``search``: hits in engine order, labelled, against the prepared corpus."""
        ...

    def lookup(self, request: LookupRequest) -> LookupReply:
        """``lookup``: search, post-process and the category retry, end to end."""
        ...

    def close(self) -> None:
        """Release clients and drop what ``prepare`` created."""
        ...


REPLY_TYPES: Mapping[str, Any] = MappingProxyType(
    {
        "describe": ImplementationInfo,
        "canonicalize_label": str,
        "quality_score": Real,
        "post_process": PostProcessReply,
        "prepare": None,
        "search": SearchReply,
        "lookup": LookupReply,
    }
)
"""Each question of the Protocol and the type of its answer (None: nothing is answered), in the order the
stdio protocol lists them. ``ask`` checks a reply against it, the stdio messages derive from it."""
