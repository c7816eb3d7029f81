"""The report of a conformance run: its model (``report.json``) and the JUnit view of it. The pytest
plugin object that collects the scenarios' outcomes into it lives beside them, in ``_outcomes`` (not
imported here: it needs the judge, which needs this package's model).

Not to be confused with the engines wing's recording proxy (``conformance.engines``), which records the
calls an implementation makes to Milvus: this package records verdicts, not engine traffic.
"""

from ._junit import junit_xml, write_junit
from ._model import (
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
