"""``start_engine``: one entry point over the three backends."""

from __future__ import annotations

import os

from ..boundary._errors import EngineError
from ._address import EngineAddress, parse_engine_address
from ._engine import Engine, make_prefix

__all__ = ["start_engine"]


def start_engine(
    address: str | EngineAddress = "lite",
    *,
    run_id: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    startup_timeout: float = 30.0,
) -> Engine:
    """Start or reach a Milvus engine and return it with a fresh per-run collection prefix.

    ``address`` is ``lite``, ``lite:<data dir>``, ``uri`` (``MILVUS_URI``/``MILVUS_TOKEN``/``MILVUS_DB``),
    ``uri:<uri>``, ``container`` or ``container:<image>:<tag>``. ``data_dir`` applies to ``lite`` only
    (the same as ``lite:<data dir>``); without one the server uses a temporary dir removed on close.
    ``run_id`` (letters and digits) fixes the prefix ``rqs_<run_id>_``; by default it is random.
    """
    backend = parse_engine_address(address)
    if startup_timeout <= 0:
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
        return start_lite(data_dir=target, prefix=prefix, startup_timeout=startup_timeout)
    if data_dir is not None:
        raise EngineError(f"data_dir applies to the lite backend only, not to {backend.kind!r}")
    if backend.kind == "uri":
        from ._uri import start_uri

        return start_uri(uri=backend.target, prefix=prefix, startup_timeout=startup_timeout)
    from ._container import start_container

    return start_container(image=backend.target, prefix=prefix, startup_timeout=startup_timeout)
