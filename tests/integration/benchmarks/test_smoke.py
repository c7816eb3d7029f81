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

from benchmarks.figures.retrieval.stages import STAGES

ROOT = Path(__file__).resolve().parents[3]
VARIANTS = {
    "lookup",
    "lookup_old",
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
    # The peers build venvs and ingest through three libraries: figures/retrieval/test_peers.py instead.
    "--no-peers",
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


def test_both_engines_are_measured_or_say_why_not(outcome: tuple[dict, str]) -> None:
    results, markdown = outcome
    assert [r["engine"] for r in results["retrieval"]] == ["lite", "lite-2.5.1"]
    assert "## Engines side by side" in markdown
    c_core = results["retrieval"][1]
    if "not_run" in c_core:  # e.g. no PyPI to install it from: the column must say so
        assert f"lite-2.5.1 300: not run: {c_core['not_run']}" in markdown
        pytest.skip(f"Lite 2.5.1 could not run here: {c_core['not_run']}")
    assert c_core["engine_version"] == "milvus_lite-2.5.1"
    assert c_core["index"] == "FLAT"  # its local mode refuses HNSW, and the report says so
    assert "local mode builds only FLAT" in markdown
    assert set(c_core["latency_ms"]) == VARIANTS


def test_every_retrieval_figure_is_there(outcome: tuple[dict, str]) -> None:
    results, _ = outcome
    run = results["retrieval"][0]
    assert run["size"] == 300
    assert set(run["latency_ms"]) == VARIANTS
    for figures in run["latency_ms"].values():
        assert figures["n"] == 10
        assert {"p50", "p95", "mean", "client_cpu_per_call", "engine_cpu_per_call"} <= set(figures)
    for key in ("p50", "p95", "paired_median"):
        assert run["lookup_vs_bare"][key] > 0
        assert run["reference_vs_legacy"][key] > 0
    assert set(run["evidence_diff"]) >= {"top5_set_differs", "top5_order_differs"}
    # The old (tuned) hot path beside the new one, in the same run.
    assert run["old_lookup"]["commit"]
    assert run["old_lookup"]["new_vs_old"]["p50"] > 0
    assert "peers" not in run  # --no-peers
    assert run["ingest"]["rows_per_s"] > 0
    assert run["engine_memory"]["vmhwm_mb"] > 0
    # Queries are timed with the client and the engine on separate cores, or the run says why not.
    assert run["affinity"]["pinned"] or run["affinity"]["why"]
    # The client profile of every run: lookup's own time by part, the engine's reply wait among them.
    parts = run["client_time"]["ms_per_call"]
    assert parts["waiting for the engine's reply (gRPC)"] > 0
    assert parts["reference: store (search, result to candidates)"] > 0
    assert set(run["profiles"]) >= {"lookup", "bare_hybrid_same_fields"}
    # The stages timed without a profiler, on the engine and replayed warm: every stage, every lookup.
    for where in ("engine", "warm"):
        us = run["stages"]["us"][where]
        assert all(us[label] > 0 for label, _, _ in STAGES), us
        assert us["client work (all but the pymilvus call)"] > 0
    assert run["stages"]["us"]["engine"]["pymilvus hybrid_search (request, engine, reply)"] > 0


def test_every_other_figure_is_there(outcome: tuple[dict, str]) -> None:
    results, _ = outcome
    assert set(results["post_process"]["us_per_call"]) == {"20", "100"}
    assert set(results["post_process"]["old"]["us_per_call"]) == {"20", "100"}
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
    prefixes = [row["figure"][:2] for row in results["checks"]]
    assert prefixes == ["1.", "1.", "2.", "2.", "3.", "4."] or "not run" in str(results["checks"])


def test_markdown_renders_and_render_round_trips(outcome: tuple[dict, str], tmp_path: Path) -> None:
    results, markdown = outcome
    headings = (
        "# Benchmarks",
        "## Targets",
        "## Where a lookup's client time goes",
        "## A lookup's stages, timed",
        "## 1, 2.",
        "## 3.",
    )
    for heading in (*headings, "## 4.", "## 5.", "## 6.", "## Profiles"):
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
