"""Reference implementation of the ``rag-retrieval-quality-score`` spec.

Pure logic (labels, the single normalizer, the rank-preserving post-processor), a Milvus store with one
engine search per query, ``lookup_knowledge`` with the category low-quality retry, and an offline
embedder. pymilvus is imported only when the store talks to Milvus.
"""

from ._embed import Embedder, HashingEmbedder
from ._engine import EngineFeatures
from ._errors import (
    EmptyIngestError,
    EngineFeatureError,
    IngestError,
    InvalidCandidateError,
    InvalidEvidenceIdError,
    InvalidLimitError,
    InvalidMaxL2DistanceError,
    InvalidRankError,
    InvalidScoreError,
    InvalidSettingError,
    InvalidThresholdError,
    MilvusUnavailableError,
    RetrievalQualityError,
    StoreError,
    UnknownScoreLabelError,
    VectorDimensionError,
)
from ._ingest import Chunk, read_jsonl, sample_path
from ._labels import CANONICAL_LABELS, LEGACY_ALIASES, canonicalize_label
from ._lookup import LookupResult, lookup_knowledge
from ._models import (
    Candidate,
    CompletenessHint,
    DroppedCandidate,
    EvidenceBlock,
    L0Hints,
    PostProcessResult,
    RelevanceLevel,
)
from ._postprocess import post_process
from ._quality import rank_to_quality, to_quality_score
from ._settings import Settings
from ._store import InvalidQueryError, MilvusKnowledgeStore

__all__ = [
    "CANONICAL_LABELS",
    "LEGACY_ALIASES",
    "Candidate",
    "Chunk",
    "CompletenessHint",
    "DroppedCandidate",
    "Embedder",
    "EmptyIngestError",
    "EngineFeatureError",
    "EngineFeatures",
    "EvidenceBlock",
    "HashingEmbedder",
    "IngestError",
    "InvalidCandidateError",
    "InvalidEvidenceIdError",
    "InvalidLimitError",
    "InvalidMaxL2DistanceError",
    "InvalidQueryError",
    "InvalidRankError",
    "InvalidScoreError",
    "InvalidSettingError",
    "InvalidThresholdError",
    "L0Hints",
    "LookupResult",
    "MilvusKnowledgeStore",
    "MilvusUnavailableError",
    "PostProcessResult",
    "RelevanceLevel",
    "RetrievalQualityError",
    "Settings",
    "StoreError",
    "UnknownScoreLabelError",
    "VectorDimensionError",
    "canonicalize_label",
    "lookup_knowledge",
    "post_process",
    "rank_to_quality",
    "read_jsonl",
    "sample_path",
    "to_quality_score",
]
