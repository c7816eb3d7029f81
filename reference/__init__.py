"""Reference implementation of the ``rag-retrieval-quality-score`` spec.

Pure logic (labels, the single normalizer, the rank-preserving post-processor) plus, in later modules,
a Milvus store and ``lookup_knowledge``.
"""

from ._errors import (
    EmptyIngestError,
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
from ._labels import CANONICAL_LABELS, LEGACY_ALIASES, canonicalize_label
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

__all__ = [
    "CANONICAL_LABELS",
    "LEGACY_ALIASES",
    "Candidate",
    "CompletenessHint",
    "DroppedCandidate",
    "EmptyIngestError",
    "EvidenceBlock",
    "IngestError",
    "InvalidCandidateError",
    "InvalidEvidenceIdError",
    "InvalidLimitError",
    "InvalidMaxL2DistanceError",
    "InvalidRankError",
    "InvalidScoreError",
    "InvalidSettingError",
    "InvalidThresholdError",
    "L0Hints",
    "MilvusUnavailableError",
    "PostProcessResult",
    "RelevanceLevel",
    "RetrievalQualityError",
    "Settings",
    "StoreError",
    "UnknownScoreLabelError",
    "VectorDimensionError",
    "canonicalize_label",
    "post_process",
    "rank_to_quality",
    "to_quality_score",
]
