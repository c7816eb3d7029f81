"""A shields.io endpoint badge per implementation: ``conformance 12/12``.

https://shields.io/badges/endpoint-badge reads this JSON from any URL, so a repository can publish the
file (e.g. on GitHub Pages) and show a live badge without shields.io knowing about the kit.
"""

from __future__ import annotations

from typing import Any

from ..reporting import Report

__all__ = ["badge"]


def badge(report: Report) -> dict[str, Any]:
    """The endpoint JSON for one report: spec scenarios passed/total, coloured by the outcome.

    Red when any scenario failed or errored (derived scenarios and engine checks count too: the run did
    not conform); green when every spec scenario passed; yellow otherwise, e.g. when the implementation
    declares fewer capabilities and some spec scenarios were not applicable; grey when the run could
    not judge (NOT JUDGED, e.g. its engine was lost) and nothing failed.
    """
    tally, summary = report.spec_scenarios, report.summary
    if summary.failed or summary.errored:
        color = "red"
    elif report.verdict == "NOT JUDGED":
        color = "lightgrey"
    elif tally.total and tally.passed == tally.total:
        color = "brightgreen"
    else:
        color = "yellow"
    message = f"{tally.passed}/{tally.total}"
    return {"schemaVersion": 1, "label": "conformance", "message": message, "color": color}
