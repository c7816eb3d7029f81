"""The other Milvus engines this machine can run, each from its own cached venv, as loopback servers.

- ``lite-2.5.1``: Milvus Lite 2.5.1, the C++ core (segcore/knowhere). Its package carries a server
  binary that serves gRPC on a TCP address; the kit runs it behind a forwarder that answers the one
  call it lacks (``GetVersion``), see :mod:`conformance.engines._local_child`.
- ``milvus-2.3.5``: the PyPI package ``milvus`` 2.3.5, the real Go server (standalone, embedded etcd),
  old: no hybrid search, no BM25.

Venvs live in ``$RQS_ENGINE_CACHE`` (default ``~/.cache/rag-conformance/engines/<name>/venv``),
outside any project, and are installed once with pip's progress shown. Each server runs in its own
process group with a temporary data dir; :meth:`LocalServer.stop` removes both.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..boundary._protocol import MilvusEndpoint
from ._engine import Engine, EngineUnavailableError, make_prefix
from ._load import stretched

__all__ = [
    "CACHE_ENV",
    "LOCAL_ENGINES",
    "LocalEngineSpec",
    "LocalServer",
    "cache_root",
    "ensure_venv",
    "start_local_engine",
]

CACHE_ENV = "RQS_ENGINE_CACHE"
HOST = "127.0.0.1"
_CHILD = Path(__file__).with_name("_local_child.py")
_LOG_TAIL = 15
# Every component of the 2.3.5 server advertises this address to the others (the default is the first
# non-loopback address). Its gRPC ports still bind every interface: 2.3.5 has no listen-address setting.
_COMPONENTS_235 = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexCoord", "indexNode", "dataCoord")
_LOOPBACK_235 = [f"--extra-config={c}.ip={HOST}" for c in (*_COMPONENTS_235, "dataNode")]


@dataclass(frozen=True)
class LocalEngineSpec:
    """An engine installable here: its cache name, pip requirements, startup budget and what it is."""

    name: str
    requirements: tuple[str, ...]
    startup_seconds: float
    about: str
    fixed_ports: tuple[int, ...] = ()  # ports the engine always binds: one instance per machine


LOCAL_ENGINES: dict[str, LocalEngineSpec] = {
    "lite-2.5.1": LocalEngineSpec(
        "lite-2.5.1",
        ("milvus-lite==2.5.1", "pymilvus==3.0.2", "setuptools<70"),  # its import needs pkg_resources
        60.0,
        "Milvus Lite 2.5.1, the C++ core, as a loopback gRPC server",
    ),
    "milvus-2.3.5": LocalEngineSpec(
        "milvus-2.3.5",
        ("milvus==2.3.5",),
        240.0,  # the first start of a data dir unpacks the server binaries
        "Milvus 2.3.5 standalone, the Go server (no hybrid search, no BM25)",
        # Its embedded etcd's peer port; milvus-server finds free ports for everything else.
        fixed_ports=(2380,),
    ),
}


def cache_root() -> Path:
    """Where engine venvs are cached: ``$RQS_ENGINE_CACHE`` or ``~/.cache/rag-conformance/engines``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache/rag-conformance/engines"


def ensure_venv(spec: LocalEngineSpec, *, output: IO[str] | None = None) -> Path:
    """The engine's venv, created and pip-installed on first use; the venv's dir is returned."""
    home = cache_root() / spec.name
    venv, marker = home / "venv", home / "installed.txt"
    wanted = "\n".join(spec.requirements) + "\n"
    home.mkdir(parents=True, exist_ok=True)
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two matrix runs at once: one installs, the other waits
        if marker.is_file() and marker.read_text() == wanted and (venv / "bin" / "python").exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)  # a half-finished install is never reused
        print(
            f"installing {spec.name} into {venv} ({' '.join(spec.requirements)})",
            file=output or sys.stderr,
            flush=True,
        )
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv / "bin/python"), "-m", "pip", "install", "--progress-bar", "on", *spec.requirements],
        ]
        for command in steps:
            code = subprocess.call(command, stdout=output, stderr=output)  # None: the terminal
            if code != 0:
                raise EngineUnavailableError(
                    f"cannot install {spec.name}: `{' '.join(command)}` exited with {code}; check the "
                    f"network and PyPI, then run again (the half-made venv at {venv} is redone)"
                )
        marker.write_text(wanted)
    return venv


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


