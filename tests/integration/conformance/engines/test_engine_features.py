"""The engine-behaviour features on this venv's Milvus Lite 3.x: all pass, and Lite 3.x's known
divergences show as expected failures with their reasons (conformance/engines/expectations/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.commands._runner import run_conformance

LITE3_XFAILS = {
    "engine-bm25-scores-non-negative": "negated",
    "engine-rrf-k-outside-range-rejected": "accepts RRF k = 0",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("engine-report")
    outcome = run_conformance(milvus="lite", report_dir=out, checks="engine")
    assert outcome.report is not None, f"no report (pytest exit code {outcome.pytest_exit_code})"
    return json.loads((Path(out) / "report.json").read_text())


def test_every_engine_scenario_runs_and_only_engine_scenarios_do(report: dict) -> None:
    features = (Path(__file__).resolve().parents[4] / "features" / "engine").glob("*.feature")
    lines = [line for feature in features for line in feature.read_text().splitlines()]
    ids = {line.split("@id:")[1].split()[0] for line in lines if "@id:" in line}
    assert len(ids) >= 20, ids
    assert {s["id"] for s in report["scenarios"]} == ids
    assert {s["requirement_id"] for s in report["scenarios"]} == {"engine-behaviour"}


def test_the_feature_passes_on_lite_3_with_its_divergences_as_xfails(report: dict) -> None:
    version = report["environment"]["milvus"]["version"]
    if not version.startswith("milvus_lite-3."):
        pytest.skip(f"the expectations checked here are Lite 3.x's; this venv runs {version}")
    by_status: dict[str, set[str]] = {}
    for scenario in report["scenarios"]:
        by_status.setdefault(scenario["status"], set()).add(scenario["id"])
    assert by_status.get("xfailed") == set(LITE3_XFAILS)
    assert set(by_status) == {"passed", "xfailed"}, by_status
    for scenario in report["scenarios"]:
        if scenario["id"] in LITE3_XFAILS:
            assert LITE3_XFAILS[scenario["id"]] in scenario["message"]
            assert "conformance/engines/expectations/milvus-lite-3.toml" in scenario["message"]
    assert report["verdict"] == "CONFORMS"
