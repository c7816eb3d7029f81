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

__all__ = ["client_time", "profile_calls", "summarize_stats"]

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


# Where a lookup's client time goes, by who spends it (own time of each function, by its file).
_PARTS = (
    ("waiting for the engine's reply (gRPC)", _WAIT_MARKERS),
    ("pymilvus: building the request, reading the reply", ("pymilvus/",)),
    ("gRPC and protobuf, client side", ("grpc/", "google/", "protobuf")),
    ("pydantic validation", ("pydantic",)),
    ("numpy", ("numpy",)),
    ("reference: store (search, result to candidates)", ("reference/store/",)),
    ("reference: post-process and normalizer", ("reference/_postprocess.py", "reference/_quality.py",
                                                "reference/_labels.py")),
    ("reference: making the models (candidates, blocks, results)", ("reference/_models.py",)),
    ("reference: lookup_knowledge", ("reference/_lookup.py",)),
    ("benchmark harness", ("benchmarks/",)),
)  # fmt: skip


def client_time(stats: pstats.Stats, calls: int) -> dict[str, Any]:
    """Own time per call of the profiled code, by part (see ``_PARTS``); the rest is "other"."""
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    parts = dict.fromkeys([name for name, _ in _PARTS] + ["other (interpreter, builtins)"], 0.0)
    for key, row in table.items():
        name = _name(key)
        part = next((p for p, markers in _PARTS if any(m in name for m in markers)), None)
        parts[part or "other (interpreter, builtins)"] += row[2]
    total = sum(parts.values()) or 1e-12
    return {
        "calls": calls,
        "ms_per_call": {p: round(s / calls * 1e3, 4) for p, s in parts.items()},
        "share": {p: round(s / total, 4) for p, s in parts.items()},
    }


def profile_calls(
    call: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    top: int = 8,
    extra: Callable[[pstats.Stats, int], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Profile ``call(item)`` for every item; see :func:`summarize_stats` (and ``extra``'s figures)."""
    profiler = cProfile.Profile()
    count = 0
    profiler.enable()
    try:
        for item in items:
            call(item)
            count += 1
    finally:
        profiler.disable()
    stats = pstats.Stats(profiler)
    summary = summarize_stats(stats, top=top)
    if extra is not None:
        summary["client_time"] = extra(stats, max(count, 1))
    return summary
