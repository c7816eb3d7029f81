"""The adapter boundary: plain pydantic values and one small Protocol.

These same models are the wire format of the out-of-process protocol. No pymilvus type crosses the
boundary. JSON field names are the spec's camelCase names; Python attributes are snake_case.

This module is deliberately independent of :mod:`reference`: the judge must not share the judged
implementation's types, so a bug in one cannot hide in the other.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic.alias_generators import to_camel

__all__ = [
    "Block",
    "Capability",
    "Corpus",
    "CorpusChunk",
    "Dropped",
    "Hints",
    "Hit",
    "Implementation",
    "ImplementationInfo",
    "LookupReply",
    "LookupRequest",
    "MilvusEndpoint",
    "PostProcessConfig",
    "PostProcessReply",
    "PostProcessRequest",
    "QualityRequest",
    "SearchReply",
    "SearchRequest",
    "WireCandidate",
]


class Wire(BaseModel):
    """Base of every boundary value: camelCase JSON, frozen, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,  # the wire is camelCase whoever dumps it
        frozen=True,
        extra="forbid",
    )


class Capability(StrEnum):
    """What an implementation can be asked. Scenarios needing an undeclared one are NOT APPLICABLE."""

    LABELS = "labels"  # canonicalize a scoreLabel
    QUALITY = "quality"  # the single normalizer
    POST_PROCESS = "post_process"  # candidates -> ordered evidence blocks and gates
    SEARCH = "search"  # ingest the kit's corpus into a Milvus the kit provides, then search it
    LOOKUP = "lookup"  # search + post-process + the category low-quality retry, end to end


class ImplementationInfo(Wire):
    name: str
    version: str
    language: str = "python"
    homepage: str | None = None
    capabilities: frozenset[Capability]


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


class Block(Wire):
    evidence_key: str
    doc_id: str
    chunk_index: int
    original_rank: int
    quality_score: float
    score_label: str
    hit_reasons: tuple[str, ...] = ()


class Dropped(Wire):
    evidence_key: str
    original_rank: int
    reason: str


class PostProcessReply(Wire):
    blocks: tuple[Block, ...]
    dropped: tuple[Dropped, ...] = ()
    relevance_level: str
    top_quality_score: float | None = None
    is_low_quality: bool


# -- Milvus-backed ---------------------------------------------------------------------------------


class MilvusEndpoint(Wire):
    """Where the implementation finds Milvus. It must create collections only under the prefix."""

    uri: str
    token: SecretStr | None = None
    db_name: str | None = None
    collection_prefix: str


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
    mode: Literal["dense", "hybrid"]
    k: int
    category: str | None = None
    rrf_k: int = 60


class Hit(Wire):
    doc_id: str
    chunk_index: int
    original_rank: int
    score: float | None = None
    score_label: str
    raw_score: float | None = None
    dense_distance: float | None = None


class SearchReply(Wire):
    hits: tuple[Hit, ...]


class LookupRequest(Wire):
    query_text: str
    query_vector: tuple[float, ...]
    mode: Literal["dense", "hybrid"] = "hybrid"
    category: str | None = None
    retrieve_k: int = 20
    rrf_k: int = 60
    hints: Hints = Field(default_factory=Hints)
    config: PostProcessConfig = Field(default_factory=PostProcessConfig)


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
