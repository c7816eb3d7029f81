"""cProfile, summarised: which functions dominate, and how much of the time is spent waiting on Milvus.

Used only where a target is missed, so the report shows why instead of a guess. cProfile slows Python
code down more than it slows waiting, so shares are indicative; the ranking is what matters.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["profile_calls", "summarize_stats"]

# Where a blocking gRPC call spends its time waiting for the engine's reply.
_WAIT_MARKERS = ("grpc._cython", "cygrpc", "_channel.py", "threading.py:", "'acquire' of '_thread")


def _name(key: tuple[str, int, str]) -> str:
    file, line, function = key
    if file == "~":  # a builtin: pstats names it by the function alone
        return function
    parts = Path(file).parts
    for anchor in ("site-packages", "reference", "conformance", "benchmarks", "tests", "lib"):
        if anchor in parts:
            file = "/".join(parts[parts.index(anchor) + (anchor in ("site-packages", "lib")) :])
            break
    return f"{file}:{line}({function})"


def summarize_stats(stats: pstats.Stats, *, top: int = 8) -> dict[str, Any]:
    """The ``top`` functions by own time and by cumulative time, as shares of the profiled total."""
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in table.values()) or 1e-12

    def rows(index: int) -> list[dict[str, Any]]:
        ranked = sorted(table.items(), key=lambda item: item[1][index], reverse=True)[:top]
        return [
            {"function": _name(key), "calls": row[1], "share": round(row[index] / total, 4)}
            for key, row in ranked
        ]

    waiting = sum(row[2] for key, row in table.items() if any(m in _name(key) for m in _WAIT_MARKERS))
    return {
        "total_s": round(total, 4),
        "wait_share": round(waiting / total, 4),
        "by_own_time": rows(2),
        "by_cumulative": rows(3),
    }


def profile_calls(call: Callable[[Any], Any], items: Iterable[Any], *, top: int = 8) -> dict[str, Any]:
    """Profile ``call(item)`` for every item; see :func:`summarize_stats`."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        for item in items:
            call(item)
    finally:
        profiler.disable()
    return summarize_stats(pstats.Stats(profiler), top=top)
