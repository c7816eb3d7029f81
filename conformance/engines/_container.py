"""The ``container`` backend: a pinned Milvus standalone image through testcontainers.

Docker is checked first, quickly, so a machine without it gets a clear message in about a second
instead of a long testcontainers traceback. testcontainers' Ryuk reaper removes the container if the
test process dies without closing it.
"""

from __future__ import annotations

import contextlib
import os
import time

from ..boundary._protocol import MilvusEndpoint
from ..boundary._redact import redact_uri
from ._address import DEFAULT_MILVUS_IMAGE, validate_image
from ._engine import DockerUnavailableError, Engine, EngineUnavailableError, open_client

__all__ = ["docker_unavailable_reason", "start_container"]

DOCKER_PING_SECONDS = 2.0
# Milvus standalone needs tens of seconds to become healthy, more than a lite server's startup budget.
MIN_CONTAINER_STARTUP = 120.0


def docker_unavailable_reason(timeout: float = DOCKER_PING_SECONDS) -> str | None:
    """Why no Docker engine is reachable, or ``None`` if one answers a ping within ``timeout``."""
    where = redact_uri(os.environ.get("DOCKER_HOST", "")) or "the default Docker socket"
    try:
        import docker  # lazy: installed with testcontainers, only needed for this backend
    except ImportError:
        return "the docker Python package is not installed (pip install testcontainers)"
    try:
        client = docker.from_env(timeout=max(1, round(timeout)))
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:  # DockerException, connection errors, timeouts: all mean "not reachable"
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"no Docker engine is reachable at {where} ({detail})"
    return None


def start_container(*, image: str | None, prefix: str, startup_timeout: float) -> Engine:
    """Start ``image`` (default :data:`DEFAULT_MILVUS_IMAGE`) and return an :class:`Engine` for it."""
    image = validate_image(image or DEFAULT_MILVUS_IMAGE)
    reason = docker_unavailable_reason()
    if reason is not None:
        raise DockerUnavailableError(
            f"the container backend cannot start {image}: {reason}. Start Docker (or set DOCKER_HOST), "
            "or use another backend: --rqs-milvus lite for a local milvus-lite server, or "
            "--rqs-milvus uri:<uri> for a Milvus you already run"
        )
    from testcontainers.community.milvus import MilvusContainer  # lazy: heavy, Docker-only

    started = time.monotonic()
    container = MilvusContainer(image)
    strategy = getattr(container, "_wait_strategy", None)
    if strategy is not None:  # testcontainers' own readiness checks, with our time budget
        strategy.with_startup_timeout(int(max(startup_timeout, MIN_CONTAINER_STARTUP)))
    try:
        container.start()
        endpoint = MilvusEndpoint(uri=container.get_connection_url(), collection_prefix=prefix)
        client = open_client(endpoint, timeout=min(startup_timeout, 30.0))
        version = str(client.get_server_version())
    except Exception as exc:
        _stop_quietly(container)
        raise EngineUnavailableError(
            f"the Milvus container {image} did not become ready ({type(exc).__name__}: {exc}); "
            "check `docker logs` for the container, free disk and memory, or try another pinned tag"
        ) from exc
    except BaseException:
        _stop_quietly(container)
        raise
    return Engine(
        backend="container",
        endpoint=endpoint,
        version=version,
        client=client,
        stop=container.stop,
        disposable=True,
        startup_seconds=time.monotonic() - started,
    )


def _stop_quietly(container: object) -> None:
    # The start failure is the error worth reporting, not the teardown's.
    with contextlib.suppress(Exception):
        container.stop()  # type: ignore[attr-defined]
