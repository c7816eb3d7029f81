"""A run's lease on its collections: who owns ``rqs_<run id>_...`` and whether that run still lives.

A collection of a run still going looks exactly like one a killed run left behind, and the engine keeps
nothing the kit could read on every backend to tell them apart (no creation time on Lite). So every
:class:`~conformance.engines.Engine` a run opens takes a lease: a small JSON record, one file per run
prefix, in the kit's state directory (``$RQS_STATE_DIR``, else ``$XDG_STATE_HOME/rag-conformance/
leases``, else ``~/.local/state/rag-conformance/leases``), holding the prefix, the engine's address
(redacted), the owner's pid and host, and a heartbeat refreshed every :data:`HEARTBEAT_SECONDS` while
the run lives. Closing the engine removes it; a run killed outright leaves it, with a pid that is gone.

A lease is alive (:meth:`LeaseRecord.alive`) when its pid still runs on this host, or, written from
another host (a state directory shared between machines), when its heartbeat is younger than
:data:`STALE_SECONDS`. ``rag-conformance clean`` leaves the collections of a live run alone unless told
``--force``. The file is keyed by the prefix alone: it is random per run (eight hex digits), so the same
run is found whatever address another command reaches the engine by (a Lite server on another port,
``uri:`` or ``lite``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..boundary._signals import for_the_main_thread

__all__ = [
    "HEARTBEAT_SECONDS",
    "STALE_SECONDS",
    "Lease",
    "LeaseRecord",
    "drop_lease",
    "lease_dir",
    "read_lease",
]

HEARTBEAT_SECONDS = 10.0
"""How often a live run refreshes its lease's heartbeat."""
STALE_SECONDS = 60.0
"""A lease written from another host is alive while its heartbeat is younger than this (six beats)."""


def lease_dir() -> Path:
    """Where leases live: ``$RQS_STATE_DIR``, ``$XDG_STATE_HOME/rag-conformance/leases`` or
    ``~/.local/state/rag-conformance/leases``."""
    configured = os.environ.get("RQS_STATE_DIR")
    if configured:
        return Path(configured).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "rag-conformance" / "leases"


@dataclass(frozen=True)
class LeaseRecord:
    """One run's lease as read from its file."""

    prefix: str
    engine: str
    pid: int
    host: str
    heartbeat: float
    path: Path

    def alive(self, *, now: float | None = None) -> bool:
        """Whether the run holding it still lives (see the module's docstring)."""
        if self.host == socket.gethostname():
            return _pid_alive(self.pid)
        return (time.time() if now is None else now) - self.heartbeat < STALE_SECONDS

    def describe(self, *, now: float | None = None) -> str:
        """``pid 123 on this host, heartbeat 3 s ago``."""
        age = max(0.0, (time.time() if now is None else now) - self.heartbeat)
        where = "this host" if self.host == socket.gethostname() else f"host {self.host}"
        return f"pid {self.pid} on {where}, heartbeat {age:.0f} s ago"


def read_lease(prefix: str) -> LeaseRecord | None:
    """The lease of the run ``prefix``, or None if there is none (or it cannot be read)."""
    path = lease_dir() / f"{prefix}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LeaseRecord(
            prefix=str(data["prefix"]),
            engine=str(data.get("engine", "")),
            pid=int(data["pid"]),
            host=str(data["host"]),
            heartbeat=float(data["heartbeat"]),
            path=path,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def drop_lease(prefix: str) -> None:
    """Remove the lease file of ``prefix`` (a dead run's, once its collections are gone)."""
    with contextlib.suppress(OSError):
        (lease_dir() / f"{prefix}.json").unlink()


class Lease:
    """This process's lease on ``prefix``: written at once, refreshed by one daemon thread, removed by
    :meth:`release`. A state directory that cannot be written costs the protection, never the run."""

    def __init__(self, prefix: str, engine: str) -> None:
        self.prefix = prefix
        self.engine = engine
        self.path = lease_dir() / f"{prefix}.json"
        self.written = self._write()
        if self.written:
            _beating.add(self)
            _ensure_heartbeat()

    def _write(self) -> bool:
        record = {
            "prefix": self.prefix,
            "engine": self.engine,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "heartbeat": time.time(),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(record), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError:
            return False
        return True

    def release(self) -> None:
        """Stop refreshing and remove the file (safe to call more than once)."""
        _beating.discard(self)
        if self.written:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.written = False


_beating: set[Lease] = set()
_beat_lock = threading.Lock()
_beat_thread: threading.Thread | None = None


def _ensure_heartbeat() -> None:
    global _beat_thread
    with _beat_lock:
        if _beat_thread is not None and _beat_thread.is_alive():
            return
        _beat_thread = threading.Thread(target=_beat, name="rqs-lease-heartbeat", daemon=True)
        _beat_thread.start()


def _beat() -> None:
    for_the_main_thread()
    while True:
        time.sleep(HEARTBEAT_SECONDS)
        for lease in list(_beating):
            lease._write()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    except OSError:
        return False
    return _not_zombie(pid)


def _not_zombie(pid: int) -> bool:
    """A killed child its parent has not reaped yet still has a pid; it is dead all the same."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): trust the signal
    return stat.rpartition(")")[2].split()[:1] != ["Z"]
