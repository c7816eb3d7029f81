"""Every view of one run gives report.json's numbers (issue 55 item 2).

One report holds every outcome: passes, a failure of the scenario's own rule, a failure of another
requirement's rule (it counts there and stops its own scenario), a requirement every scenario of which
was stopped (BLOCKED), an error, not applicable and not judged scenarios, a known divergence, a skip,
and engine checks. Then the terminal table, JUnit, the site's index (HTML and Markdown), every
requirement page and the badge are read back and compared with ``report.json`` as written: the
numbers come from the file, never from the functions that drew the views.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.reporting import Environment, ScenarioResult, build_report, format_table, junit_xml
from conformance.site._gherkin import read_features
from conformance.site._site import build_site
from conformance.spec._paths import features_dir

ENV = Environment(
    kit_version="0",
    spec_sha256=None,
    adapter={"name": "every-outcome", "capabilities": ["labels", "quality", "post_process", "search"]},
    python="3",
    platform="test",
)
R3 = "single-normalizer"


def _results() -> list[ScenarioResult]:
    """Real scenario ids of the feature files, each given an outcome (see the module docstring)."""
    out = []
    for feature in read_features(features_dir()):
        for i, s in enumerate(f for f in feature.scenarios if f.id):
            status, broken = "passed", ()
            rid = feature.requirement_id
            if rid == "score-labels":  # R1: in part; one scenario stopped by an R3 failure
                status = ("failed", "passed", "not_applicable", "not_applicable")[i % 4]
                broken = (R3,) if status == "failed" else ()
            elif rid == R3 and i == 0:
                status, broken = "failed", (R3,)
            elif rid == "rank-order":
                status = ("errored", "xfailed", "skipped", "passed")[i % 4]
            elif rid == "quality-gates" and i == 1:
                status = "not_judged"
            elif rid == "no-l2-overwrite":  # every scenario stopped: BLOCKED
                status, broken = "failed", (R3,)
            out.append(
                ScenarioResult(
                    id=s.id or "",
                    requirement=feature.title,
                    requirement_id=rid,
                    name=s.name,
                    status=status,  # type: ignore[arg-type]
                    message=f"{status} message" if status != "passed" else None,
                    derived="derived" in s.tags,
                    engine_check=feature.engine,
                    spec_hash=s.spec_hash,
                    broken_requirements=broken,
                )
            )
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("every-outcome")
    report = build_report(_results(), ENV, reason="Milvus was lost (planted)")
    (root / "report.json").write_text(report.model_dump_json(indent=1))
    site = build_site([root / "report.json"], root / "site")
    return {
        "json": json.loads((root / "report.json").read_text()),
        "table": format_table(report),
        "junit": ET.fromstring(junit_xml(report).split("\n", 1)[1]),
        "site": site.root,
    }


def _judged_words(row: dict[str, Any]) -> str:
    s = row["summary"]
    judged = s["passed"] + s["failed"] + s["errored"] + s["xfailed"]
    if row["verdict"] in ("CONFORMS", "DOES NOT CONFORM") and judged < s["total"]:
        return f"{row['verdict']} ({judged} of {s['total']} judged"
    return row["verdict"]


def test_the_report_has_every_outcome(run: dict[str, Any]) -> None:
    data = run["json"]
    statuses = {s["status"] for s in data["scenarios"]}
    assert statuses == {"passed", "failed", "errored", "not_judged", "not_applicable", "xfailed", "skipped"}
    verdicts = {r["verdict"] for r in data["requirements"]}
    assert {"BLOCKED", "DOES NOT CONFORM", "CONFORMS", "NOT JUDGED"} <= verdicts
    assert any(r["summary"]["blocked"] and r["verdict"] == "CONFORMS" for r in data["requirements"])


def test_the_terminal_table_gives_report_json_s_counts(run: dict[str, Any]) -> None:
    data, lines = run["json"], run["table"].splitlines()
    header = re.split(r"\s{2,}", lines[0])
    assert header[1:-1] == ["passed", "failed", "errored", "not judged", "n/a"]
    rows = [re.split(r"\s{2,}", line) for line in lines[2 : 2 + len(data["requirements"])]]
    keys = ("passed", "failed", "errored", "not_judged", "not_applicable")
    for cells, row in zip(rows, data["requirements"], strict=True):
        assert cells[0].endswith(row["requirement"])
        assert [int(c) for c in cells[1:6]] == [row["summary"][k] for k in keys]
        assert cells[6].startswith(_judged_words(row))
    total = re.split(r"\s{2,}", lines[3 + len(data["requirements"])])
    assert total[0] == "TOTAL"
    assert [int(c) for c in total[1:6]] == [data["summary"][k] for k in keys]
    [line] = [x for x in lines if x.startswith("TOTAL ") and "scenarios:" in x]
    n, *parts = (int(m) for m in re.findall(r"(?:^TOTAL |; |: )(\d+)", line))
    assert n == data["summary"]["total"] == sum(parts)  # spec transcriptions + derived + engine checks


def test_junit_gives_report_json_s_counts(run: dict[str, Any]) -> None:
    data, suites = run["json"], {s.get("name"): s for s in run["junit"].iter("testsuite")}
    for row in data["requirements"]:
        s, suite = row["summary"], suites[row["requirement_id"]]
        skipped = s["not_judged"] + s["not_applicable"] + s["xfailed"] + s["skipped"]
        counts = [int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")]
        assert counts == [s["total"], s["failed"], s["errored"], skipped], row["requirement_id"]
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["verdict"].startswith(_judged_words(row))
    props = {p.get("name"): p.get("value") for p in suites["conformance"].iter("property")}
    for key in ("total", "passed", "failed", "errored", "not_judged", "not_applicable", "xfailed", "skipped"):
        assert int(props[f"scenarios_{key}"]) == data["summary"][key]
    assert int(props["spec_scenarios_judged"]) == data["spec_scenarios"]["judged"]


def test_the_site_index_and_every_requirement_page_give_report_json_s_counts(run: dict[str, Any]) -> None:
    data, site = run["json"], Path(run["site"])
    index_md, index_html = (site / "README.md").read_text(), (site / "index.html").read_text()
    marks = {
        "passed": "✅ passed",
        "failed": "❌ FAILED",
        "errored": "❌ ERRORED",
        "not_judged": "⚠️ NOT JUDGED",
        "not_applicable": "n/a",
        "xfailed": "⚠️ xfail",
        "skipped": "skipped",
        "blocked": "⛔ stopped (breaks",
    }
    for row in data["requirements"]:
        s = row["summary"]
        counts = f"{s['passed']}/{s['total']} passed"
        [line] = [x for x in index_md.splitlines() if f"{row['requirement']}" in x and "| " in x]
        assert counts in line
        assert _judged_words(row) in line
        assert counts in index_html
        page = (site / f"{row['requirement_id']}.md").read_text()
        results = page.split("## Results", 1)[1].split("## Scenarios", 1)[0]
        cells = [x.split(" | ")[1].rstrip(" |") for x in results.splitlines() if x.startswith("| ")][1:]
        assert cells[0].split("<br>")[1].startswith(counts)  # the verdict row, as the index gives it
        assert _judged_words(row) in cells[0]
        found = {k: sum(c.startswith(m) for c in cells[1:]) for k, m in marks.items()}
        assert found == {k: s[k] for k in marks}, row["requirement_id"]


def test_the_badge_gives_the_spec_tally(run: dict[str, Any]) -> None:
    data = run["json"]
    [badge] = (Path(run["site"]) / "badges").glob("*.json")
    tally = data["spec_scenarios"]
    assert json.loads(badge.read_text())["message"].startswith(f"{tally['passed']}/{tally['total']} passed")
