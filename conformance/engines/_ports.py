"""Loopback ports for the servers the kit starts, and whether the one answering on a port is the kit's.

A free port is found by binding port 0 and letting it go; the server binds it a moment later. In between,
another process may start listening there (another run's engine, a recording proxy: a busy test run
starts hundreds). The kit's server then fails to bind and exits, but it takes a second or more to get
that far, and until then the port answers, as the *other* process: a start that only waited for an
answer would hand the run someone else's engine (and a test that froze "its" server would freeze the
wrong one). :func:`served_by` tells the two apart from ``/proc`` (Linux): which processes hold the
listening socket, and whether the server the kit started is one of their ancestors.

Standard library only: the child that runs a Lite 2.x engine in the engine's own venv loads this file
by its path, for the private port between its forwarder and the engine binary.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = ["HOST", "START_ATTEMPTS", "free_port", "port_open", "served_by"]

HOST = "127.0.0.1"
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's "st" column
_PROC = Path("/proc")
START_ATTEMPTS = 3
"""How many free ports a start tries when another process takes the one found free before the server
binds it (a start on a port the caller named tries that one only)."""


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_open(port: int, timeout: float = 0.2) -> bool:
    """Whether something accepts connections on the loopback ``port``."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def served_by(server_pid: int, port: int) -> bool | None:
    """Whether the socket listening on ``port`` belongs to process ``server_pid`` or one of its
    descendants (a server that forks its engine binary, or whose engine moved to a session of its own).

    ``None`` when this machine cannot tell: no ``/proc`` (not Linux), nothing listening on the port
    (yet), or a listener whose holder this user may not inspect. Callers then go on as before, on the
    port's answer alone.
    """
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    holders = _holders(inodes)
    if not holders:
        return None
    return any(_descends_from(pid, server_pid) for pid in holders)


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port``, IPv4 or IPv6 (empty without ``/proc``)."""
    found: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            if len(fields) > 9 and fields[3] == _LISTEN and int(fields[1].rpartition(":")[2], 16) == port:
                found.add(fields[9])
    return found


def _holders(inodes: set[str]) -> set[int]:
    """The processes with one of these sockets among their open files (those this user may read)."""
    wanted = {f"socket:[{inode}]" for inode in inodes}
    holders = set()
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = os.listdir(entry / "fd")
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            try:
                if os.readlink(entry / "fd" / fd) in wanted:
                    holders.add(int(entry.name))
                    break
            except OSError:
                continue
    return holders


def _descends_from(pid: int, ancestor: int) -> bool:
    """Whether ``ancestor`` is ``pid`` or on its chain of parents."""
    seen = set()
    while pid > 1 and pid not in seen:
        if pid == ancestor:
            return True
        seen.add(pid)
        try:
            stat = (_PROC / str(pid) / "stat").read_text()
            pid = int(stat.rpartition(")")[2].split()[1])  # after "(comm)": state, then the parent
        except (OSError, ValueError, IndexError):
            return False
    return pid == ancestor
