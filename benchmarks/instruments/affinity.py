"""The engine and the benchmark on cores of their own while queries are timed.

Production runs Milvus on its own machine. Here both share a small one, and left to the scheduler the
benchmark's thread wakes on whichever core the engine's worker threads just left, or beside them: what
the client does right after each reply then runs at half speed or worse (measured on 2 cores: a
200 us busy wait after each reply made the client's own work 130 us cheaper). Pinning the benchmark to
the first core and the engine to the others measures the client's work as it costs beside a remote
server. Every variant is timed under the same pinning, so the ratios compare like with like; the bare
call itself gets faster, not slower, pinned.

Linux only (``os.sched_setaffinity``); elsewhere, or with a single usable core, nothing is pinned and
the report says why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.instruments.stats import descendants

__all__ = ["separate_cores"]


def _threads(pid: int) -> list[int]:
    try:
        return [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return []


def _pin(tids: list[int], cores: set[int]) -> int:
    """Pin each thread to ``cores``; how many were pinned (a thread may end meanwhile)."""
    pinned = 0
    for tid in tids:
        try:
            os.sched_setaffinity(tid, cores)
            pinned += 1
        except (ProcessLookupError, PermissionError, OSError):
            continue
    return pinned


@contextmanager
def separate_cores(engine_pid: int | None, *, enabled: bool = True) -> Iterator[dict[str, Any]]:
    """Within the block, this process on the first usable core and the engine (``engine_pid`` and its
    children, every thread) on the rest. Yields what was done, for the report; undone on exit.

    Threads started inside the block inherit the affinity of the thread that starts them.
    """
    if not enabled:
        yield {"pinned": False, "why": "--no-pin"}
        return
    if not hasattr(os, "sched_setaffinity") or engine_pid is None:
        yield {"pinned": False, "why": "no engine process to pin here, or no sched_setaffinity (not Linux)"}
        return
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        yield {"pinned": False, "why": f"{len(usable)} usable core: nothing to separate"}
        return
    client, engine = {usable[0]}, set(usable[1:])
    own = _threads(os.getpid())
    engine_threads = [tid for pid in descendants(engine_pid) for tid in _threads(pid)]
    info = {
        "pinned": True,
        "client_cores": sorted(client),
        "engine_cores": sorted(engine),
        "client_threads": _pin(own, client),
        "engine_threads": _pin(engine_threads, engine),
    }
    try:
        yield info
    finally:
        everything = set(usable)
        _pin(_threads(os.getpid()), everything)
        _pin([tid for pid in descendants(engine_pid) for tid in _threads(pid)], everything)
