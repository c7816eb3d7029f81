"""The ``lite`` backend: a ``milvus-lite server`` subprocess on 127.0.0.1 and a free port.

A TCP server rather than the in-process ``.db`` file, because one endpoint form must serve in-process
adapters, adapters in other languages and a recording gRPC proxy alike.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from ..boundary._protocol import MilvusEndpoint
from ._engine import Engine, EngineUnavailableError, PortTakenError, open_client
from ._option import engine_option
from ._ports import HOST, START_ATTEMPTS, free_port, port_open, served_by

__all__ = ["start_lite"]

_CHILD = Path(__file__).with_name("_lite_child.py")
_STOP_GRACE = 6.0  # the server drains requests for up to 5 s when told to stop
_LOG_TAIL_LINES = 20


class _LiteProcess:
    """One server process, its log file and its working dir; :meth:`stop` undoes all of it."""

    def __init__(self, *, data_dir: Path, work_dir: Path, port: int) -> None:
        self.port = port
        self.work_dir = work_dir
        self.log_path = work_dir / f"server-{port}.log"
        self._log: IO[bytes] = self.log_path.open("wb")
        command = [sys.executable, "-P", str(_CHILD), "--data-dir", str(data_dir), "--host", HOST]
        command += ["--port", str(port), "--remove-on-orphan", str(work_dir)]
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,  # the child's parent-death watchdog waits for EOF on it
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # Own session: Ctrl-C in a terminal reaches only the kit, which then cleans up and stops
            # the server itself instead of the server dying before the cleanup.
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def log_tail(self) -> str:
        """The last lines of the server log, for error messages."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no server log)"
        return "\n".join(lines[-_LOG_TAIL_LINES:]) or "(server log is empty)"

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL to its group), close the pipe, remove the work dir."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
                os.killpg(self.proc.pid, signal.SIGCONT)  # a frozen (stopped) server handles it too
            try:
                self.proc.wait(_STOP_GRACE)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        # The group may hold stragglers even after the leader exited; never leave them behind.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self._log.close()
        shutil.rmtree(self.work_dir, ignore_errors=True)


def start_lite(
    *, data_dir: str | os.PathLike[str] | None, prefix: str, startup_timeout: float, port: int | None = None
) -> Engine:
    """Start a milvus-lite server and return an :class:`Engine` connected to it (on ``port``, or on a
    free port, tried again if another process takes it first)."""
    if importlib.util.find_spec("milvus_lite") is None:
        raise EngineUnavailableError(
            "the lite backend needs the milvus-lite package, which is not installed in "
            f"{sys.prefix}: run `pip install milvus-lite`, or use {engine_option()} uri:<uri>"
        )
    started = time.monotonic()
    deadline = started + startup_timeout
    owned = data_dir is None
    last_error: EngineUnavailableError | None = None
    for _ in range(START_ATTEMPTS):
        work_dir = Path(tempfile.mkdtemp(prefix="rqs-lite-"))  # holds the log, and the data if owned
        data = work_dir / "data" if owned else Path(data_dir).expanduser().resolve()  # type: ignore[arg-type]
        server = _LiteProcess(data_dir=data, work_dir=work_dir, port=port or free_port())
        try:
            return _wait_ready(server, prefix=prefix, started=started, deadline=deadline, owned=owned)
        except PortTakenError as exc:
            last_error = exc
            server.stop()
            if port is not None:
                break  # the port was asked for: another one would not do
        except BaseException:
            server.stop()  # also on KeyboardInterrupt: no half-started server survives
            raise
    assert last_error is not None
    raise last_error


def _wait_ready(server: _LiteProcess, *, prefix: str, started: float, deadline: float, owned: bool) -> Engine:
    endpoint = MilvusEndpoint(uri=f"http://{HOST}:{server.port}", collection_prefix=prefix)
    where = f"milvus-lite server on {endpoint.uri} (data dir {'temporary' if owned else 'given'})"
    while True:
        code = server.proc.poll()
        if code is not None:
            tail = server.log_tail()
            if "bind" in tail.lower():
                raise PortTakenError(f"port {server.port} was taken before the server could bind it")
            raise EngineUnavailableError(
                f"{where} exited with code {code} during startup; server log tail:\n{tail}\n"
                "if the data dir is in use by another server, stop it or pick another dir"
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EngineUnavailableError(
                f"{where} did not accept connections within the startup timeout; "
                f"server log tail:\n{server.log_tail()}\nraise startup_timeout on a slow machine"
            )
        if port_open(server.port):
            client = open_client(endpoint, timeout=max(1.0, min(remaining, 5.0)))
            version = str(client.get_server_version())
            if server.proc.poll() is not None:  # we reached whoever took the port, not our server
                client.close()
                continue
            if served_by(server.proc.pid, server.port) is False:
                # Another process listens there, and ours (still starting) will fail to bind: never
                # hand the run an engine the kit did not start.
                client.close()
                raise PortTakenError(f"port {server.port} was taken before the server could bind it")
            return Engine(
                backend="lite",
                endpoint=endpoint,
                version=version,
                client=client,
                stop=server.stop,
                disposable=owned,
                pid=server.proc.pid,
                startup_seconds=time.monotonic() - started,
                log_tail=server.log_tail,
            )
        time.sleep(0.05)
