"""A shields.io endpoint badge per implementation: ``conformance 12/12 passed``.

https://shields.io/badges/endpoint-badge reads this JSON from any URL, so a repository can publish the
file (e.g. on GitHub Pages) and show a live badge without shields.io knowing about the kit.
"""

from __future__ import annotations

from typing import Any

from ..reporting import Report

__all__ = ["badge", "badge_message"]


def badge_message(report: Report) -> str:
    """``12/12 passed``; ``7/12 passed, 5 not judged`` for a run on part of the spec (the spec scenarios
    judged in part count as not judged here: the verdict text says "1 more in part"); ``9/12 passed,
    3 failed``; ``12/12 passed, 4 derived failed`` when only derived scenarios failed; ``not judged`` for
    a run that judged nothing, ``interrupted`` for one stopped by a signal."""
    tally = report.judged_spec()
    if report.verdict == "INTERRUPTED":
        return "interrupted"
    if report.verdict == "NOT JUDGED" and not report.scenarios:
        return "not judged"
    parts = [f"{tally.passed}/{tally.total} passed"]
    if tally.failed:
        parts.append(f"{tally.failed} failed")
    if tally.not_judged:
        parts.append(f"{tally.not_judged} not judged")
    # What broke outside the spec's scenarios, counted apart, so a red badge never reads "12/12 passed"
    # alone (the verdict text names their requirements).
    for kind, engine_check in (("derived", False), ("engine checks", True)):
        for status in ("failed", "errored"):
            n = sum(
                1
                for s in report.scenarios
                if not s.spec_hash and s.engine_check is engine_check and s.status == status
            )
            if n:
                parts.append(f"{n} {kind} {status}")
    return ", ".join(parts)


def badge(report: Report) -> dict[str, Any]:
    """The endpoint JSON for one report: the spec scenarios passed of the spec's, and those not
    judged, coloured by the outcome (the counts the table and report.json give).

    Red when any scenario failed or errored (derived scenarios and engine checks count too: the run did
    not conform); green when every spec scenario was judged and passed; yellow otherwise, e.g. when the
    implementation declares fewer capabilities and some spec scenarios were not judged; grey when the
    run could not judge (NOT JUDGED, e.g. its engine was lost, or INTERRUPTED) and nothing failed.
    """
    tally, summary = report.judged_spec(), report.summary
    if summary.failed or summary.errored:
        color = "red"
    elif report.judged_nothing:
        color = "lightgrey"
    elif tally.total and tally.passed == tally.total:
        color = "brightgreen"
    else:
        color = "yellow"
    return {"schemaVersion": 1, "label": "conformance", "message": badge_message(report), "color": color}
