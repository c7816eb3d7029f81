"""The terminal's view of a report: the per-requirement table, the counts and the verdict's line."""

from __future__ import annotations

from ._report import Report, RequirementRow, Summary, broken_requirements
from ._scope import derived_line, requirement_number, requirement_verdict_text, total_line
from ._shorten import shorten_middle

__all__ = ["format_table"]

_FAILURE_LINE_CHARS = 300  # the table's failure lines: one line each; report.json keeps the whole text


def format_table(report: Report) -> str:
    """The per-requirement table printed at the end of a run, and the verdict with what it judged.

    Every count is of scenarios (an outline's examples and a property's generated examples are one
    scenario); a failure counts under the requirement it breaks. A "not judged" column appears only in
    a run that has such scenarios; they get one line together, the report's reason, instead of one
    line each.
    """
    not_judged = bool(report.summary.not_judged)
    header = (
        "requirement (counts: scenarios)",
        "passed",
        "failed",
        "errored",
        *(("not judged",) * not_judged),
        "n/a",
        "verdict",
    )

    def cells(name: str, summary: Summary, verdict: str) -> tuple[str, ...]:
        counts: tuple[int, ...] = (summary.passed, summary.failed, summary.errored)
        counts += (summary.not_judged,) * not_judged + (summary.not_applicable,)
        return (name, *map(str, counts), verdict)

    def name(row: RequirementRow) -> str:
        number = row.number or requirement_number(row.requirement_id)
        return f"{number} {row.requirement}" if number else row.requirement

    rows = [cells(name(row), row.summary, requirement_verdict_text(row)) for row in report.requirements]
    total = cells("TOTAL", report.summary, report.verdict)
    widths = [max(len(r[i]) for r in (header, *rows, total)) for i in range(len(header))]
    rule = "  ".join("-" * w for w in widths)

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()

    lines = [line(header), rule, *map(line, rows), rule, line(total)]
    tally = report.judged_spec()
    if tally.total and report.interruption is None:  # an interrupted run's tally counts what finished only
        part = f" ({tally.partly_judged} more in part)" if tally.partly_judged else ""
        lines.append(
            f"spec scenarios: {tally.judged} of {tally.total} judged{part}, {tally.passed} passed"
            + (f", {tally.failed} failed" if tally.failed else "")
            + (f", {tally.not_selected} not selected (-k)" if tally.not_selected else "")
        )
    derived = derived_line(report.scenarios) if report.interruption is None else None
    if derived:
        lines.append(derived)
    total = total_line(report.scenarios)
    if total:
        lines.append(total)
    if any(row.summary.blocked for row in report.requirements) or _counted_elsewhere(report):
        lines.append(
            "a failure counts under each requirement whose rule it broke, not under its own scenario's "
            "requirement (that row says how many it stopped), so the rows need not add up to TOTAL"
        )
    lines.append(f"verdict: {report.described_verdict()}")
    failures = [r for r in report.scenarios if r.status in ("failed", "errored")]
    for r in failures:
        labels = [f"{requirement_number(b) or ''} {b}".strip() for b in broken_requirements(r)]
        # The rule whose check failed, by its id (dense-formula), beside the requirement it belongs to.
        rules = f"; rule {', '.join(r.rules)}" if r.rules else ""
        breaks = f" [breaks {', '.join(labels)}{rules}]" if r.status == "failed" else ""
        lines.append(f"{r.status.upper()} {r.id}{breaks}: {_first_line(r.message)}".rstrip())
    if report.interruption is not None and report.reason:
        lines.append(f"INTERRUPTED: {report.reason}")
    elif not_judged and report.reason:
        lines.append(f"NOT JUDGED: {report.reason}")
    return "\n".join(lines)


def _counted_elsewhere(report: Report) -> bool:
    return any(
        r.status == "failed" and set(broken_requirements(r)) != {r.requirement_id} for r in report.scenarios
    )


def _first_line(message: str | None) -> str:
    """One line of a failure message: its first line, its middle left out where it is long (its end
    says what was expected and what came); the report keeps all of it."""
    text = (message or "").strip()
    first, _, rest = text.partition("\n")
    return shorten_middle(first, _FAILURE_LINE_CHARS) + (" […]" if rest.strip() else "")
