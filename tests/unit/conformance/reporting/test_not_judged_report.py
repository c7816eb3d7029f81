"""The status of scenarios cut off by a lost engine (NOT JUDGED) in the report, the table, JUnit, the site."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from conformance.reporting import Environment, Report, ScenarioResult, build_report, format_table, junit_xml
from conformance.site import badge, build_site
from conformance.site._pages import counts_text, status_text

ENV = Environment(kit_version="0", spec_sha256=None, python="3.11", platform="linux")
REASON = "Milvus was lost 4.2 s into the run (2026-12-01 10:00:00 UTC), during scenario s3 (engine: uri)"
RECORDED = Path(__file__).resolve().parents[3] / "data" / "recorded" / "lite-3.2.2.json"


def scenario(id_: str, req: str, status: str, message: str | None = None) -> ScenarioResult:
    return ScenarioResult(
        id=id_,
        requirement=req.title(),
        requirement_id=req,
        name=id_,
        status=status,  # type: ignore[arg-type]
        message=message,
    )


def lost_run(*extra: ScenarioResult) -> Report:
    results = [
        scenario("s1", "search", "passed"),
        scenario("s2", "search", "not_judged", REASON),
        scenario("s3", "lookup", "not_judged", REASON),
        scenario("s4", "labels", "passed"),
        *extra,
    ]
    return build_report(results, ENV, reason=REASON)


def test_a_run_with_a_scenario_not_judged_is_not_judged_and_keeps_what_was_judged() -> None:
    report = lost_run()
    assert report.verdict == "NOT JUDGED"
    assert report.reason == REASON
    assert (report.summary.passed, report.summary.not_judged, report.summary.total) == (2, 2, 4)
    verdicts = {row.requirement_id: row.verdict for row in report.requirements}
    # Cut off entirely, or partly: neither is shown to conform. Untouched by the loss: judged as usual.
    assert verdicts == {"search": "NOT JUDGED", "lookup": "NOT JUDGED", "labels": "CONFORMS"}
    assert {s.id: s.status for s in report.scenarios}["s1"] == "passed"


def test_a_failure_judged_before_the_loss_still_counts_where_it_lives() -> None:
    report = lost_run(scenario("s0", "labels", "failed", "spec requires 'hybrid'"))
    assert report.verdict == "NOT JUDGED"  # the run is incomplete, whatever failed
    verdicts = {row.requirement_id: row.verdict for row in report.requirements}
    assert verdicts["labels"] == "DOES NOT CONFORM"
    assert verdicts["search"] == "NOT JUDGED"


def test_examples_fold_a_real_failure_first_then_not_judged() -> None:
    cut = build_report(
        [scenario("o", "search", "passed"), scenario("o", "search", "not_judged", REASON)], ENV
    )
    assert [(s.status, s.examples) for s in cut.scenarios] == [("not_judged", 2)]
    failed = build_report(
        [scenario("o", "search", "not_judged", REASON), scenario("o", "search", "failed")], ENV
    )
    assert [s.status for s in failed.scenarios] == ["failed"]


def test_the_table_has_a_not_judged_column_and_one_line_with_the_reason() -> None:
    table = format_table(lost_run())
    header, _, *rows = table.splitlines()
    columns = header.removeprefix("requirement (counts: scenarios)").split()
    assert columns[:6] == ["passed", "failed", "errored", "not", "judged", "n/a"]
    total = next(line for line in rows if line.startswith("TOTAL"))
    assert total.split() == ["TOTAL", "2", "0", "0", "2", "0", "NOT", "JUDGED"]
    assert [line for line in rows if "NOT JUDGED:" in line] == [f"NOT JUDGED: {REASON}"]
    assert "s2" not in table  # one line for all of them, not one per scenario
    plain = format_table(build_report([scenario("s1", "search", "passed")], ENV))
    assert "not judged" not in plain  # a run that lost nothing looks as it always did


def test_junit_skips_the_cut_off_scenarios_and_adds_one_error_with_the_reason() -> None:
    root = ET.fromstring(junit_xml(lost_run()))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"search", "lookup", "labels", "conformance"}
    skipped = suites["lookup"].find("testcase/skipped")
    assert skipped is not None
    assert skipped.get("message") == f"NOT_JUDGED: {REASON}"
    assert suites["search"].get("tests") == "2"
    assert (suites["search"].get("skipped"), suites["search"].get("errors")) == ("1", "0")
    error = suites["conformance"].find("testcase/error")
    assert error is not None
    assert (error.get("message"), error.text) == ("NOT JUDGED", REASON)


def test_the_site_shows_the_status_and_the_reason(tmp_path: Path) -> None:
    data = json.loads(RECORDED.read_text())
    cut = data["scenarios"][0]
    cut.update(status="not_judged", message=REASON)
    data.update(verdict="NOT JUDGED", reason=REASON)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "site"
    build_site([path], out)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "is NOT JUDGED: Milvus was lost 4.2 s into the run" in index
    assert "is NOT JUDGED**: Milvus was lost 4.2 s into the run" in (out / "README.md").read_text()
    page = (out / f"{cut['requirement_id']}.html").read_text(encoding="utf-8")
    assert '<span class="status s-not_judged">NOT JUDGED</span>' in page
    assert REASON in page


def test_counts_and_badge_read_not_judged() -> None:
    report = lost_run()
    assert status_text(report.scenarios[1]) == "NOT JUDGED"
    assert counts_text(report.summary) == "2/4 passed, 2 not judged"
    assert badge(report)["color"] == "lightgrey"
    failed = lost_run(scenario("s0", "labels", "failed"))
    assert badge(failed)["color"] == "red"
