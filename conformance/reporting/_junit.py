"""JUnit XML from a report: one test suite per requirement, a failure counted where its rule lives.

CI systems show JUnit per suite. A scenario that failed under another requirement than its own (the
judge checks every reply against the whole spec) appears as a failure in the suite of each requirement
it broke, and in its own suite as skipped with a pointer, so no suite claims a pass it did not see.

A run that could not judge has one more suite, ``conformance``, whose one test case is the error that
says why; a run that stopped before its first scenario has only that one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from ._report import Report, ScenarioResult, broken_requirements

__all__ = ["junit_xml", "write_junit"]

_SKIPPED = ("not_judged", "not_applicable", "skipped", "xfailed")


def junit_xml(report: Report) -> str:
    """The report as a JUnit ``<testsuites>`` document (the verdict NOT JUDGED adds one error)."""
    root = ET.Element("testsuites", name="rag-retrieval-quality-score")
    for row in report.requirements:
        suite = _suite(root, row.requirement_id, row.requirement)
        for scenario in report.scenarios:
            counted_here = row.requirement_id in broken_requirements(scenario)
            if scenario.requirement_id == row.requirement_id or counted_here:
                _case(suite, row.requirement_id, scenario, counted_here)
    if report.verdict == "NOT JUDGED":
        suite = _suite(root, "conformance")
        case = ET.SubElement(suite, "testcase", classname="conformance", name="judge the implementation")
        ET.SubElement(case, "error", message="NOT JUDGED").text = report.reason or "the kit could not judge"
        _count(suite, [("tests", 1), ("errors", 1)])
    return _text(root)


def write_junit(report: Report, path: str | Path) -> Path:
    """Write :func:`junit_xml` to ``path`` and return it."""
    out = Path(path)
    out.write_text(junit_xml(report), encoding="utf-8")
    return out


def _suite(root: ET.Element, name: str, title: str | None = None) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", name=name)
    if title:
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="requirement", value=title)
    return suite


def _case(suite: ET.Element, requirement: str, scenario: ScenarioResult, counted_here: bool) -> None:
    case = ET.SubElement(
        suite, "testcase", classname=requirement, name=scenario.id, time=f"{scenario.duration_s:.3f}"
    )
    message = scenario.message or ""
    if scenario.status == "failed" and counted_here:
        breaks = ", ".join(broken_requirements(scenario))
        ET.SubElement(case, "failure", message=f"breaks {breaks}").text = message
    elif scenario.status == "failed":
        breaks = ", ".join(broken_requirements(scenario))
        ET.SubElement(case, "skipped", message=f"failed under {breaks}; counted there").text = message
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
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
