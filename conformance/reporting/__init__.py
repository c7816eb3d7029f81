"""The report of a conformance run.

- ``_report``: the report's model (``report.json``): scenario results, per-requirement rows, verdicts.
- ``_redacted``: a report as the kit writes it: no credential and no control character in any text.
- ``_replay``: the command that replays a run's broken property scenarios, as printed.
- ``_scope``: what a run judged (the spec's scenarios, the requirements by number) and the verdict
  said with it, one set of counts for every view.
- ``_junit``: the JUnit view of a report; ``_table``: the terminal's (the per-requirement table);
  ``_shorten``: a failure's text shortened in the middle, never at its end (where expected and got are).
- ``_classify``: a pytest phase's status and message, as the report states them.
- ``_outcomes``: the pytest plugin object that collects the scenarios' outcomes (and their notes) into
  a report and writes it; not imported here, so importing the report model stays free of pytest.
- ``_diff``: two reports compared by scenario id (``rag-conformance diff`` prints it, the upgrade
  check reads it).
- ``_writing``: where the report goes: the report directory checked before a run starts, and
  ``report.json`` with ``junit.xml`` written as a pair, atomically (an earlier pair survives a full disk).

Not to be confused with the engines wing's recording proxy (``conformance.engines``), which records the
calls an implementation makes to Milvus: this package records verdicts, not engine traffic.
"""

from ._junit import junit_xml, write_junit
from ._report import (
    NOT_APPLICABLE_PREFIX,
    NOT_JUDGED_PREFIX,
    REPORT_VERSION,
    UNJUDGED_VERDICTS,
    Environment,
    Interruption,
    Report,
    RequirementRow,
    ScenarioResult,
    Scope,
    SpecTally,
    Status,
    Summary,
    Verdict,
    broken_requirements,
    build_report,
    interrupted_report,
    not_judged_report,
    spec_tally,
)
from ._scope import requirement_number, requirement_verdict_text, verdict_text
from ._table import format_table

__all__ = [
    "NOT_APPLICABLE_PREFIX",
    "NOT_JUDGED_PREFIX",
    "REPORT_VERSION",
    "UNJUDGED_VERDICTS",
    "Environment",
    "Interruption",
    "Report",
    "RequirementRow",
    "ScenarioResult",
    "Scope",
    "SpecTally",
    "Status",
    "Summary",
    "Verdict",
    "broken_requirements",
    "build_report",
    "format_table",
    "interrupted_report",
    "junit_xml",
    "not_judged_report",
    "requirement_number",
    "requirement_verdict_text",
    "spec_tally",
    "verdict_text",
    "write_junit",
]
