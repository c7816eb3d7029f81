"""The kit on the other engines this machine runs: Milvus Lite 2.5.1 (the C++ core) and Milvus 2.3.5
(the Go server, no BM25, no hybrid search).

Every engine check, and the reference on a dense and a hybrid question of each kind (search, lookup,
a scenario outline with both modes): nothing is ERRORED anywhere; on 2.3.5 what needs BM25 or hybrid
search is NOT APPLICABLE with the engine's reason, and the dense questions pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance._runner import run_conformance
from tests.local_engines import local_engine_uri

SELECT = (
    "rqs_engine_check or mode_labels_hits or mode_dense_still_callable or no_l2_enrichment_overwrite "
    "or good_filtered_lookup_does_not_retry"
)
HYBRID_ONLY = {  # the selected implementation scenarios that ask in hybrid mode only
    "hybrid-mode-labels-hits-as-hybrid",
    "no-l2-enrichment-overwrite",
    "no-l2-enrichment-overwrite-lookup",
}
DENSE_ENGINE_CHECKS = {  # the engine checks that need neither BM25 nor hybrid search
    "engine-l2-is-squared-euclidean",
    "engine-dense-results-ascend-by-distance",
    "engine-dense-filter-keeps-matching-only",
    "engine-upsert-replaces",
}


_REPORTS: dict[str, dict[str, Any]] = {}


def _report(engine: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run per engine and test session, shared by the tests below."""
    if engine not in _REPORTS:
        uri = local_engine_uri(engine)
        out = tmp_path_factory.mktemp(engine)
        outcome = run_conformance(milvus=f"uri:{uri}", report_dir=out, checks="all", select=SELECT)
        assert outcome.report is not None, f"no report (pytest exit code {outcome.pytest_exit_code})"
        _REPORTS[engine] = json.loads((Path(out) / "report.json").read_text())
    return _REPORTS[engine]


@pytest.fixture(scope="module", params=["lite-2.5.1", "milvus-2.3.5"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _report(request.param, tmp_path_factory)


def _by_status(report: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for scenario in report["scenarios"]:
        found.setdefault(scenario["status"], set()).add(scenario["id"])
    return found


def test_nothing_errors_or_fails_and_the_reference_conforms(report: dict[str, Any]) -> None:
    statuses = _by_status(report)
    assert not statuses.get("errored"), [s for s in report["scenarios"] if s["status"] == "errored"]
    assert not statuses.get("failed"), [s for s in report["scenarios"] if s["status"] == "failed"]
    assert report["verdict"] == "CONFORMS"
    assert "good-filtered-lookup-does-not-retry" in statuses["passed"]  # its dense example, at least
    assert statuses["passed"] >= DENSE_ENGINE_CHECKS


def test_lite_2_5_1_serves_every_question_hybrid_included(tmp_path_factory: pytest.TempPathFactory) -> None:
    report = _report("lite-2.5.1", tmp_path_factory)
    assert report["environment"]["milvus"]["version"] == "milvus_lite-2.5.1"
    statuses = _by_status(report)
    assert set(statuses) == {"passed"}, statuses  # no n/a, and no expectation applies to the C++ core
    assert statuses["passed"] >= HYBRID_ONLY


def test_milvus_2_3_makes_what_needs_bm25_not_applicable_with_the_engines_reason(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    report = _report("milvus-2.3.5", tmp_path_factory)
    assert report["environment"]["milvus"]["version"].startswith("v2.3.5")
    scenarios = {s["id"]: s for s in report["scenarios"]}
    not_applicable = _by_status(report)["not_applicable"]
    assert not_applicable >= HYBRID_ONLY
    for scenario_id in HYBRID_ONLY:
        message = scenarios[scenario_id]["message"]
        assert "mode 'hybrid' cannot run on this engine, which has no BM25" in message
    assert {"dense-mode-labels-hits-as-dense", "mode-dense-still-callable"} <= _by_status(report)["passed"]
    engine_checks = {s["id"] for s in report["scenarios"] if s["engine_check"]}
    assert engine_checks - DENSE_ENGINE_CHECKS <= not_applicable
    for scenario_id in engine_checks - DENSE_ENGINE_CHECKS:
        assert "has no" in scenarios[scenario_id]["message"], scenarios[scenario_id]


def test_a_second_milvus_2_3_is_refused_at_once_naming_the_port(tmp_path: Path) -> None:
    import contextlib
    import socket

    from conformance.engines import EngineUnavailableError
    from conformance.engines._local import LOCAL_ENGINES, LocalServer

    spec = LOCAL_ENGINES["milvus-2.3.5"]
    (port,) = spec.fixed_ports
    holder = socket.socket()
    try:
        # If someone on this machine holds it already, the refusal below is the same.
        with contextlib.suppress(OSError):
            holder.bind(("127.0.0.1", port))
        with pytest.raises(EngineUnavailableError, match=rf"always binds port {port}.*one can run at a time"):
            LocalServer(spec, tmp_path / "no-venv-needed")  # refused before anything starts
    finally:
        holder.close()
