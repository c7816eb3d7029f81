"""The judge: Gherkin features of the ``rag-retrieval-quality-score`` spec run against any implementation."""

from ._base import ImplementationBase
from ._errors import (
    AdapterCallError,
    AdapterLoadError,
    ConformanceError,
    EngineError,
    InvalidReplyError,
)
from ._loading import load_adapter
from ._protocol import (
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
from ._runner import RunOutcome, run_conformance
from ._skip import NotApplicable
from .reporting import Report

__all__ = [
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
