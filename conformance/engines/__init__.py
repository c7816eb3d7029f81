"""Everything of the kit that starts, reaches, proxies, records or describes a Milvus engine.

- starting or reaching one: :func:`start_engine` over the ``lite`` (``_lite``, ``_lite_child``), ``uri``
  and ``container`` backends, each an :class:`Engine` with a per-run collection prefix (``_base``);
- the other engines this machine can run, from cached venvs (``_local``, ``_local_child``), and
  ``rag-conformance engines``, the whole suite on each of them (``_matrix``, imported by the CLI only:
  it is also run as ``python -m conformance.engines._matrix``);
- the recording gRPC proxy between an implementation and its engine, and its fixtures (``_proxy``,
  ``_recording_fixture``);
- what each engine is known to do differently, as data (``expectations/*.toml``, ``_expectations``).

Nothing here imports the reference, and importing this package starts nothing and loads no pymilvus.
"""

from .._errors import EngineError
from ._base import DockerUnavailableError, Engine, EngineUnavailableError
from ._expectations import Expectation, ExpectationError, load_expectations
from ._proxy import RecordedCall, RecordingProxy
from ._spec import DEFAULT_MILVUS_IMAGE, BackendSpec, parse_backend
from ._start import start_engine

__all__ = [
    "DEFAULT_MILVUS_IMAGE",
    "BackendSpec",
    "DockerUnavailableError",
    "Engine",
    "EngineError",
    "EngineUnavailableError",
    "Expectation",
    "ExpectationError",
    "RecordedCall",
    "RecordingProxy",
    "load_expectations",
    "parse_backend",
    "start_engine",
]
