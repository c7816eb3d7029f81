"""Waiting budgets that stretch with the machine's load.

A budget that holds on an idle machine (10 s to connect to a loopback server, a minute for a server to
start) runs out on a CI runner whose cores are shared with other jobs, and then an engine that is merely
slow reads as one that is not there (NOT JUDGED). So the kit's fixed budgets are multiplied by how many
times busier than its cores the machine is (the 1-minute load average over the usable cores), at least
1 (an idle machine waits as before, so a typo in a URI still fails fast) and at most
:data:`MAX_STRETCH`. The budget a message names is the stretched one.
"""

from __future__ import annotations

import os

__all__ = ["MAX_STRETCH", "load_stretch", "stretched", "usable_cores"]

MAX_STRETCH = 4.0
"""The most a budget is stretched: four times busier than its cores, a machine is overloaded, not slow."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity), at least 1."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def load_stretch() -> float:
    """How many times a budget is stretched now: ``load average / cores``, between 1 and MAX_STRETCH."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this system: wait as on an idle machine
        return 1.0
    return min(MAX_STRETCH, max(1.0, load / usable_cores()))


def stretched(seconds: float) -> float:
    """``seconds``, stretched for the machine's load now."""
    return seconds * load_stretch()
