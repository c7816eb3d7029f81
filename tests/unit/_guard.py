"""The unit tier's fence: what a unit test may not start, and the patches that make it fail when it does.

A unit test starts nothing: no process (``subprocess``, ``os.fork``/``exec``/``posix_spawn``,
``multiprocessing``), no Milvus client or gRPC channel, no connection to another host or to a local
daemon's socket. Each of those raises :class:`UnitTierViolationError`, whose message names what was started
and says where the test belongs instead. Used by ``tests/unit/conftest.py``.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

__all__ = ["UnitTierViolationError", "forbid_starting_things"]

_MOVE = (
    "a unit test starts nothing (no process, no engine, no Milvus client, no network): move this test to "
    "tests/integration/<the same path> (see tests/README.md), or fake what it starts"
)


class UnitTierViolationError(AssertionError):
    """A test under tests/unit started a process, an engine client or a connection."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: {_MOVE}")
        self.what = what


def _is_local(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@contextmanager
def forbid_starting_things(on_violation: Callable[[str], None] | None = None) -> Iterator[None]:
    """Within the block, starting a process, a Milvus client, a gRPC channel or a connection raises.

    ``on_violation`` is told each violation first (the tier's classifier records them): a test that
    catches the error and goes on is still seen.
    """

    def refuse(what: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            if on_violation is not None:
                on_violation(what)
            raise UnitTierViolationError(what)

        return refused

    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def checked(real: Callable[..., Any]) -> Callable[..., Any]:
        def connect(sock: socket.socket, address: Any) -> Any:
            if sock.family == socket.AF_UNIX:
                what = f"a connection to the local socket {address!r}"
            elif sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address):
                what = f"a network connection to {address!r}"
            else:
                return real(sock, address)
            return refuse(what)()

        return connect

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "_execute_child", refuse("a subprocess (subprocess.Popen)"))
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", *_EXECS):
            if hasattr(os, name):
                patch.setattr(os, name, refuse(f"a process (os.{name})"))
        import _posixsubprocess  # multiprocessing's spawn and forkserver start processes through it

        patch.setattr(_posixsubprocess, "fork_exec", refuse("a process (multiprocessing)"))
        patch.setattr(socket.socket, "connect", checked(real_connect))
        patch.setattr(socket.socket, "connect_ex", checked(real_connect_ex))
        _forbid_clients(patch, refuse)
        yield


_EXECS = ("execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe")


def _forbid_clients(patch: pytest.MonkeyPatch, refuse: Callable[[str], Callable[..., Any]]) -> None:
    import grpc
    import grpc.aio
    import pymilvus
    from pymilvus.orm.connections import Connections

    patch.setattr(pymilvus.MilvusClient, "__init__", refuse("a Milvus client (MilvusClient)"))
    patch.setattr(pymilvus.AsyncMilvusClient, "__init__", refuse("a Milvus client (AsyncMilvusClient)"))
    patch.setattr(Connections, "connect", refuse("a Milvus connection (connections.connect)"))
    for module in (grpc, grpc.aio):
        for name in ("insecure_channel", "secure_channel"):
            patch.setattr(module, name, refuse(f"a gRPC channel ({module.__name__}.{name})"))
