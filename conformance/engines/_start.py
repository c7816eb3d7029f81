"""``start_engine``: one entry point over the backends (lite, the local engines, uri, container)."""

from __future__ import annotations

import os

from ..boundary._errors import EngineError
from ._address import EngineAddress, parse_engine_address
from ._engine import Engine, make_prefix

__all__ = ["DEFAULT_STARTUP", "start_engine"]

DEFAULT_STARTUP = 30.0
"""Seconds a lite server or a server by URI may take to answer, unless the caller says otherwise."""


def start_engine(
    address: str | EngineAddress = "lite",
    *,
    run_id: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    startup_timeout: float | None = None,
    port: int | None = None,
) -> Engine:
    """Start or reach a Milvus engine and return it with a fresh per-run collection prefix.

    ``address`` is any name of :data:`~conformance.engines._address.ENGINE_HELP`: ``lite``,
    ``lite:<data dir>``, ``lite-2.5.1``, ``milvus-2.3.5``, ``uri`` (``MILVUS_URI``/``MILVUS_TOKEN``/
    ``MILVUS_DB``), ``uri:<uri>``, ``container`` or ``container:<image>:<tag>``. ``data_dir`` applies to
    ``lite`` (the same as ``lite:<data dir>``) and to the local lines (``lite-2.4.12`` ... ``milvus-2.3.5``,
    which keep their data there as :data:`~conformance.engines._lines.DATA` says); without one the
    server uses a temporary dir removed on close. ``port`` (lite and the local lines) fixes the
    loopback port the server listens on: an in-place upgrade starts the new engine where the old was.
    ``run_id`` (letters and digits) fixes the prefix ``rqs_<run_id>_``; by default it is random.
    ``startup_timeout`` (seconds) bounds the start; by default each backend's own budget (30 s for
    lite and uri, the engine's for a local one, 120 s for a container).
    """
    backend = parse_engine_address(address)
    if startup_timeout is not None and startup_timeout <= 0:
        raise EngineError(f"startup_timeout must be positive, got {startup_timeout!r}")
    prefix = make_prefix(run_id)
    if backend.kind == "lite":
        if data_dir is not None and backend.target is not None and os.fspath(data_dir) != backend.target:
            raise EngineError(
                f"two data dirs given ({backend.target!r} in the address, {os.fspath(data_dir)!r} as "
                "data_dir): pass only one"
            )
        from ._lite import start_lite

        target = backend.target if backend.target is not None else data_dir
        timeout = startup_timeout or DEFAULT_STARTUP
        return start_lite(data_dir=target, prefix=prefix, startup_timeout=timeout, port=port)
    if backend.kind == "local":
        from ._local import start_local_engine

        return start_local_engine(
            str(backend.target), prefix=prefix, startup_timeout=startup_timeout, data_dir=data_dir, port=port
        )
    if data_dir is not None or port is not None:
        raise EngineError(
            f"data_dir and port apply to lite and the local engine lines only, not to {backend}"
        )
    if backend.kind == "uri":
        from ._uri import start_uri

        return start_uri(
            uri=backend.target, prefix=prefix, startup_timeout=startup_timeout or DEFAULT_STARTUP
        )
    from ._container import CONTAINER_STARTUP, start_container

    return start_container(
        image=backend.target, prefix=prefix, startup_timeout=startup_timeout or CONTAINER_STARTUP
    )
