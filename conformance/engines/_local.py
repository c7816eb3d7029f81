"""The other Milvus engines this machine can run, each from its own cached venv, as loopback servers.

The lines and how each kind runs are the table of :mod:`conformance.engines._lines` (``lite-2.4.12``,
``lite-2.5.1``: the C++ core behind a forwarder that answers ``GetVersion``, see
:mod:`conformance.engines._local_child`; ``lite-3.x``: ``milvus-lite server`` of its own venv;
``milvus-2.2.16``, ``milvus-2.3.5``: the Go server, old: no hybrid search, no BM25).

Venvs live in ``$RQS_ENGINE_CACHE`` (default ``~/.cache/rag-conformance/engines/<name>/venv``),
outside any project, and are installed once with pip's progress shown. Each server runs in its own
process group with a temporary data dir, which :meth:`LocalServer.stop` removes; or on a data dir the
caller gives (an in-place upgrade), which it keeps.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from ..boundary._protocol import MilvusEndpoint
from ._engine import Engine, EngineUnavailableError, PortTakenError, make_prefix
from ._lines import LOCAL_ENGINES, LocalEngineSpec
from ._load import stretched
from ._ports import HOST, START_ATTEMPTS, free_port, served_by

__all__ = [
    "CACHE_ENV",
    "LITE_FILE",
    "LOCAL_ENGINES",
    "LocalEngineSpec",
    "LocalServer",
    "cache_root",
    "ensure_venv",
    "start_local_engine",
]

CACHE_ENV = "RQS_ENGINE_CACHE"
_CHILD = Path(__file__).with_name("_local_child.py")
_LITE_CHILD = Path(__file__).with_name("_lite_child.py")
LITE_FILE = "lite.db"  # the Lite lines keep their data in <data dir>/lite.db
_LOG_TAIL = 15
# A Go server's log line for a port it could not listen on (the port, where the line names it).
_TAKEN = re.compile(r"(?:listen tcp [^ ]*:(?P<port>\d+): )?bind: address already in use")
# Every component of the 2.3.5 server advertises this address to the others (the default is the first
# non-loopback address). Its gRPC ports still bind every interface: 2.3.5 has no listen-address setting.
_COMPONENTS_235 = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexCoord", "indexNode", "dataCoord")
_LOOPBACK_235 = [f"--extra-config={c}.ip={HOST}" for c in (*_COMPONENTS_235, "dataNode")]


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
        # No bytecode compiled at install: it more than doubled the install's CPU (19 s against 8 for
        # Lite 2.5.1), for modules the engine mostly never imports; those it imports compile on use.
        pip = [str(venv / "bin/python"), "-m", "pip", "install", "--no-compile", "--progress-bar", "on"]
        steps = [[sys.executable, "-m", "venv", str(venv)], [*pip, *spec.requirements]]
        for command in steps:
            code = subprocess.call(command, stdout=output, stderr=output)  # None: the terminal
            if code != 0:
                raise EngineUnavailableError(
                    f"cannot install {spec.name}: `{' '.join(command)}` exited with {code}; check the "
                    f"network and PyPI, then run again (the half-made venv at {venv} is redone)"
                )
        marker.write_text(wanted)
    return venv


def _bindable(port: int) -> bool:
    """Whether the engine could bind ``port`` now. Go's listeners set SO_REUSEADDR, and so does this
    check: a port whose last connections are in TIME_WAIT (a server that stopped a moment ago) is free
    to them, where a plain bind would call it held for a minute."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