class LocalServer:
    """One engine server process group on ``127.0.0.1:<port>``, its log and its temporary data dir."""

    def __init__(self, spec: LocalEngineSpec, venv: Path, *, direct: bool = False) -> None:
        for port in spec.fixed_ports:
            if not _bindable(port):
                raise EngineUnavailableError(
                    f"{spec.about} always binds port {port}, and something on this machine holds it "
                    "(another Milvus 2.3 server, e.g. another run of `rag-conformance engines`); "
                    "only one can run at a time: wait for it, or stop it"
                )
        self.spec = spec
        self.port = _free_port()
        self.uri = f"http://{HOST}:{self.port}"
        self.work_dir = Path(tempfile.mkdtemp(prefix=f"rqs-{spec.name}-"))
        self.log_path = self.work_dir / "server.log"
        python = str(venv / "bin/python")
        if spec.name == "lite-2.5.1":
            mode = ["lite25", "--port", str(self.port), "--data-dir", str(self.work_dir / "data")]
            mode += ["--direct"] if direct else []
        else:
            server = [str(venv / "bin/milvus-server"), "--data", str(self.work_dir / "data")]
            mode = ["exec", "--", *server, "--proxy-port", str(self.port), *_LOOPBACK_235]
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [python, "-P", str(_CHILD), *mode],
            stdin=subprocess.PIPE,  # the child's parent watchdog waits for EOF on it
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the matrix, which then stops the server itself
            cwd=str(self.work_dir),
        )
        self.version = ""
        self.direct = direct and spec.name == "lite-2.5.1"

    def wait_ready(self, timeout: float | None = None) -> str:
        """Block until the server answers ``GetVersion`` (within ``timeout`` seconds, by default the
        engine's own startup budget); return that version.

        A ``direct`` Lite 2.5.1 has no ``GetVersion``: it is ready when it lists its collections, and
        its version is the installed package's, ``milvus_lite-2.5.1``.
        """
        from pymilvus import MilvusClient  # lazy: importing the kit stays cheap

        budget = stretched(self.spec.startup_seconds) if timeout is None else timeout
        deadline = time.monotonic() + budget
        last = "nothing listening yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EngineUnavailableError(
                    f"{self.spec.about} exited with code {self.proc.returncode} while starting; log tail:\n"
                    f"{self.log_tail()}"
                )
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    pass
                client = MilvusClient(uri=self.uri, timeout=5.0)
                try:
                    if self.direct:
                        client.list_collections(timeout=5.0)
                        self.version = "milvus_lite-" + self.spec.name.removeprefix("lite-")
                    else:
                        self.version = str(client.get_server_version(timeout=5.0))
                finally:
                    client.close()
                return self.version
            except Exception as exc:  # refused, or the server is still starting its components
                last = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                time.sleep(0.5)
        raise EngineUnavailableError(
            f"{self.spec.about} did not answer on {self.uri} within {budget:.0f} s "
            f"(last: {last}); log tail:\n{self.log_tail()}"
        )

    def log_tail(self) -> str:
        """The last lines of the server log."""
        with contextlib.suppress(OSError):
            lines = self.log_path.read_text(errors="replace").splitlines()
            return "\n".join(lines[-_LOG_TAIL:]) or "(empty log)"
        return "(no log)"

    def stop(self) -> None:
        """SIGTERM the group, SIGKILL what is left after a grace period, remove the data dir."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(25.0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers of the group, never left behind
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5.0)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self._log.close()
        shutil.rmtree(self.work_dir, ignore_errors=True)


def start_local_engine(
    name: str,
    *,
    prefix: str | None = None,
    direct: bool = False,
    output: IO[str] | None = None,
    startup_timeout: float | None = None,
) -> Engine:
    """Install (once) and start local engine ``name`` as an :class:`Engine` the kit can use.

    ``direct`` (Lite 2.5.1 only) connects to the binary itself, without the forwarder that answers
    ``GetVersion``: for measurements, where the forwarder's hop would count as the engine's time.
    Closing the engine stops the server and removes its data. ``startup_timeout`` bounds the wait for
    its first answer (default: the engine's own budget); the install before it is not bounded.
    """
    spec = LOCAL_ENGINES.get(name)
    if spec is None:
        raise EngineUnavailableError(f"no local engine {name!r}; known: {', '.join(LOCAL_ENGINES)}")
    started = time.monotonic()
    server = LocalServer(spec, ensure_venv(spec, output=output), direct=direct)
    try:
        version = server.wait_ready(startup_timeout)
        endpoint = MilvusEndpoint(uri=server.uri, collection_prefix=prefix or make_prefix())
        return Engine(
            backend=name,
            endpoint=endpoint,
            version=version,
            stop=server.stop,
            disposable=True,
            pid=server.proc.pid,
            startup_seconds=time.monotonic() - started,
            fixed_version=server.direct,
        )
    except BaseException:
        server.stop()
        raise
