"""Results of a conformance run: per scenario, per requirement, the verdict, and where it ran.

Statuses:

- ``passed``: every example of the scenario passed.
- ``failed``: an assertion failed: the implementation answered, and the answer breaks the spec.
- ``errored``: the implementation crashed or gave an invalid reply, or the kit could not set it up.
- ``not_judged``: the scenario needs Milvus, and the engine was lost: the kit's own client could not
  reach it either. Says nothing about the implementation; the ``message`` says when and where.
- ``not_applicable``: the scenario needs a capability the implementation does not declare.
- ``xfailed``: a known, declared divergence that still diverges.
- ``skipped``: anything else pytest skipped, always with its reason.

A failure names the requirement whose rule broke (``broken_requirements``), which need not be the
requirement the scenario belongs to: every reply is checked against the whole spec, so a post-process
scenario of R4 may see an R3 violation. The per-requirement table counts a failure where its rule
lives. A requirement whose every scenario stopped at another requirement's failure is BLOCKED: it
neither passed nor failed, and ``blocked_by`` names the requirements that stopped it.

A run that could not judge at all (the adapter did not load, the engine was unreachable) has the
verdict ``NOT JUDGED`` and its ``reason``, and no scenarios. A run that lost its engine midway is
``NOT JUDGED`` too, with the ``reason`` and every scenario judged before the loss (or needing no engine).
A run stopped by SIGINT or SIGTERM is ``INTERRUPTED`` (not judged): its ``interruption`` says which
signal, when and during which scenario, and the scenarios finished before it are kept.

What the run judged (``spec_scenarios``, ``scope``, ``verdict_text``) is :mod:`._scope`'s: one set of
counts for every view. ``report_version`` is 2 since those were added (and ``number``,
``requirement_number``, ``broken_numbers``, ``needs``, ``blocked_by``, ``notes``); a report without
it is version 1, and reads the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..boundary._decline import NOT_APPLICABLE_PREFIX
from ._scope import (
    missing_capabilities,
    requirement_number,
    spec_counts,
    verdict_text,
)

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
    "interrupted_report",
    "not_judged_report",
    "spec_tally",
]

Status = Literal["passed", "failed", "errored", "not_judged", "not_applicable", "xfailed", "skipped"]
Verdict = Literal["CONFORMS", "DOES NOT CONFORM", "NOT APPLICABLE", "NOT JUDGED", "BLOCKED", "INTERRUPTED"]
UNJUDGED_VERDICTS: tuple[Verdict, ...] = ("NOT JUDGED", "INTERRUPTED")
"""A run's verdicts that judged nothing as a whole: the kit could not judge, or the run was stopped."""
REPORT_VERSION = 2
"""The version of ``report.json``'s layout: 2 added the judged scope, requirement numbers, scenario
needs, BLOCKED and notes (every version-1 field is still there, with the same meaning)."""
# When examples of one scenario disagree, the scenario takes the first status in this order.
_PRECEDENCE: tuple[Status, ...] = (
    "failed",
    "errored",
    "not_judged",
    "passed",
    "xfailed",
    "not_applicable",
    "skipped",
)
NOT_JUDGED_PREFIX = "NOT JUDGED: "  # a skip reason that starts so is a scenario the kit could not judge
_JUDGED_VERDICTS = ("CONFORMS", "DOES NOT CONFORM")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScenarioResult(_Model):
    id: str
    requirement: str
    requirement_id: str
    requirement_number: str | None = None  # R1 ... R7; None for the engine checks
    name: str
    status: Status
    message: str | None = None
    derived: bool = False
    engine_check: bool = False
    spec_hash: str | None = None
    # An outline's examples, or a property's generated examples (every one run, shrinking's included).
    examples: int = 1
    # The calls the scenario made of the implementation, by capability (``quality``, ``search``, ...;
    # ``prepare`` apart), counted where the kit asks (the kit's own statistics of a property run).
    calls: dict[str, int] = Field(default_factory=dict)
    duration_s: float = 0.0
    broken_requirements: tuple[str, ...] = ()
    broken_numbers: tuple[str, ...] = ()  # the same requirements by number (R1 ...), where they have one
    rules: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # the capabilities the scenario needs (its @needs tags)


