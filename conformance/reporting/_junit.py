"""JUnit XML from a report: one test suite per requirement, a failure counted where its rule lives.

CI systems show JUnit per suite. A scenario that failed under another requirement than its own (the
judge checks every reply against the whole spec) appears as a failure in the suite of each requirement
it broke, as the table counts it; its own suite names it in the property ``stopped_by`` (the table's
"1 stopped by R3") instead of a second test case, so each suite's counts are its row's in the table
and ``report.json``, and a run whose failures each break one requirement has one test case per scenario.

One more suite, ``conformance``, says what the run judged in its properties (the verdict with its
words, the spec scenarios judged of the spec's, the requirements judged, blocked and not judged, by
number): the same counts as the table and ``report.json``. It has no test case, except in a run that
could not judge: then its one test case is the error that says why (a run that stopped before its
first scenario has only that suite). Each requirement's suite carries its number and verdict.

Every text and attribute passes through ``xml_safe_text``: the file stays XML 1.0 whatever an
implementation wrote (a colour code in its stderr is shown as ``\\x1b[31m``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from ..boundary._atomic import write_atomically
from ..boundary._visible import xml_safe_text
from ._report import Report, ScenarioResult, broken_requirements
from ._scope import broken_outside_spec, requirement_number, requirement_verdict_text

__all__ = ["junit_xml", "write_junit"]

_SKIPPED = ("not_judged", "not_applicable", "skipped", "xfailed")


def junit_xml(report: Report) -> str:
    """The report as a JUnit ``<testsuites>`` document (NOT JUDGED and INTERRUPTED add one error)."""
    root = ET.Element("testsuites", name="rag-retrieval-quality-score")
    for row in report.requirements:
        number = row.number or requirement_number(row.requirement_id)
        stopped = [
            s.id
            for s in report.scenarios
            if s.requirement_id == row.requirement_id
            and s.status == "failed"
            and row.requirement_id not in broken_requirements(s)
        ]
        suite = _suite(
            root,
            row.requirement_id,
            {
                "requirement": row.requirement,
                "number": number,
                "verdict": requirement_verdict_text(row),
                "stopped_by": "; ".join(
                    f"{i} (breaks {', '.join(broken_requirements(s))})"
                    for i in stopped
                    for s in report.scenarios
                    if s.id == i
                )
                or None,
            },
        )
        for scenario in report.scenarios:
            counted_here = row.requirement_id in broken_requirements(scenario)
            if counted_here or (scenario.requirement_id == row.requirement_id and scenario.id not in stopped):
                _case(suite, row.requirement_id, scenario, counted_here)
    suite = _suite(root, "conformance", _judged(report))
    _count(suite, [])
    if report.judged_nothing:  # NOT JUDGED or INTERRUPTED: one error says why, so no CI reads it as green
        case = ET.SubElement(suite, "testcase", classname="conformance", name="judge the implementation")
        ET.SubElement(case, "error", message=report.verdict).text = report.reason or "the kit could not judge"
        _count(suite, [("tests", 1), ("errors", 1)])
    return _text(root)


def _judged(report: Report) -> dict[str, str | None]:
    """The ``conformance`` suite's properties: what the run judged, as the table says it."""
    tally = report.judged_spec()
    properties: dict[str, str | None] = {
        "verdict": report.verdict,
        "verdict_text": report.described_verdict(),
        "spec_scenarios_total": str(tally.total),
        "spec_scenarios_judged": str(tally.judged),
        "spec_scenarios_judged_in_part": str(tally.partly_judged),
        "spec_scenarios_passed": str(tally.passed),
        # Every scenario once, by status: report.json's summary and the table's TOTAL row.
        **{f"scenarios_{k}": str(v) for k, v in report.summary.model_dump().items() if k != "blocked"},
    }
    derived = [s for s in report.scenarios if not s.spec_hash and not s.engine_check]
    for status in ("failed", "errored"):
        properties[f"derived_scenarios_{status}"] = str(sum(s.status == status for s in derived))
    properties["broken_outside_spec"] = "; ".join(broken_outside_spec(report.scenarios)) or None
    if report.scope is not None:
        properties["requirements_judged"] = " ".join(report.scope.judged)
        properties["requirements_blocked"] = " ".join(report.scope.blocked)
        properties["requirements_not_judged"] = " ".join(report.scope.not_judged)
    return properties


def write_junit(report: Report, path: str | Path) -> Path:
    """Write :func:`junit_xml` to ``path`` (atomically: an earlier file survives a failure) and return it."""
    return write_atomically(path, junit_xml(report))


def _suite(root: ET.Element, name: str, properties: dict[str, str | None] | None = None) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", name=name)
    shown = {key: value for key, value in (properties or {}).items() if value is not None}
    if shown:
        props = ET.SubElement(suite, "properties")
        for key, value in shown.items():
            ET.SubElement(props, "property", name=key, value=value)
    return suite


def _case(suite: ET.Element, requirement: str, scenario: ScenarioResult, counted_here: bool) -> None:
    case = ET.SubElement(
        suite, "testcase", classname=requirement, name=scenario.id, time=f"{scenario.duration_s:.3f}"
    )
    message = scenario.message or ""
    if scenario.status == "failed" and counted_here:
        breaks = ", ".join(broken_requirements(scenario))
        ET.SubElement(case, "failure", message=f"breaks {breaks}").text = message
    elif scenario.status == "errored":
        ET.SubElement(case, "error", message="ERRORED").text = message
    elif scenario.status in _SKIPPED:
        ET.SubElement(case, "skipped", message=f"{scenario.status.upper()}: {message}")
    for note in scenario.notes:
        ET.SubElement(case, "system-out").text = note
    _count(suite, [("tests", 1), *([(_kind(case), 1)] if _kind(case) else [])])


def _kind(case: ET.Element) -> str | None:
    for child, counter in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        if case.find(child) is not None:
            return counter
    return None


def _count(suite: ET.Element, increments: Iterable[tuple[str, int]]) -> None:
    for key, n in increments:
        suite.set(key, str(int(suite.get(key, "0")) + n))
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, suite.get(key, "0"))


def _text(root: ET.Element) -> str:
    # An implementation's words (its messages, a stdio program's stderr, its ids) may hold ESC or other
    # bytes XML 1.0 forbids; one of them makes the whole file unreadable to a CI. Shown as escapes.
    for element in root.iter():
        if element.text:
            element.text = xml_safe_text(element.text)
        for key, value in element.attrib.items():
            element.set(key, xml_safe_text(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
