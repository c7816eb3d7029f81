"""Smoke test of ``python -m benchmarks run`` at a tiny size: every figure is there, the Markdown renders.

It never asserts on speed: CI machines are noisy and the figures at 300 chunks mean nothing. The full
run is manual (see the README's "Benchmarks" section).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {
    "lookup",
    "bare_hybrid_same_fields",
    "bare_hybrid_ids_only",
    "legacy_parallel_probe",
    "legacy_sequential_probe",
}
SMOKE = [
    "--sizes", "300", "--queries", "10", "--warmup", "2",
    "--pp-sizes", "20,100", "--pp-budget", "0.1",
    "--stdio-blocks", "6", "--stdio-per-block", "5",
    "--profile-queries", "2",
    # One scenario that needs the engine, the corpus and the adapter: every phase shows up, quickly.
    "--conformance-select", "dense_distance_does_not_replace_hybrid_label",
]  # fmt: skip


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "run", *SMOKE, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "results.json").read_text()), (out / "RESULTS.md").read_text()


def test_every_retrieval_figure_is_there(outcome: tuple[dict, str]) -> None:
    results, _ = outcome
    (run,) = results["retrieval"]
    assert run["size"] == 300
    assert set(run["latency_ms"]) == VARIANTS
    for figures in run["latency_ms"].values():
        assert figures["n"] == 10
        assert {"p50", "p95", "mean", "client_cpu_per_call", "engine_cpu_per_call"} <= set(figures)
    for key in ("p50", "p95", "paired_median"):
        assert run["lookup_vs_bare"][key] > 0
        assert run["reference_vs_legacy"][key] > 0
    assert set(run["evidence_diff"]) >= {"top5_set_differs", "top5_order_differs"}
    assert run["ingest"]["rows_per_s"] > 0
    assert run["engine_memory"]["vmhwm_mb"] > 0


def test_every_other_figure_is_there(outcome: tuple[dict, str]) -> None:
    results, _ = outcome
    assert set(results["post_process"]["us_per_call"]) == {"20", "100"}
    conformance = results["conformance"]
    assert conformance["wall_s"] > 0
    assert {"milvus_start", "corpus_ingest", "scenarios", "startup_imports_collection"} <= set(
        conformance["breakdown_s"]
    )
    assert results["stdio"]["stdio"]["round_trips_per_s"] > 0
    assert results["stdio"]["overhead_us_per_message"] is not None
    assert results["machine"]["cores"] >= 1
    assert results["command"].startswith("python -m benchmarks run")
    # Every figure with a target has a verdict; the verdicts themselves are not asserted (speed).
    assert [row["figure"][:2] for row in results["checks"]] == ["1.", "2.", "3.", "4."]


def test_markdown_renders_and_render_round_trips(outcome: tuple[dict, str], tmp_path: Path) -> None:
    results, markdown = outcome
    for heading in ("# Benchmarks", "## Targets", "## 1, 2.", "## 3.", "## 4.", "## 5.", "## 6."):
        assert heading in markdown
    (tmp_path / "results.json").write_text(json.dumps(results))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "render", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "RESULTS.md").read_text() == markdown
