"""The other engines this machine can run (Milvus Lite 2.5.1, Milvus 2.3.5), for tests that need them.

Each is installed into the kit's engine cache on first use (from PyPI, once per machine) and started
once per test process as a loopback server; the servers stop when the process exits. Where one
cannot be installed or started, the test is skipped with the reason.
"""

from __future__ import annotations

import atexit
import functools
import time
from typing import Any

import pytest

from conformance.engines import EngineUnavailableError
from conformance.engines._local import LOCAL_ENGINES, LocalServer, ensure_venv

__all__ = ["client_to", "local_engine_uri"]


@functools.cache
def _start(name: str) -> tuple[str | None, str]:
    """(uri, version) of a running server, or (None, why it is not running)."""
    spec = LOCAL_ENGINES[name]
    try:
        server = LocalServer(spec, ensure_venv(spec))
    except EngineUnavailableError as exc:
        return None, str(exc)
    atexit.register(server.stop)
    try:
        return server.uri, server.wait_ready()
    except EngineUnavailableError as exc:
        return None, str(exc)


def local_engine_uri(name: str) -> str:
    """The URI of local engine ``name`` (a key of ``LOCAL_ENGINES``), or skip saying why not."""
    uri, version_or_reason = _start(name)
    if uri is None:
        pytest.skip(f"engine {name} is not available here: {version_or_reason}")
    return uri


def client_to(uri: str, attempts: int = 3) -> Any:
    """A pymilvus client to ``uri``, tried again when the transport ends the connection early: Lite
    2.5.1's server sends GOAWAY ("too many pings") to a channel pymilvus shares and keeps alive, as the
    kit's own connect expects (conformance/engines/_uri.py)."""
    from pymilvus import MilvusClient
    from pymilvus.exceptions import MilvusException

    for attempt in range(attempts):
        try:
            return MilvusClient(uri)
        except MilvusException as exc:
            if "Fail connecting" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(1.0)
    raise AssertionError("unreachable")
