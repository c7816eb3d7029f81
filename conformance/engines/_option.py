"""The name of the engine option in the words of the tool that prints a message.

An engine's error says what to do, and that names the option that chooses an engine: ``--milvus`` to a
user of ``rag-conformance``, ``--rqs-milvus`` to a user of pytest. The engines are started from both,
in one process (``rag-conformance run`` runs pytest inside itself), so the command line says once, at
its start, that its messages are a command line's (:func:`speaking_as_cli`, for as long as the
command runs); pytest's is the default.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["DOCKER_DAEMON_HINT", "engine_option", "speak_as_cli", "speaking_as_cli"]

_CLI, _PYTEST = "--milvus", "--rqs-milvus"
_current = [_PYTEST]

DOCKER_DAEMON_HINT = (
    "if Docker is installed but no daemon runs (Debian's docker.io in a container, or where "
    "policy-rc.d keeps services from starting, installs the daemon without starting it), start one: "
    "`sudo dockerd > /tmp/dockerd.log 2>&1 &` (docs/engines.md, 'Starting a Docker daemon')"
)


def engine_option() -> str:
    """``--milvus`` when the command line is printing, ``--rqs-milvus`` under pytest."""
    return _current[0]


def speak_as_cli() -> None:
    """Name the command line's options in the engines' messages from now on in this process."""
    _current[0] = _CLI


@contextmanager
def speaking_as_cli() -> Iterator[None]:
    """The command line's option names inside the block; the earlier ones after it (a test that runs the
    command line in its own process leaves pytest's names to the tests after it)."""
    before = _current[0]
    _current[0] = _CLI
    try:
        yield
    finally:
        _current[0] = before
