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
``judging``, ``options`` (the run's options as one value, ``RunOptions``), ``reporting``, ``site``,
``scenarios``, the plugin, ``upgrade`` (the upgrade check, on
the evaluation package), ``commands``; ``_version`` is the kit's version.

The other public modules: :mod:`conformance.stdio` (any language over JSON lines),
:mod:`conformance.engines`, :mod:`conformance.reporting`, :mod:`conformance.options`,
:mod:`conformance.plugin` (the pytest plugin) and :mod:`conformance.adapters.reference`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .adapters._loading import load_adapter
    from .boundary._decline import NotApplicable
    from .commands._runner import RunOutcome, run_conformance
    from .reporting import Report

# An adapter author's ``from conformance import ImplementationBase`` loads the boundary and nothing above
# it: the names below come from the upper floors (the runner imports pytest) or are pytest's own kind
# (declining is a pytest skip), so they load on first use.
_LAZY = {
    "NotApplicable": ".boundary._decline",
    "load_adapter": ".adapters._loading",
    "RunOutcome": ".commands._runner",
    "run_conformance": ".commands._runner",
    "Report": ".reporting",
}

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


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
