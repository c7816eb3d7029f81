"""The judge: Gherkin features of the ``rag-retrieval-quality-score`` spec run against any implementation."""

from .adapters._loading import load_adapter
from .boundary._decline import NotApplicable
from .boundary._errors import (
    AdapterCallError,
    AdapterLoadError,
    ConformanceError,
    EngineError,
    InvalidReplyError,
)
from .boundary._implementation_base import ImplementationBase
from .boundary._protocol import (
    BASE_CAPABILITIES,
    PURE_CAPABILITIES,
    Block,
    Capability,
    Corpus,
    CorpusChunk,
    Dropped,
    Hints,
    Hit,
    Implementation,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    MilvusEndpoint,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
    WireCandidate,
)
from .commands._runner import RunOutcome, run_conformance
from .reporting import Report

__all__ = [
    "BASE_CAPABILITIES",
    "PURE_CAPABILITIES",
    "AdapterCallError",
    "AdapterLoadError",
    "Block",
    "Capability",
    "ConformanceError",
    "Corpus",
    "CorpusChunk",
    "Dropped",
    "EngineError",
    "Hints",
    "Hit",
    "Implementation",
    "ImplementationBase",
    "ImplementationInfo",
    "InvalidReplyError",
    "LookupReply",
    "LookupRequest",
    "MilvusEndpoint",
    "NotApplicable",
    "PostProcessConfig",
    "PostProcessReply",
    "PostProcessRequest",
    "QualityRequest",
    "Report",
    "RunOutcome",
    "SearchReply",
    "SearchRequest",
    "WireCandidate",
    "load_adapter",
    "run_conformance",
]