class Summary(_Model):
    passed: int = 0
    failed: int = 0
    errored: int = 0
    not_judged: int = 0
    not_applicable: int = 0
    xfailed: int = 0
    skipped: int = 0
    total: int = 0
    # In a requirement's row: its scenarios that failed on another requirement's rule before reaching
    # their own checks. They neither pass nor fail this requirement.
    blocked: int = 0


class RequirementRow(_Model):
    requirement: str
    requirement_id: str
    number: str | None = None  # R1 ... R7, the spec's order; None for the engine checks
    summary: Summary
    verdict: Verdict
    blocked_by: tuple[str, ...] = ()  # requirement ids whose failures stopped scenarios of this one


class Environment(_Model):
    kit_version: str
    spec_sha256: str | None
    adapter: dict[str, object] | None = None
    milvus: dict[str, object] | None = None
    hypothesis_seed: int | None = None  # the run's seed (options.seed), kept under its first name
    options: dict[str, object] | None = None  # the run's options that differ from their defaults
    python: str
    platform: str


class SpecTally(_Model):
    """How the spec's own scenarios fared, counted by spec text (``@spec`` hash).

    A spec scenario transcribed several times (once per capability) passes only if every transcription
    passed; it is judged when every transcription was (or one failed), judged in part when only some
    were (:mod:`._scope`). Derived scenarios and engine checks carry no hash and are not counted.
    """

    passed: int
    total: int
    judged: int = 0
    partly_judged: int = 0
    failed: int = 0
    not_selected: int = 0  # left out of the run as a whole (``-k``): not judged

    @property
    def not_judged(self) -> int:
        """Spec scenarios not judged in full (those judged in part included)."""
        return self.total - self.judged


class Scope(_Model):
    """What the run reached, by requirement number (``R1`` ...): judged, BLOCKED, or not judged (not
    applicable, or cut off by a lost engine), what the not applicable ones need, and what was declared."""

    capabilities: tuple[str, ...] = ()
    judged: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    not_judged: tuple[str, ...] = ()
    missing_capabilities: tuple[str, ...] = ()
    complete: bool = False  # every spec scenario judged


class Interruption(_Model):
    """Why and where a run stopped before its end: the signal, when, and the scenario then running."""

    signal: str  # SIGINT or SIGTERM
    exit_code: int  # 128 + the signal's number: what rag-conformance run exits with
    at: str  # UTC, e.g. 2026-12-02 13:05:01 UTC
    seconds_into_run: float
    during: str | None = None  # the scenario id (or test id) running when it came; None between them


class Report(_Model):
    report_version: int = 1  # absent in reports written before version 2
    summary: Summary
    spec_scenarios: SpecTally
    verdict: Verdict
    verdict_text: str | None = None  # the verdict with what it judged (:func:`._scope.verdict_text`)
    scope: Scope | None = None
    requirements: tuple[RequirementRow, ...]
    scenarios: tuple[ScenarioResult, ...]
    environment: Environment
    reason: str | None = None
    warnings: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()  # choices the spec allows that defeat its purpose: never a failure
    notes: tuple[str, ...] = ()  # about the run as a whole, e.g. undefined fields in the start reply
    interruption: Interruption | None = None  # set when SIGINT or SIGTERM stopped the run (INTERRUPTED)

    @property
    def judged_nothing(self) -> bool:
        """Whether the run as a whole is not a judgement: NOT JUDGED or INTERRUPTED."""
        return self.verdict in UNJUDGED_VERDICTS

    def judged_spec(self) -> SpecTally:
        """The spec tally; for a version-1 report, recounted from its scenarios the way version 2 counts."""
        if self.report_version >= 2:
            return self.spec_scenarios
        return spec_tally(self.scenarios)

    def described_verdict(self) -> str:
        """:attr:`verdict_text`, or for a version-1 report the same words computed from its contents."""
        return self.verdict_text or verdict_text(self)


