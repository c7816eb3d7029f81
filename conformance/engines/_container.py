"""The ``container`` backend: a pinned Milvus image through testcontainers' ``MilvusContainer``.

Docker is checked first, quickly, so a machine without it gets a clear message in about a second
instead of a long testcontainers traceback; an image that is not on the machine is pulled once, or the
message says how to build one (``rag-conformance build-image``, :mod:`conformance.engines._image`).

testcontainers' Ryuk reaper needs its own image from a registry. The kit uses it only where that image
is already on the machine (or ``TESTCONTAINERS_RYUK_DISABLED`` says otherwise) and stops its containers
itself in any case: closing the :class:`Engine` removes the container, and the engine's exit hooks
close it on a normal end, a failure, SIGINT and SIGTERM. Every container carries the kit's labels
(:mod:`conformance.engines._container_sweep`), so one left by a killed run is found and removed by
``rag-conformance clean``, and nothing else is. Each start is a container of its own, on ports Docker
picks: two runs at once never share one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

from ..boundary._protocol import MilvusEndpoint
from ..boundary._redact import redact_uri
from ._address import DEFAULT_MILVUS_IMAGE, validate_image
from ._container_sweep import owner_labels, remove_run_quietly
from ._engine import DockerUnavailableError, Engine, EngineUnavailableError, open_client
from ._option import DOCKER_DAEMON_HINT, engine_option

__all__ = ["BUILT_IMAGE", "CONTAINER_STARTUP", "docker_unavailable_reason", "start_container"]

DOCKER_PING_SECONDS = 2.0
CONTAINER_STARTUP = 120.0
"""Seconds a container may take from ``docker create`` to its first answer, unless told otherwise:
Milvus standalone needs tens of seconds to become healthy, more than a lite server's budget."""
BUILT_IMAGE = "rag-conformance/milvus:2.3.5"
"""The image ``rag-conformance build-image`` makes (named here for the messages that point to it)."""
_RYUK_ENV = "TESTCONTAINERS_RYUK_DISABLED"
_LOG_TAIL = 12


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


def _what_to_do(image: str) -> str:
    return (
        f"build a Milvus image here with `rag-conformance build-image` (it makes {BUILT_IMAGE}, no "
        f"registry needed) and pass {engine_option()} container:{BUILT_IMAGE}, `docker pull {image}` where "
        f"a registry is reachable, or use another engine ({engine_option()} lite, or uri:<uri> for a Milvus "
        "you run)"
    )


def _ensure_image(client: Any, image: str) -> None:
    """The image is on the machine, or pulled now (the client's timeout bounds each call of the pull);
    :class:`EngineUnavailableError` saying what to do."""
    import docker.errors

    try:
        client.images.get(image)
        return
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(image)
    except Exception as exc:  # no registry, no such image, no network: all mean "not here"
        # Docker's own explanation ("... no such host"), not the HTTP request that carried it
        detail = str(getattr(exc, "explanation", None) or exc).splitlines()[0] or type(exc).__name__
        raise EngineUnavailableError(
            f"the container image {image} is not on this machine and could not be pulled ({detail}); "
            f"{_what_to_do(image)}"
        ) from None


def _configure_ryuk(client: Any) -> None:
    """Ryuk only where its image is already here (no pull that fails or stalls), unless the user chose."""
    if os.environ.get(_RYUK_ENV) is not None:
        return  # testcontainers reads the user's choice itself
    from testcontainers.core.config import testcontainers_config

    try:
        client.images.get(testcontainers_config.ryuk_image)
    except Exception:
        testcontainers_config.ryuk_disabled = True  # the kit's own stop and labels cover every exit


def _log_tail(container: Any) -> str:
    with contextlib.suppress(Exception):
        raw = container.get_wrapped_container().logs(tail=_LOG_TAIL)
        return raw.decode(errors="replace").strip() or "(no output)"
    return "(no logs: the container was never created)"


def start_container(*, image: str | None, prefix: str, startup_timeout: float = CONTAINER_STARTUP) -> Engine:
    """Start ``image`` (default :data:`DEFAULT_MILVUS_IMAGE`) and return an :class:`Engine` for it.

    ``startup_timeout`` bounds the whole start, pull included; past it, or when the container exits,
    :class:`EngineUnavailableError` names the image, ends with the container's last log lines and says
    what to do. The container is removed on every path out of here but success.
    """
    image = validate_image(image or DEFAULT_MILVUS_IMAGE)
    reason = docker_unavailable_reason()
    if reason is not None:
        raise DockerUnavailableError(
            f"the container backend cannot start {image}: {reason}. Start Docker (or set DOCKER_HOST; "
            f"{DOCKER_DAEMON_HINT}), or use another backend: {engine_option()} lite for a local milvus-lite "
            f"server, or {engine_option()} uri:<uri> for a Milvus you already run"
        )
    import docker
    from testcontainers.community.milvus import MilvusContainer  # lazy: heavy, Docker-only

    started = time.monotonic()
    client = docker.from_env(timeout=max(5, round(startup_timeout)))
    container = None
    try:
        _ensure_image(client, image)
        _configure_ryuk(client)
        container = MilvusContainer(image).with_kwargs(labels=owner_labels(prefix))
        left = max(1, round(startup_timeout - (time.monotonic() - started)))
        container._wait_strategy.with_startup_timeout(left)  # testcontainers' own checks, our budget
        container.start()
        endpoint = MilvusEndpoint(uri=container.get_connection_url(), collection_prefix=prefix)
        engine_client = open_client(endpoint, timeout=min(startup_timeout, 30.0))
        version = str(engine_client.get_server_version())
    except EngineUnavailableError:
        remove_run_quietly(client, prefix)
        client.close()
        raise
    except Exception as exc:
        tail = _log_tail(container) if container is not None else "(not started)"
        _stop_quietly(container)
        remove_run_quietly(client, prefix)
        client.close()
        detail = str(exc).splitlines()[0] if str(exc) else "no detail"
        raise EngineUnavailableError(
            f"the Milvus container {image} did not become ready within {startup_timeout:g} s "
            f"({type(exc).__name__}: {detail}); free disk and memory, check that the image runs "
            f"`milvus run standalone` as testcontainers' MilvusContainer expects, or {_what_to_do(image)}. "
            f"Its last log lines:\n{tail}"
        ) from None
    except BaseException:  # an interrupt mid-start: nothing of this run may stay behind
        _stop_quietly(container)
        remove_run_quietly(client, prefix)
        client.close()
        raise
    client.close()
    return Engine(
        backend="container",
        endpoint=endpoint,
        version=version,
        client=engine_client,
        stop=lambda: _stop_or_say(container),
        disposable=True,
        startup_seconds=time.monotonic() - started,
    )


def _stop_or_say(container: Any) -> None:
    """Remove the container; where Docker no longer answers, say what is left and how to remove it."""
    try:
        container.stop()
    except Exception as exc:
        ident = getattr(getattr(container, "_container", None), "short_id", "?")
        print(
            f"rag-conformance: could not remove the Milvus container {ident} ({type(exc).__name__}); "
            "once Docker answers again, `rag-conformance clean` removes it",
            file=sys.stderr,
        )


def _stop_quietly(container: object) -> None:
    # The start failure is the error worth reporting, not the teardown's.
    if container is not None:
        with contextlib.suppress(Exception):
            container.stop()  # type: ignore[attr-defined]
