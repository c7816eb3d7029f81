"""Figure 4: the whole ``rag-conformance run`` against the reference, wall time and where it goes.

Two runs of the exact command, each in its own process: a plain one (the wall time judged against the
target) and one with the passive timing plugin :mod:`benchmarks.children.conftiming` (the breakdown). If the
plain run misses the target, a third runs under cProfile for the profile.
"""

from __future__ import annotations

import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.instruments.profile import summarize_stats
from benchmarks.instruments.progress import say

__all__ = ["CONFORMANCE_TARGET_S", "run_conformance_bench"]

CONFORMANCE_TARGET_S = 20.0
ROOT = Path(__file__).resolve().parents[2]


def _command() -> list[str]:
    script = Path(sys.executable).with_name("rag-conformance")
    return [str(script)] if script.exists() else [sys.executable, "-m", "conformance.commands._cli"]


def _run(args: list[str], workdir: Path, env: dict[str, str]) -> tuple[float, int]:
    start = time.time()
    done = subprocess.run(args, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.time() - start
    if done.returncode not in (0, 1):
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(args)} exited with {done.returncode}:\n{tail}")
    return wall, done.returncode


def _breakdown(timings: dict[str, Any], launched: float, ended: float) -> dict[str, float]:
    phases = dict(timings["phases_s"])
    stamps = timings["stamps"]
    phases["startup_imports_collection"] = stamps["first_item"] - launched
    phases["report_and_exit"] = ended - stamps["last_item_end"]
    total = ended - launched
    phases["unaccounted"] = total - sum(phases.values())  # pytest's own per-item machinery, mostly
    return {k: round(v, 3) for k, v in phases.items()}


def run_conformance_bench(*, milvus: str, select: str | None, profile: bool) -> dict[str, Any]:
    """Wall time of the plain run, the instrumented breakdown, and a profile when the target is missed."""
    with tempfile.TemporaryDirectory(prefix="rqs-bench-conf-") as tmp:
        workdir = Path(tmp)
        args = [*_command(), "run", "--milvus", milvus, "--report", str(workdir / "report")]
        if select:
            args += ["-k", select]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        say(f"[conformance] plain run: {' '.join(args[1:])}")
        plain_wall, code = _run(args, workdir, env)
        say(f"[conformance] plain run took {plain_wall:.1f} s; now the instrumented run")
        timings_path = workdir / "timings.json"
        launched = time.time()
        timed_wall, _ = _run(
            [*args, "--", "-p", "benchmarks.children.conftiming"],
            workdir,
            {**env, "RQS_BENCH_TIMINGS": str(timings_path)},
        )
        timings = json.loads(timings_path.read_text())
        report = json.loads((workdir / "report" / "report.json").read_text())
        figures: dict[str, Any] = {
            "command": "rag-conformance run"
            + (f" --milvus {milvus}" if milvus != "lite" else "")
            + (f" -k {select!r}" if select else ""),
            "exit_code": code,
            "verdict": report.get("verdict"),
            "scenarios": report["summary"],
            "wall_s": round(plain_wall, 3),
            "instrumented_wall_s": round(timed_wall, 3),
            "target_s": CONFORMANCE_TARGET_S,
            "breakdown_s": _breakdown(timings, launched, launched + timed_wall),
            "engine_startup_seconds": round(timings["engine"].get("startup_seconds", 0.0), 3),
            "fixtures_s": timings["fixtures_s"],
            "items": timings["items"],
            "report_duration_s_sum": round(sum(s["duration_s"] for s in report["scenarios"]), 3),
        }
        if profile and plain_wall > CONFORMANCE_TARGET_S:
            say("[conformance] target missed: profiling one more run under cProfile")
            out = workdir / "run.prof"
            target = ["-m", "conformance.commands._cli"] if args[0] == sys.executable else args[:1]
            command = [sys.executable, "-m", "cProfile", "-o", str(out), *target, *args[len(_command()) :]]
            _run(command, workdir, env)
            figures["profile"] = summarize_stats(pstats.Stats(str(out)), top=10)
    return figures