def merge_examples(results: Iterable[ScenarioResult]) -> list[ScenarioResult]:
    """One result per scenario id: outline examples fold into their scenario."""
    by_id: dict[str, list[ScenarioResult]] = {}
    for result in results:
        by_id.setdefault(result.id, []).append(result)
    merged = []
    for group in by_id.values():
        worst = min(group, key=lambda r: _PRECEDENCE.index(r.status))
        failing = [r for r in group if r.status == worst.status]
        merged.append(
            worst.model_copy(
                update={
                    "examples": sum(r.examples for r in group),
                    "calls": _summed(r.calls for r in group),
                    "duration_s": round(sum(r.duration_s for r in group), 6),
                    "broken_requirements": _union(r.broken_requirements for r in failing),
                    "rules": _union(r.rules for r in failing),
                    "notes": _union(r.notes for r in group),
                }
            )
        )
    return merged


def _summed(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in parts:
        for capability, n in part.items():
            total[capability] = total.get(capability, 0) + n
    return total


def _union(parts: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for part in parts for item in part))


def broken_requirements(result: ScenarioResult) -> tuple[str, ...]:
    """Where a failure counts: the requirements whose rules it broke (its own, for older reports)."""
    if result.status != "failed":
        return ()
    return result.broken_requirements or (result.requirement_id,)


def _summary(results: Iterable[ScenarioResult]) -> Summary:
    counts = dict.fromkeys(_PRECEDENCE, 0)
    for result in results:
        counts[result.status] += 1
    return Summary(**counts, total=sum(counts.values()))


def _verdict(summary: Summary) -> Verdict:
    """A requirement's verdict: a failure judged stays one, even when others could not be judged."""
    if summary.failed or summary.errored:
        return "DOES NOT CONFORM"
    if summary.not_judged:
        return "NOT JUDGED"  # what passed does not show that the rest would have
    if summary.passed or summary.xfailed:
        return "CONFORMS"
    if summary.blocked:
        return "BLOCKED"  # every scenario of it stopped at another requirement's violation first
    return "NOT APPLICABLE"


def _numbered(result: ScenarioResult) -> ScenarioResult:
    """The result with its requirements' numbers beside their ids (what the spec's readers say)."""
    broken = tuple(n for r in broken_requirements(result) if (n := requirement_number(r)))
    return result.model_copy(
        update={"requirement_number": requirement_number(result.requirement_id), "broken_numbers": broken}
    )


def spec_tally(scenarios: Iterable[ScenarioResult], unselected: Iterable[str] = ()) -> SpecTally:
    """The spec's scenarios counted by what the run did with them (:func:`._scope.spec_counts`)."""
    return SpecTally(**spec_counts(scenarios, unselected))


def _scope(
    rows: Sequence[RequirementRow],
    tally: SpecTally,
    environment: Environment,
    scenarios: Sequence[ScenarioResult],
) -> Scope:
    def numbered(*verdicts: str) -> tuple[str, ...]:
        return tuple(r.number for r in rows if r.number and r.verdict in verdicts)

    declared = (environment.adapter or {}).get("capabilities")
    declared = list(declared) if isinstance(declared, list) else []
    absent = {r.requirement_id for r in rows if r.number and r.verdict == "NOT APPLICABLE"}
    missing = missing_capabilities([s for s in scenarios if s.requirement_id in absent], declared)
    return Scope(
        capabilities=tuple(declared),
        judged=numbered(*_JUDGED_VERDICTS),
        blocked=numbered("BLOCKED"),
        not_judged=numbered("NOT APPLICABLE", "NOT JUDGED"),
        missing_capabilities=tuple(missing) if declared else (),
        complete=bool(tally.total) and tally.judged == tally.total,
    )


