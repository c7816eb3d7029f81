"""The kit's own containers: the labels every one carries, and those a killed run left behind.

testcontainers' Ryuk reaper (which removes a session's containers when its process dies) needs an image
from a registry; where none is reachable the kit runs without it and stops its containers itself, on
every exit it sees (:mod:`conformance.engines._container`). A run killed outright (SIGKILL, a lost
machine) sees none, so every container the kit starts carries labels saying it is the kit's, which run
made it and which process owns it (host name, pid and that process's start time, so a reused pid is not
mistaken for the owner). :func:`kit_containers` finds exactly those; ``rag-conformance clean`` removes
the ones whose owner is gone on this machine and leaves every other container alone.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LABEL_KIT",
    "LABEL_RUN",
    "KitContainer",
    "kit_containers",
    "owner_labels",
    "remove_containers",
]

LABEL_KIT = "org.rag-conformance.kit"
LABEL_RUN = "org.rag-conformance.run"
LABEL_HOST = "org.rag-conformance.owner-host"
LABEL_PID = "org.rag-conformance.owner-pid"
LABEL_STARTED = "org.rag-conformance.owner-started"


def _process_started(pid: int) -> str:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat``, field 22), or ``""``
    where there is no /proc: with the pid it names one process, even after the pid is reused."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="ascii").read()  # noqa: SIM115  # one short read
    except OSError:
        return ""
    # The command name (field 2) is in parentheses and may hold spaces: count from after its ')'.
    return stat.rpartition(")")[2].split()[19]


def owner_labels(run: str) -> dict[str, str]:
    """The labels of a container this process starts for run ``run`` (its collection prefix)."""
    pid = os.getpid()
    return {
        LABEL_KIT: "true",
        LABEL_RUN: run,
        LABEL_HOST: socket.gethostname(),
        LABEL_PID: str(pid),
        LABEL_STARTED: _process_started(pid),
    }


@dataclass(frozen=True)
class KitContainer:
    """One container of the kit's: its id, image, run, owner, and whether that owner still runs."""

    id: str
    name: str
    image: str
    run: str
    owner: str  # "host:pid"
    owner_alive: bool | None  # None: the owner is on another machine, the kit cannot tell

    @property
    def leftover(self) -> bool:
        """Left by a run that is gone: its owner was on this machine and no longer runs."""
        return self.owner_alive is False


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        pass
    return not started or _process_started(pid) in ("", started)


def _describe(container: Any) -> KitContainer:
    labels = container.labels or {}
    host, pid = labels.get(LABEL_HOST, "?"), labels.get(LABEL_PID, "")
    alive: bool | None = None
    if host == socket.gethostname() and pid.isdigit():
        alive = _alive(int(pid), labels.get(LABEL_STARTED, ""))
    tags = getattr(container.image, "tags", None) or [str(getattr(container.image, "id", "?"))[:19]]
    return KitContainer(
        id=container.id,
        name=container.name,
        image=tags[0],
        run=labels.get(LABEL_RUN, "?"),
        owner=f"{host}:{pid}",
        owner_alive=alive,
    )


def kit_containers(client: Any, *, run: str | None = None) -> list[KitContainer]:
    """Every container (running or not) that carries the kit's label, or only run ``run``'s."""
    wanted = [f"{LABEL_KIT}=true"] + ([f"{LABEL_RUN}={run}"] if run else [])
    found = client.containers.list(all=True, filters={"label": wanted})
    return sorted((_describe(c) for c in found), key=lambda c: (c.run, c.id))


def remove_containers(client: Any, containers: list[KitContainer]) -> list[str]:
    """Remove ``containers`` (force: running ones are killed) with their volumes; return what could
    not be removed, each with the reason."""
    failed = []
    for container in containers:
        try:
            client.containers.get(container.id).remove(force=True, v=True)
        except Exception as exc:  # NotFound (removed meanwhile) is what was wanted
            if type(exc).__name__ != "NotFound":
                failed.append(f"{container.name} ({type(exc).__name__}: {exc})")
    return failed


def remove_run_quietly(client: Any, run: str) -> None:
    """Remove every container of run ``run``: a start interrupted halfway may have made one that the
    testcontainers object never learnt of."""
    with contextlib.suppress(Exception):
        remove_containers(client, kit_containers(client, run=run))
