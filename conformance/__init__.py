"""The judge: Gherkin features of the ``rag-retrieval-quality-score`` spec run against any implementation.

What an adapter author needs, from the layers below (``docs/architecture.md`` maps them all):

- the Protocol and its plain values (``Implementation``, ``ImplementationInfo``, ``Capability``, the
  requests and replies), ``ImplementationBase`` to start from, ``NotApplicable`` to decline a question:
  :mod:`conformance.boundary`;
- the kit's errors (``ConformanceError`` and its kinds): :mod:`conformance.boundary`;
- ``load_adapter``, which turns an adapter address into an implementation: :mod:`conformance.adapters`;
- ``run_conformance`` and its ``RunOutcome`` (``rag-conformance run`` as a call), and the ``Report`` it
  writes: :mod:`conformance.commands`, :mod:`conformance.reporting`.

The layers, bottom to top: ``boundary``, ``spec``, ``engines`` and ``stdio``, ``adapters``, ``corpus``,
``judging``, ``reporting``, ``site``, ``scenarios``, the plugin, ``commands``; ``_version`` is the kit's
version.

The other public modules: :mod:`conformance.stdio` (any language over JSON lines),
:mod:`conformance.engines`, :mod:`conformance.reporting`, :mod:`conformance.plugin` (the pytest plugin)
and :mod:`conformance.adapters.reference`.
"""

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
