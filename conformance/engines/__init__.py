"""Everything of the kit that starts, reaches, proxies, records or describes a Milvus engine.

- starting or reaching one: :func:`start_engine` (``_start``) over the ``lite`` (``_lite``,
  ``_lite_child``), local (``_local``), ``uri`` (``_uri``) and ``container`` (``_container``,
  testcontainers) backends, named in the kit's one engine vocabulary (an :class:`EngineAddress`,
  ``_address``, with its help text), each an :class:`Engine` with a per-run collection prefix
  (``_engine``);
- the kit's containers: their labels, and those a killed run left behind (``_container_sweep``); a
  real Milvus server image built here, from ``images/`` (``_image``, ``rag-conformance build-image``);
- the other engines this machine can run, from cached venvs (``_local``, ``_local_child``), each line
  (``lite-2.4.12`` ... ``milvus-2.3.5``) one row of one table (``_lines``: how it installs, runs and
  keeps its data); running the whole suite on each of them is a command
  (:mod:`conformance.commands._engines`);
- the collections killed runs left behind, found by the kit's own prefix pattern only (``_sweep``),
  and the leases that mark a live run's prefix so that ``clean`` leaves it alone (``_lease``);
- the fixed waits (connecting, a local engine's startup), stretched with the machine's load (``_load``);
- the loopback ports the kit's servers bind, and whether the one answering on a port is the kit's own
  server (``_ports``);
- the deadline on every engine call the kit makes, and giving up on an engine that stopped answering
  (``_deadline``; docs/exit-codes.md);
- the engine option's name in the words of the tool printing a message, ``--milvus`` or ``--rqs-milvus``
  (``_option``), and how to start a Docker daemon the package did not;
- the recording gRPC proxy between an implementation and its engine (``_proxy``; its fixtures are the
  scenarios', in :mod:`conformance.scenarios._fixtures`);
- what each engine is known to do differently, as data (``expectations/*.toml``, read by
  ``_expectations``; a scenario they name is a strict expected failure);
- what each engine supports and lacks, told to implementations in ``prepare`` (``_facts``,
  docs/engines.md).

Nothing here imports the reference, and importing this package starts nothing and loads no pymilvus.
"""

from ..boundary._errors import EngineError
from ._address import DEFAULT_MILVUS_IMAGE, EngineAddress, engine_label, parse_engine_address
from ._engine import DockerUnavailableError, Engine, EngineUnavailableError
from ._expectations import Expectation, ExpectationError, load_expectations
from ._proxy import RecordedCall, RecordingProxy
from ._start import start_engine

__all__ = [
    "DEFAULT_MILVUS_IMAGE",
    "DockerUnavailableError",
    "Engine",
    "EngineAddress",
    "EngineError",
    "EngineUnavailableError",
    "Expectation",
    "ExpectationError",
    "RecordedCall",
    "RecordingProxy",
    "engine_label",
    "load_expectations",
    "parse_engine_address",
    "start_engine",
]
