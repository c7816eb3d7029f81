"""Latency statistics, the interleaved timing loop, and what the OS says about a process.

Variants are timed query by query in rotation (A B C, then B C A, ...): drift on a shared machine (other
jobs, CPU frequency, a compaction in the engine) hits every variant alike, and no variant always runs
right after another one that may have warmed a cache for it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Samples",
    "descendants",
    "engine_cpu_seconds",
    "interleave",
    "peak_rss_mb",
    "ratio",
    "summarize",
]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class Samples:
    """Per-call wall seconds of one variant, and the CPU the client and the engine spent on them."""

    wall: list[float] = field(default_factory=list)
    client_cpu: float = 0.0
    engine_cpu: float = 0.0
    results: list[Any] = field(default_factory=list)


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux; just ``pid`` where /proc cannot tell)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return found


def engine_cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of ``pid`` and its children so far (0 when unknown or not Linux)."""
    if pid is None:
        return 0.0
    total = 0
    for each in descendants(pid):
        try:
            # Fields after the command name (which may hold spaces) start after the last ')'.
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / _TICKS


def peak_rss_mb(pid: int | None) -> dict[str, float | None]:
    """``VmHWM`` (peak resident set) and ``VmRSS`` of ``pid`` plus its children, in MiB."""
    if pid is None:
        return {"vmhwm_mb": None, "vmrss_mb": None}
    out = {"vmhwm_mb": 0.0, "vmrss_mb": 0.0}
    for each in descendants(pid):
        try:
            lines = Path(f"/proc/{each}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[f"{key.lower()}_mb"] += int(value.split()[0]) / 1024  # kB
    return {key: round(value, 1) for key, value in out.items()}


def interleave(
    variants: Mapping[str, Callable[[Any], Any]],
    items: Sequence[Any],
    *,
    warmup: int,
    engine_pid: int | None = None,
    on_item: Callable[[], None] | None = None,
    keep_results: bool = False,
) -> dict[str, Samples]:
    """Call every variant on every item, rotating the order per item; the first ``warmup`` items count
    for nothing (connection set-up, the engine's first BM25 query after load, lazy imports)."""
    names = list(variants)
    samples = {name: Samples() for name in names}
    for index, item in enumerate(items):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            cpu0, engine0 = time.process_time(), engine_cpu_seconds(engine_pid)
            start = time.perf_counter()
            result = variants[name](item)
            elapsed = time.perf_counter() - start
            if index < warmup:
                continue
            record = samples[name]
            record.wall.append(elapsed)
            record.client_cpu += time.process_time() - cpu0
            record.engine_cpu += engine_cpu_seconds(engine_pid) - engine0
            if keep_results:
                record.results.append(result)
        if on_item is not None:
            on_item()
    return samples


def summarize(samples: Samples, *, unit: float = 1e3) -> dict[str, float | int]:
    """p50, p95, mean (in ``unit`` per second, ms by default) and mean CPU per call."""
    wall = np.asarray(samples.wall)
    n = len(wall)
    if n == 0:
        return {"n": 0}
    return {
        "n": n,
        "p50": round(float(np.percentile(wall, 50)) * unit, 3),
        "p95": round(float(np.percentile(wall, 95)) * unit, 3),
        "mean": round(float(wall.mean()) * unit, 3),
        "client_cpu_per_call": round(samples.client_cpu / n * unit, 3),
        "engine_cpu_per_call": round(samples.engine_cpu / n * unit, 3),
    }


def ratio(a: Samples, b: Samples) -> dict[str, float]:
    """A over B at p50 and p95, and the median of the per-item ratios (paired: same item, same moment)."""
    wa, wb = np.asarray(a.wall), np.asarray(b.wall)
    return {
        "p50": round(float(np.percentile(wa, 50) / np.percentile(wb, 50)), 4),
        "p95": round(float(np.percentile(wa, 95) / np.percentile(wb, 95)), 4),
        "paired_median": round(float(np.median(wa / wb)), 4),
    }
