"""The report of a conformance run.

- ``_report``: the report's model (``report.json``): scenario results, per-requirement rows, verdicts.
- ``_junit``: the JUnit view of a report.
- ``_outcomes``: the pytest plugin object that collects the scenarios' outcomes (and their notes) into
  a report and writes it; not imported here, so importing the report model stays free of pytest.

Not to be confused with the engines wing's recording proxy (``conformance.engines``), which records the
calls an implementation makes to Milvus: this package records verdicts, not engine traffic.
"""

from ._junit import junit_xml, write_junit
from ._report import (
    NOT_APPLICABLE_PREFIX,
    NOT_JUDGED_PREFIX,
    Environment,
    Report,
    RequirementRow,
    ScenarioResult,
    SpecTally,
    Status,
    Summary,
    Verdict,
    broken_requirements,
    build_report,
    format_table,
    not_judged_report,
)

__all__ = [
    "NOT_APPLICABLE_PREFIX",
    "NOT_JUDGED_PREFIX",
    "Environment",
    "Report",
    "RequirementRow",
    "ScenarioResult",
    "SpecTally",
    "Status",
    "Summary",
    "Verdict",
    "broken_requirements",
    "build_report",
    "format_table",
    "junit_xml",
    "not_judged_report",
    "write_junit",
]
