"""The engine lines the kit can install and run here: one table, read by every command.

Each line is a name (``lite-2.4.12``, ``milvus-2.3.5``) every command takes as ``--milvus``, in
``rag-conformance engines`` and in ``upgrade --from/--to``; what pip installs into its own venv in the
engine cache (once, on first use); how it runs (:data:`RUNS`); where it keeps its data (:data:`DATA`),
which says what an in-place upgrade between two lines shares; and its startup budget.

How each kind runs, by :mod:`conformance.engines._local` and the child it starts
(:mod:`conformance.engines._local_child`):

- ``lite-core``: Milvus Lite 2.x, the C++ core (segcore/knowhere): the package's server binary on a
  private port, behind a forwarder that answers ``GetVersion`` (2.x lacks it). Its data is one file,
  ``<data dir>/lite.db``, as a team's ``MilvusClient("lite.db")`` keeps it.
- ``lite-python``: Milvus Lite 3.x, a Python re-implementation: ``milvus-lite server`` of its own venv
  (the ``lite`` backend runs the kit's own). Its data is the ``lite.db`` a team's client names, under
  the same data dir, so an upgrade from 2.x finds the file where 2.x left it.
- ``server``: the PyPI package ``milvus``, the real Go server (standalone, embedded etcd). Its data is
  a directory (``milvus-server --data``); its etcd always binds port 2380: one per machine.

A new line is one row of :data:`ENGINE_LINES`. What each line supports is in
:mod:`conformance.engines._facts` (told to implementations in ``prepare``) and ``docs/engines.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DATA",
    "ENGINE_LINES",
    "LOCAL_ENGINES",
    "MATRIX_LINES",
    "RUNS",
    "LineKind",
    "LocalEngineSpec",
    "engine_lines",
    "shares_data",
]

LineKind = Literal["lite-core", "lite-python", "server"]

RUNS: dict[LineKind, str] = {
    "lite-core": "the package's C++ server binary behind a forwarder that answers GetVersion",
    "lite-python": "`milvus-lite server` of the line's own venv",
    "server": "`milvus-server`, the Go standalone server with embedded etcd",
}
"""How each kind of line runs, in one phrase."""

DATA: dict[LineKind, str] = {
    "lite-core": "a Lite file (<data dir>/lite.db)",
    "lite-python": "a Lite file (<data dir>/lite.db)",
    "server": "a server data directory (milvus-server --data)",
}
"""Where each kind keeps its data: two lines whose data is alike can be upgraded in place."""

_LITE_CORE = ("pymilvus==3.0.2", "setuptools<70")  # the 2.x import needs pkg_resources
_LITE_PYTHON = ("pymilvus==3.0.2",)


@dataclass(frozen=True)
class LocalEngineSpec:
    """An engine line installable here: name, pip requirements, startup budget, what it is, how it runs."""

    name: str
    requirements: tuple[str, ...]
    startup_seconds: float
    about: str
    fixed_ports: tuple[int, ...] = ()  # ports the engine always binds: one instance per machine
    kind: LineKind = "lite-core"

    @property
    def data(self) -> str:
        """Where this line keeps its data (:data:`DATA`)."""
        return DATA[self.kind]


def _lite(version: str, kind: LineKind, about: str) -> LocalEngineSpec:
    extra = _LITE_CORE if kind == "lite-core" else _LITE_PYTHON
    return LocalEngineSpec(f"lite-{version}", (f"milvus-lite=={version}", *extra), 60.0, about, kind=kind)


def _server(version: str, about: str) -> LocalEngineSpec:
    # The first start of a data dir unpacks the server binaries; its embedded etcd's peer port is fixed
    # (milvus-server finds free ports for everything else).
    return LocalEngineSpec(f"milvus-{version}", (f"milvus=={version}",), 240.0, about, (2380,), "server")


ENGINE_LINES: tuple[LocalEngineSpec, ...] = (
    _lite("2.4.12", "lite-core", "Milvus Lite 2.4.12, the C++ core, as a loopback gRPC server (no BM25)"),
    _lite("2.5.1", "lite-core", "Milvus Lite 2.5.1, the C++ core, as a loopback gRPC server"),
    _lite("3.0", "lite-python", "Milvus Lite 3.0, the Python engine (L2 not squared)"),
    _lite("3.1.1", "lite-python", "Milvus Lite 3.1.1, the Python engine"),
    _lite("3.2.2", "lite-python", "Milvus Lite 3.2.2, the Python engine (BM25 scores negated)"),
    _server("2.2.16", "Milvus 2.2.16 standalone, the Go server (no hybrid search, no BM25)"),
    _server("2.3.5", "Milvus 2.3.5 standalone, the Go server (no hybrid search, no BM25)"),
)
"""Every engine line of this machine, oldest first within each family."""

LOCAL_ENGINES: dict[str, LocalEngineSpec] = {line.name: line for line in ENGINE_LINES}
"""The lines by name."""

MATRIX_LINES: tuple[str, ...] = ("lite-2.5.1", "milvus-2.3.5")
"""The lines ``rag-conformance engines`` runs by default (``local``); ``all`` runs every line."""


def engine_lines() -> tuple[LocalEngineSpec, ...]:
    """Every engine line, in the table's order (for commands and pages that list them)."""
    return ENGINE_LINES


def shares_data(old: LocalEngineSpec | None, new: LocalEngineSpec | None) -> bool:
    """Whether ``new`` is started on ``old``'s data in an in-place upgrade (None: the kit's own
    Lite 3.x, which keeps a Lite file like the other Lite lines)."""
    families = {"lite-core": "lite", "lite-python": "lite", "server": "server"}
    old_family = families[old.kind] if old is not None else "lite"
    new_family = families[new.kind] if new is not None else "lite"
    return old_family == new_family