class LocalServer:
    """One engine server process group on ``127.0.0.1:<port>``, its log and its temporary data dir."""

    def __init__(
        self,
        spec: LocalEngineSpec,
        venv: Path,
        *,
        direct: bool = False,
        data_dir: Path | None = None,
        port: int | None = None,
    ) -> None:
        for fixed in spec.fixed_ports:
            if not _bindable(fixed):
                raise EngineUnavailableError(
                    f"{spec.about} always binds port {fixed}, and something on this machine holds it "
                    "(another Milvus 2.x server, e.g. another run of `rag-conformance engines`); "
                    "only one can run at a time: wait for it, or stop it"
                )
        self.spec = spec
        self.port = port if port is not None else free_port()
        self.uri = f"http://{HOST}:{self.port}"
        self.work_dir = Path(tempfile.mkdtemp(prefix=f"rqs-{spec.name}-"))
        self.log_path = self.work_dir / "server.log"
        # A data dir the caller gives is kept on stop (an in-place upgrade opens it next).
        self.data_dir = data_dir if data_dir is not None else self.work_dir / "data"
        self.direct = direct and spec.kind == "lite-core"
        python = str(venv / "bin/python")
        if spec.kind == "lite-core":
            mode = [str(_CHILD), "lite-core", "--port", str(self.port), "--data-dir", str(self.data_dir)]
            mode += ["--direct"] if self.direct else []
        elif spec.kind == "lite-python":
            # The same file a team's MilvusClient("<data dir>/lite.db") names: 3.x keeps a directory
            # there, 2.x a file (which 3.x cannot open: what an in-place upgrade finds out).
            self.data_dir.mkdir(parents=True, exist_ok=True)
            mode = [str(_LITE_CHILD), "--data-dir", str(self.data_dir / LITE_FILE)]
            mode += ["--port", str(self.port), "--remove-on-orphan", str(self.work_dir)]
        else:
            server = [str(venv / "bin/milvus-server"), "--data", str(self.data_dir)]
            # The port twice: milvus-server probes --proxy-port with a plain bind and, where that fails
            # (the port an in-place upgrade's old engine just left, in TIME_WAIT), writes the next free
            # one into the config without a word; the extra config pins the port the kit waits on.
            port = ["--proxy-port", str(self.port), f"--extra-config=proxy.port={self.port}"]
            mode = [str(_CHILD), "exec", "--", *server, *port, *_LOOPBACK_235]
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [python, "-P", *mode],
            stdin=subprocess.PIPE,  # the child's parent watchdog waits for EOF on it
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the matrix, which then stops the server itself
            cwd=str(self.work_dir),
        )
        self.version = ""

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
                        if self.spec.kind == "lite-core":  # the forwarder answers GetVersion itself
                            client.list_collections(timeout=5.0)
                finally:
                    client.close()
                self._check_port_is_ours()
                return self.version
            except EngineUnavailableError:
                raise
            except Exception as exc:  # refused, or the server is still starting its components
                last = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                self._check_ports_bound()
                time.sleep(0.5)
        raise EngineUnavailableError(
            f"{self.spec.about} did not answer on {self.uri} within {budget:.0f} s "
            f"(last: {last}); log tail:\n{self.log_tail()}"
        )

    def _check_port_is_ours(self) -> None:
        """The answer came from this server, not from a process that took its port between the kit
        finding it free and the server binding it (ours then fails to bind, but answers nothing yet)."""
        if self.proc.poll() is None and served_by(self.proc.pid, self.port) is False:
            raise PortTakenError(
                f"{self.spec.about} could not have port {self.port}: another process listens there (it "
                "took the port between the kit finding it free and the server binding it); run again"
            )

    def _check_ports_bound(self) -> None:
        """A Go server whose fixed port was taken after the check (another 2.x server started in
        between) panics, while milvus-server, its Python parent, waits on: say so now, not after the
        whole startup budget."""
        if not self.spec.fixed_ports:
            return
        for log in (self.data_dir / "logs").glob("*.log"):
            with contextlib.suppress(OSError):
                taken = _TAKEN.search(log.read_text(errors="replace"))
                if taken is None:
                    continue
                port = int(taken["port"]) if taken["port"] else None
                if port is None or port in self.spec.fixed_ports:
                    ports = ", ".join(map(str, self.spec.fixed_ports))
                    raise EngineUnavailableError(
                        f"{self.spec.about} could not bind its fixed port(s) {ports}: another Milvus 2.x "
                        f"server took one while this one started ({log}); only one runs at a time: wait "
                        "for it, or stop it"
                    )
                raise PortTakenError(
                    f"{self.spec.about} could not bind port {port}: another process took it between the "
                    f"kit finding it free and the server binding it ({log}); run again"
                )

    def log_tail(self) -> str:
        """The last lines of the server log."""
        with contextlib.suppress(OSError):
            lines = self.log_path.read_text(errors="replace").splitlines()
            return "\n".join(lines[-_LOG_TAIL:]) or "(empty log)"
        return "(no log)"

    def stop(self) -> None:
        """SIGTERM the group, SIGKILL what is left after a grace period, remove the work dir (and the
        data dir with it, unless the caller gave it)."""
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
    data_dir: str | os.PathLike[str] | None = None,
    port: int | None = None,
) -> Engine:
    """Install (once) and start local engine ``name`` as an :class:`Engine` the kit can use.

    ``direct`` (the Lite 2.x lines only) connects to the binary itself, without the forwarder that
    answers ``GetVersion``: for measurements, where the forwarder's hop would count as the engine's
    time. Without ``data_dir``, closing the engine stops the server and removes its data; with one, the
    engine keeps its data there (see :data:`~conformance.engines._lines.DATA`), and closing it drops
    only the run's prefixed collections. ``port`` fixes the loopback port (default: a free one).
    ``startup_timeout`` bounds the wait for its first answer (default: the engine's own budget); the
    install before it is not bounded.
    """
    spec = LOCAL_ENGINES.get(name)
    if spec is None:
        raise EngineUnavailableError(f"no local engine {name!r}; known: {', '.join(LOCAL_ENGINES)}")
    started = time.monotonic()
    given = Path(data_dir).expanduser().resolve() if data_dir is not None else None
    venv = ensure_venv(spec, output=output)
    for attempt in range(1, START_ATTEMPTS + 1):
        server = LocalServer(spec, venv, direct=direct, data_dir=given, port=port)
        try:
            version = server.wait_ready(startup_timeout)
        except PortTakenError:
            server.stop()
            if port is not None or attempt == START_ATTEMPTS:
                raise  # a port the caller named: another one would not do
            continue
        except BaseException:
            server.stop()
            raise
        break
    try:
        endpoint = MilvusEndpoint(uri=server.uri, collection_prefix=prefix or make_prefix())
        return Engine(
            backend=name,
            endpoint=endpoint,
            version=version,
            stop=server.stop,
            disposable=given is None,
            pid=server.proc.pid,
            startup_seconds=time.monotonic() - started,
            fixed_version=server.direct,
            log_tail=server.log_tail,
        )
    except BaseException:
        server.stop()
        raise