def build_report(
    results: Iterable[ScenarioResult],
    environment: Environment,
    *,
    requirement_order: Sequence[str] = (),
    reason: str | None = None,
    unselected_spec: Iterable[str] = (),
) -> Report:
    """Fold examples, count per requirement and decide verdicts.

    Requirements come in ``requirement_order`` (their titles, as in the spec), then any others in order
    of first appearance. A run with a scenario NOT JUDGED is NOT JUDGED as a whole, failures or not:
    it is incomplete, and ``reason`` says why; what was judged stays in the report.
    ``unselected_spec`` holds the ``@spec`` hash of each transcription the run left out (``-k``): the
    spec's scenarios still count them, as not judged.
    """
    scenarios = [_numbered(s) for s in merge_examples(results)]
    groups: dict[str, list[ScenarioResult]] = {}
    rank = {title: i for i, title in enumerate(requirement_order)}
    for result in sorted(scenarios, key=lambda r: rank.get(r.requirement, len(rank))):
        groups.setdefault(result.requirement_id, []).append(result)
    rows = []
    for requirement_id, group in groups.items():
        # A failure counts under the requirement whose rule broke, wherever the scenario lives.
        failed = sum(requirement_id in broken_requirements(r) for r in scenarios)
        stopped = [r for r in group if r.status == "failed" and requirement_id not in broken_requirements(r)]
        summary = _summary(r for r in group if r.status != "failed")
        summary = summary.model_copy(
            update={"failed": failed, "blocked": len(stopped), "total": summary.total + failed}
        )
        rows.append(
            RequirementRow(
                requirement=group[0].requirement,
                requirement_id=requirement_id,
                number=requirement_number(requirement_id),
                summary=summary,
                verdict=_verdict(summary),
                blocked_by=tuple(dict.fromkeys(b for r in stopped for b in broken_requirements(r))),
            )
        )
    summary = _summary(scenarios)
    tally = spec_tally(scenarios, unselected_spec)
    report = Report(
        report_version=REPORT_VERSION,
        summary=summary,
        spec_scenarios=tally,
        verdict="NOT JUDGED" if summary.not_judged else _verdict(summary),
        scope=_scope(rows, tally, environment, scenarios),
        requirements=tuple(rows),
        scenarios=tuple(scenarios),
        environment=environment,
        reason=reason,
    )
    return report.model_copy(update={"verdict_text": verdict_text(report)})


def not_judged_report(reason: str, environment: Environment, *, warnings: Sequence[str] = ()) -> Report:
    """The report of a run that could not judge at all: no scenarios, verdict NOT JUDGED, the reason."""
    return Report(
        report_version=REPORT_VERSION,
        verdict_text="NOT JUDGED",
        summary=Summary(),
        spec_scenarios=SpecTally(passed=0, total=0),
        verdict="NOT JUDGED",
        requirements=(),
        scenarios=(),
        environment=environment,
        reason=reason,
        warnings=tuple(warnings),
    )


def interrupted_report(report: Report | None, interruption: Interruption, environment: Environment) -> Report:
    """``report`` (what was judged before the signal, or nothing) as an INTERRUPTED run's report."""
    where = f", during scenario {interruption.during}" if interruption.during else ""
    base = report or not_judged_report("", environment)
    judged = len(base.scenarios)
    reason = (
        f"interrupted by {interruption.signal} {interruption.seconds_into_run:.1f} s into the run "
        f"({interruption.at}){where}; the {judged} scenario{'s' * (judged != 1)} that finished before it "
        f"{'are' if judged != 1 else 'is'} kept, but the run as a whole judged nothing: run it again"
    )
    # A requirement cut off reads INTERRUPTED too: what passed before the signal does not show the rest
    # would have. A failure judged before it stays one.
    rows = tuple(
        r if r.verdict == "DOES NOT CONFORM" else r.model_copy(update={"verdict": "INTERRUPTED"})
        for r in base.requirements
    )
    update = {"verdict": "INTERRUPTED", "interruption": interruption, "reason": reason, "requirements": rows}
    report = base.model_copy(update=update)
    return report.model_copy(update={"verdict_text": verdict_text(report)})
