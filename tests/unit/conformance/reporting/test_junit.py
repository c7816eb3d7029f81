"""JUnit from a report: a failure is counted in the suite of the requirement whose rule it broke."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.reporting import Environment, Report, ScenarioResult, Summary, build_report, junit_xml

ENV = Environment(kit_version="0", spec_sha256=None, python="3.11", platform="linux")


def scenario(id_: str, req: str, status: str, broken: tuple[str, ...] = (), message: str | None = None):
    return ScenarioResult(
        id=id_,
        requirement=req.title(),
        requirement_id=req,
        name=id_,
        status=status,  # type: ignore[arg-type]
        message=message,
        broken_requirements=broken,
    )


def suites(report: Report) -> dict[str, ET.Element]:
    root = ET.fromstring(junit_xml(report))
    return {s.get("name"): s for s in root.iter("testsuite")}


def test_a_failure_counts_where_its_rule_lives() -> None:
    report = build_report(
        [
            scenario("caps", "rank-order", "failed", ("single-normalizer",), "dense-formula broken"),
            scenario("order", "rank-order", "passed"),
            scenario("formula", "single-normalizer", "passed"),
        ],
        ENV,
    )
    by_name = suites(report)
    normalizer, order = by_name["single-normalizer"], by_name["rank-order"]
    assert (normalizer.get("tests"), normalizer.get("failures")) == ("2", "1")
    # Its own suite counts it as its table row does (stopped, not a test case of its own): one test case
    # per scenario, each suite's counts its row's.
    assert (order.get("tests"), order.get("failures"), order.get("skipped")) == ("1", "0", "0")
    stopped = {p.get("name"): p.get("value") for p in order.iter("property")}["stopped_by"]
    assert stopped == "caps (breaks single-normalizer)"
    assert sum(int(s.get("tests", "0")) for s in by_name.values()) == len(report.scenarios)
    failure = normalizer.find("testcase[@name='caps']/failure")
    assert failure is not None
    assert failure.get("message") == "breaks single-normalizer"
    assert "dense-formula" in (failure.text or "")
    rows = {r.requirement_id: r for r in report.requirements}
    assert (rows["single-normalizer"].summary.failed, rows["rank-order"].summary.failed) == (1, 0)
    assert rows["single-normalizer"].verdict == "DOES NOT CONFORM"


def test_errors_and_not_applicable_stay_in_their_own_suite() -> None:
    report = build_report(
        [
            scenario("a", "quality-gates", "errored", message="crash"),
            scenario("b", "quality-gates", "not_applicable"),
        ],
        ENV,
    )
    gates = suites(report)["quality-gates"]
    assert (gates.get("errors"), gates.get("skipped")) == ("1", "1")


def test_not_judged_is_one_error() -> None:
    report = Report(
        summary=Summary(),
        spec_scenarios={"passed": 0, "total": 0},
        verdict="NOT JUDGED",
        requirements=(),
        scenarios=(),
        environment=ENV,
        reason="adapter 'nosuch:X' could not be imported",
    )
    only = suites(report)["conformance"]
    assert (only.get("tests"), only.get("errors")) == ("1", "1")
    assert "nosuch" in ET.tostring(only, encoding="unicode")
