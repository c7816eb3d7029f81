"""Machine facts for the report: cores, CPU, memory, load, Python, package versions, git commit."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["load_average", "machine_facts"]

_PACKAGES = ("milvus-lite", "pymilvus", "grpcio", "numpy", "pydantic", "pytest", "pytest-bdd", "hypothesis")


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gb() -> float | None:
    try:
        first = Path("/proc/meminfo").read_text().splitlines()[0]  # MemTotal: N kB
        return round(int(first.split()[1]) / 1024**2, 1)
    except (OSError, IndexError, ValueError):
        return None


def _git(root: Path) -> str | None:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        )
    except OSError:
        return None
    return head.stdout.strip() or None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages: how busy the shared machine was."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_facts(root: Path) -> dict[str, Any]:
    """Everything a reader needs to judge the absolute numbers (the ratios need none of it)."""
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "cpu": _cpu_model(),
        "memory_gb": _memory_gb(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "packages": versions,
        "git_commit": _git(root),
        "load_average_start": load_average(),
    }
