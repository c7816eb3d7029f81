"""A verdict says what it judged: the spec scenarios and requirements a run reached, in every view."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.reporting import (
    REPORT_VERSION,
    Environment,
    Report,
    ScenarioResult,
    build_report,
    format_table,
    junit_xml,
)
from conformance.reporting._scope import requirement_verdict_text

PURE = ["labels", "post_process", "quality"]
ENV = Environment(
    kit_version="0",
    spec_sha256=None,
    python="3.11",
    platform="linux",
    adapter={"name": "java", "version": "1", "language": "java", "capabilities": PURE},
)
ORDER = ["score-labels", "no-l2-overwrite", "single-normalizer", "dense-distance-gates"]


def scenario(
    id_: str,
    req: str,
    status: str,
    *,
    spec: str | None = None,
    needs: tuple[str, ...] = (),
    broken: tuple[str, ...] = (),
) -> ScenarioResult:
    return ScenarioResult(
        id=id_,
        requirement=req,
        requirement_id=req,
        name=id_,
        status=status,  # type: ignore[arg-type]
        spec_hash=spec,
        needs=needs,
        broken_requirements=broken,
    )


def pure_run() -> list[ScenarioResult]:
    """Pure capabilities: R1's label scenario judged, its search one not; R2 needs search or lookup; R7's
    spec scenario is transcribed three times and only its post-process transcription runs."""
    return [
        scenario("aliases", "score-labels", "passed", spec="s1", needs=("labels",)),
        scenario("dense-labels", "score-labels", "not_applicable", spec="s2", needs=("search",)),
        scenario("no-l2", "no-l2-overwrite", "not_applicable", spec="s3", needs=("search",)),
        scenario("no-l2-lookup", "no-l2-overwrite", "not_applicable", spec="s3", needs=("lookup",)),
        scenario("dense-formula", "single-normalizer", "passed", spec="s4", needs=("quality",)),
        scenario("normalizer-property", "single-normalizer", "passed", needs=("quality",)),
        scenario("dd-label", "dense-distance-gates", "not_applicable", spec="s5", needs=("search",)),
        scenario("dd-label-post", "dense-distance-gates", "passed", spec="s5", needs=("post_process",)),
    ]


def test_conforms_on_part_of_the_spec_reads_as_partial_with_the_counts_and_what_is_missing() -> None:
    report = build_report(pure_run(), ENV, requirement_order=ORDER)
    tally = report.spec_scenarios
    assert (tally.total, tally.judged, tally.partly_judged, tally.passed, tally.not_judged) == (5, 2, 1, 2, 3)
    assert report.verdict == "CONFORMS"
    assert report.verdict_text == (
        "CONFORMS (pure capabilities: 2 of 5 spec scenarios judged, 1 more in part; "
        "R2 not judged: its scenarios need search, lookup)"
    )
    assert report.scope is not None
    assert report.scope.judged == ("R1", "R3", "R7")
    assert report.scope.not_judged == ("R2",)
    assert report.scope.missing_capabilities == ("search", "lookup")
    assert report.scope.complete is False
    assert [r.number for r in report.requirements] == ["R1", "R2", "R3", "R7"]
    table = format_table(report)
    assert f"verdict: {report.verdict_text}" in table.splitlines()
    assert "spec scenarios: 2 of 5 judged (1 more in part), 2 passed" in table
    assert "R1 score-labels" in table  # the number beside the requirement


def test_a_requirement_stopped_by_another_ones_failure_is_blocked_not_not_judged() -> None:
    results = [
        scenario("aliases", "score-labels", "passed", spec="s1"),
        scenario("dd-label-post", "dense-distance-gates", "failed", spec="s5", broken=("score-labels",)),
    ]
    report = build_report(results, ENV, requirement_order=ORDER)
    rows = {r.requirement_id: r for r in report.requirements}
    assert rows["dense-distance-gates"].verdict == "BLOCKED"
    assert rows["dense-distance-gates"].blocked_by == ("score-labels",)
    failed = next(s for s in report.scenarios if s.status == "failed")
    assert (failed.requirement_number, failed.broken_numbers) == ("R7", ("R1",))  # numbers beside ids
    assert requirement_verdict_text(rows["dense-distance-gates"]) == "BLOCKED (1 stopped by R1)"
    assert rows["score-labels"].verdict == "DOES NOT CONFORM"
    assert report.verdict == "DOES NOT CONFORM"
    assert "R7 blocked by R1 failures" in (report.verdict_text or "")
    assert "NOT JUDGED" not in format_table(report)  # the run-level words stay the run's
    assert report.scope is not None
    assert report.scope.blocked == ("R7",)


def test_a_complete_run_says_so() -> None:
    everything = {**ENV.adapter, "capabilities": ["labels", "lookup", "post_process", "quality", "search"]}
    environment = ENV.model_copy(update={"adapter": everything})
    results = [scenario("aliases", "score-labels", "passed", spec="s1")]
    report = build_report(results, environment, requirement_order=ORDER)
    assert report.verdict_text == "CONFORMS (every capability: 1 of 1 spec scenarios judged)"
    assert report.scope is not None
    assert report.scope.complete


def test_report_json_keeps_every_version_1_field_and_adds_the_scope(tmp_path: Path) -> None:
    report = build_report(pure_run(), ENV, requirement_order=ORDER)
    data = json.loads(report.model_dump_json())
    assert data["report_version"] == REPORT_VERSION == 2
    for field in ("summary", "spec_scenarios", "verdict", "requirements", "scenarios", "environment"):
        assert field in data
    assert {"passed", "total"} <= set(data["spec_scenarios"])
    assert data["requirements"][0]["number"] == "R1"
    assert data["scenarios"][0]["requirement_number"] == "R1"
    assert data["scenarios"][0]["needs"] == ["labels"]
    assert data["scope"]["not_judged"] == ["R2"]
    assert data["verdict_text"].startswith("CONFORMS (pure capabilities: ")


def test_a_version_1_report_reads_and_is_counted_the_same_way() -> None:
    report = build_report(pure_run(), ENV, requirement_order=ORDER)
    data = json.loads(report.model_dump_json())
    for key in ("report_version", "verdict_text", "scope", "notes"):
        data.pop(key)
    data["spec_scenarios"] = {"passed": 2, "total": 5}
    for row in data["requirements"]:
        row.pop("number"), row.pop("blocked_by")
    for result in data["scenarios"]:
        result.pop("requirement_number"), result.pop("needs"), result.pop("broken_numbers")
    old = Report.model_validate(data)
    assert old.report_version == 1
    assert old.judged_spec() == report.spec_scenarios
    # Without the needs of each scenario, it cannot say what R2 needs, only that it was not judged.
    assert old.described_verdict() == (
        "CONFORMS (pure capabilities: 2 of 5 spec scenarios judged, 1 more in part; R2 not judged)"
    )


def test_junit_carries_the_same_counts_and_the_requirement_numbers() -> None:
    report = build_report(pure_run(), ENV, requirement_order=ORDER)
    root = ET.fromstring(junit_xml(report))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    props = {p.get("name"): p.get("value") for p in suites["conformance"].iter("property")}
    assert props["verdict_text"] == report.verdict_text
    assert (props["spec_scenarios_judged"], props["spec_scenarios_total"]) == ("2", "5")
    assert props["spec_scenarios_judged_in_part"] == "1"
    assert props["requirements_not_judged"] == "R2"
    assert suites["conformance"].get("tests") == "0"  # no test case: CI counts stay the scenarios'
    r1 = {p.get("name"): p.get("value") for p in suites["score-labels"].iter("property")}
    assert (r1["number"], r1["verdict"]) == ("R1", "CONFORMS (1 of 2 judged)")  # judged in part says so
