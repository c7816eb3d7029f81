"""A Milvus Lite server a test can freeze (SIGSTOP), kill and start again on the same port and data dir.

Built on the kit's own server process (:mod:`conformance.engines._lite`), so it is started, logged and
cleaned up as the kit does; :meth:`LiteServer.close` leaves nothing running, whatever state it is in.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from pymilvus import MilvusClient

from conformance.engines._lite import _LiteProcess
from conformance.engines._load import stretched
from conformance.engines._ports import free_port, port_open, served_by

__all__ = ["LiteServer"]

_STARTUP_SECONDS = 60.0  # stretched with the machine's load


class LiteServer:
    """One data dir and one port; at most one server process on them at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data_dir = root / "data"
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self._process: _LiteProcess | None = None
        self._runs = 0
        self._served = False  # once it has, a restart must come back on the same port

    def start(self) -> None:
        """Start the server and wait until it answers a call."""
        assert self._process is None, "already running"
        self._runs += 1
        work_dir = self.root / f"run-{self._runs}"
        work_dir.mkdir()
        self._process = process = _LiteProcess(data_dir=self.data_dir, work_dir=work_dir, port=self.port)
        deadline = time.monotonic() + stretched(_STARTUP_SECONDS)
        while time.monotonic() < deadline:
            if process.proc.poll() is not None:
                raise RuntimeError(f"the Lite server exited at start: {process.log_tail()}")
            if port_open(self.port):
                client = MilvusClient(uri=self.uri, timeout=stretched(10.0))
                try:
                    client.get_server_version()
                except Exception:  # still starting: its port opens before it serves
                    time.sleep(0.1)
                    continue
                finally:
                    client.close()
                if process.proc.poll() is None and served_by(process.proc.pid, self.port) is not False:
                    self._served = True
                    return
                # Whoever answered took the port between its choice and our bind (another worker's
                # server, say): a test that froze ours would be answered by theirs. The kit's own start
                # checks the same (conformance/engines/_lite.py); a first start moves to a fresh port.
                if self._served:  # a restart must keep its port: the stores under test hold its URI
                    raise RuntimeError(f"another process took port {self.port}: {process.log_tail()}")
                process.stop()
                self._process = None
                self.port = free_port()
                self.uri = f"http://127.0.0.1:{self.port}"
                return self.start()
            time.sleep(0.1)
        raise RuntimeError(f"the Lite server did not start in time: {process.log_tail()}")

    def freeze(self) -> None:
        """Stop the server's processes where they are (SIGSTOP); :meth:`thaw` resumes them."""
        assert self._process is not None
        os.killpg(self._process.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL the server, as a crash would; the data dir stays for :meth:`start`."""
        if self._process is None:
            return
        process, self._process = self._process, None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.proc.pid, signal.SIGCONT)  # a frozen process takes SIGKILL too, but say so
            os.killpg(process.proc.pid, signal.SIGKILL)
        process.proc.wait()
        process.stop()  # closes its log and removes its work dir

    def close(self) -> None:
        """Stop whatever runs (thawed first, so it can stop)."""
        self.thaw()
        if self._process is not None:
            process, self._process = self._process, None
            process.stop()
