"""What a run judged: the spec's scenarios and requirements it reached, and the verdict said with it.

A verdict on part of the spec must read as such. An implementation that declares only the pure
capabilities (labels, quality, post-process) is judged on 7 of the spec's 12 scenarios: its CONFORMS
says so, and names the requirements it did not reach and what they need. One set of counts serves
every view (the terminal, ``report.json``, JUnit, the site and the badge): :func:`spec_tally` for the
spec's scenarios, the requirement rows for the requirements, :func:`verdict_text` for the words.

A spec scenario (one ``@spec:`` hash, transcribed once per capability that can show it) is

- *judged* when every transcription of it was judged (passed, failed, errored or a known divergence),
  or when one failed: a failure is a judgement of the scenario, whatever its other transcriptions;
- *judged in part* when some transcriptions passed and the others were not judged (not applicable, or
  cut off by a lost engine): the post-process transcription of "Dense distance does not replace
  hybrid label" runs without search, its search and lookup ones do not;
- *not judged* otherwise. It *passed* when every transcription passed.

A requirement is judged when its verdict is CONFORMS or DOES NOT CONFORM; BLOCKED when every scenario
of it stopped at another requirement's failure first (it neither passed nor failed); NOT APPLICABLE
when it needs capabilities the implementation does not declare; NOT JUDGED when the engine was lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from ..boundary._protocol import BASE_CAPABILITIES, PURE_CAPABILITIES, Capability, ImplementationInfo
from ..judging._spec_model import REQUIREMENT_NUMBERS

__all__ = [
    "COLLECTION_DROPPED_REASON",
    "ENGINE_ERRORS_REASON",
    "JUDGED_STATUSES",
    "broken_outside_spec",
    "capabilities_text",
    "derived_line",
    "missing_capabilities",
    "property_lines",
    "requirement_label",
    "requirement_number",
    "requirement_verdict_text",
    "spec_counts",
    "total_line",
    "verdict_text",
]

JUDGED_STATUSES = frozenset({"passed", "failed", "errored", "xfailed"})
"""Statuses that are a judgement of the implementation (the others say why there is none)."""
_BROKEN = frozenset({"failed", "errored"})
ENGINE_ERRORS_REASON = "Milvus answered errors"
COLLECTION_DROPPED_REASON = "A collection of this run was dropped from outside it"
"""How the reason of a run whose scenarios the engine's error answers left NOT JUDGED begins (not a lost
engine): the verdict's words name that cause."""
_UNSELECTED = "not selected"  # a transcription the run left out (-k), in spec_counts only
_CAPABILITY_ORDER = {str(c): i for i, c in enumerate(Capability)}


# What these words read of a report, as Protocols: the report's models (:mod:`._report`) are built with
# these functions, so naming the models here would make the two modules import each other.


class ScenarioResult(Protocol):
    """One scenario's outcome, as :class:`~conformance.reporting.ScenarioResult` holds it."""

    @property
    def requirement_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def spec_hash(self) -> str | None: ...
    @property
    def needs(self) -> Sequence[str]: ...
    @property
    def id(self) -> str: ...
    @property
    def derived(self) -> bool: ...
    @property
    def engine_check(self) -> bool: ...


class _Blocked(Protocol):
    @property
    def blocked(self) -> int: ...
    @property
    def passed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def errored(self) -> int: ...
    @property
    def xfailed(self) -> int: ...
    @property
    def total(self) -> int: ...


class RequirementRow(Protocol):
    """One requirement's row, as :class:`~conformance.reporting.RequirementRow` holds it."""

    @property
    def requirement_id(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def blocked_by(self) -> Sequence[str]: ...
    @property
    def summary(self) -> _Blocked: ...


class _Tally(Protocol):
    @property
    def total(self) -> int: ...
    @property
    def judged(self) -> int: ...
    @property
    def partly_judged(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def not_selected(self) -> int: ...


class _Environment(Protocol):
    @property
    def adapter(self) -> Mapping[str, object] | None: ...


class Report(Protocol):
    """A report, as :class:`~conformance.reporting.Report` holds it."""

    @property
    def verdict(self) -> str: ...
    @property
    def requirements(self) -> Sequence[RequirementRow]: ...
    @property
    def scenarios(self) -> Sequence[ScenarioResult]: ...
    @property
    def environment(self) -> _Environment: ...
    def judged_spec(self) -> _Tally: ...


def requirement_number(requirement_id: str) -> str | None:
    """``R1`` ... ``R7`` for the spec's requirements (their order in the spec); None for others."""
    return REQUIREMENT_NUMBERS.get(requirement_id)


def requirement_label(requirement_id: str) -> str:
    """``R3`` for a spec requirement, its id otherwise (the engine checks, a test's own feature)."""
    return requirement_number(requirement_id) or requirement_id


def spec_counts(scenarios: Iterable[ScenarioResult], unselected: Iterable[str] = ()) -> dict[str, int]:
    """The spec's scenarios by what the run did with them (see the module docstring): ``total``,
    ``passed``, ``failed``, ``judged`` (failed ones included), ``partly_judged``, ``not_selected``.

    ``unselected`` holds the ``@spec`` hash of each transcription the run left out (``-k``): a
    transcription not run is not judged, so ``-k`` on one scenario judges 1 of the spec's 12."""
    transcriptions: dict[str, list[str]] = {}
    for result in scenarios:
        if result.spec_hash:
            transcriptions.setdefault(result.spec_hash, []).append(result.status)
    for spec_hash in unselected:
        transcriptions.setdefault(spec_hash, []).append(_UNSELECTED)
    counts = dict.fromkeys(("total", "passed", "failed", "judged", "partly_judged", "not_selected"), 0)
    for statuses in transcriptions.values():
        counts["total"] += 1
        counts["not_selected"] += all(s == _UNSELECTED for s in statuses)
        if any(s in _BROKEN for s in statuses):
            counts["failed"] += 1
            counts["judged"] += 1
        elif all(s in JUDGED_STATUSES for s in statuses):
            counts["judged"] += 1
            counts["passed"] += all(s == "passed" for s in statuses)
        elif any(s in JUDGED_STATUSES for s in statuses):
            counts["partly_judged"] += 1
    return counts


def broken_outside_spec(scenarios: Iterable[ScenarioResult]) -> list[str]:
    """What broke outside the spec's own scenarios, in the words the verdict and the table use:
    ``4 derived scenarios of R5 failed``, ``1 derived scenario of R3 errored``, ``2 engine checks
    failed``. A failure counts under the requirements it broke (as the requirement table counts it), an
    error under its scenario's own requirement."""
    groups: dict[tuple[str, str], tuple[list[int], set[str]]] = {}
    for result in scenarios:
        if result.spec_hash or result.status not in _BROKEN:
            continue
        kind = "engine check" if result.engine_check else "derived scenario"
        where = result.broken_requirements if result.status == "failed" else ()
        count, labels = groups.setdefault((kind, result.status), ([0], set()))
        count[0] += 1
        labels.update(requirement_label(r) for r in where or (result.requirement_id,))
    parts = []
    for (kind, status), (count, labels) in sorted(
        groups.items(), key=lambda g: (g[0][0] != "derived scenario", g[0][1])
    ):
        n = count[0]
        of = "" if kind == "engine check" else f" of {_join(sorted(labels, key=_label_order))}"
        parts.append(f"{n} {kind}{'s' * (n != 1)}{of} {status}")
    return parts


def derived_line(scenarios: Iterable[ScenarioResult]) -> str | None:
    """The table's line for the derived scenarios, counted apart from the spec's: ``derived scenarios:
    16 of 30 judged, 15 passed, 1 failed``; None in a run without any."""
    derived = [r for r in scenarios if not r.spec_hash and not r.engine_check]
    if not derived:
        return None
    judged = [r for r in derived if r.status in JUDGED_STATUSES]
    counts = [
        f"{len(judged)} of {len(derived)} judged",
        f"{sum(r.status == 'passed' for r in judged)} passed",
    ]
    counts += [
        f"{n} {status}" for status in ("failed", "errored") if (n := sum(r.status == status for r in derived))
    ]
    return f"derived scenarios: {', '.join(counts)}"


def property_lines(
    scenarios: Iterable[ScenarioResult], properties: Iterable[str], *, statistics_asked: bool = False
) -> list[str]:
    """Per property scenario that ran, the examples it ran and its calls: the kit's own statistics
    (pytest and ``--hypothesis-show-statistics`` see one test each, not the examples inside it)."""
    ids = set(properties)
    shown = [r for r in scenarios if r.id in ids and r.status not in ("not_applicable", "skipped")]
    if not shown:
        return []
    lines = ["property scenarios (examples run; calls of the implementation by capability):"]
    if statistics_asked:
        lines[0] += (
            " these replace --hypothesis-show-statistics, which sees one test per scenario and "
            "not the Hypothesis run inside it"
        )
    for r in shown:
        calls = ", ".join(f"{capability} {n}" for capability, n in r.calls.items()) or "none"
        lines.append(f"  {r.id}: {r.examples} example{'s' * (r.examples != 1)}; {calls}")
    return lines


def _label_order(label: str) -> tuple[int, str]:
    return (0, f"{int(label[1:]):03d}") if label[:1] == "R" and label[1:].isdigit() else (1, label)


def missing_capabilities(scenarios: Iterable[ScenarioResult], declared: Sequence[str]) -> list[str]:
    """What the not-applicable scenarios among ``scenarios`` need that ``declared`` lacks, in the
    capabilities' order."""
    info = ImplementationInfo(name="-", version="-", capabilities=frozenset(Capability(c) for c in declared))
    missing = {
        need
        for r in scenarios
        if r.status == "not_applicable"
        for need in r.needs
        if need in _CAPABILITY_ORDER and not info.supports(need)
    }
    return sorted(missing, key=lambda c: _CAPABILITY_ORDER[c])


def capabilities_text(declared: Iterable[str]) -> str:
    """How a verdict names what was declared: ``pure capabilities``, ``every capability``, or the list."""
    names = {str(c) for c in declared}
    if names == {str(c) for c in PURE_CAPABILITIES}:
        return "pure capabilities"
    if {str(c) for c in BASE_CAPABILITIES} <= names:
        return "every capability"
    ordered = sorted(names, key=lambda c: _CAPABILITY_ORDER.get(c, len(_CAPABILITY_ORDER)))
    return "declares " + ", ".join(ordered) if ordered else "declares nothing"


def _join(labels: Sequence[str]) -> str:
    return ", ".join(labels)


def verdict_text(report: Report) -> str:
    """The verdict with what it judged, the same words in every view, e.g.

    ``CONFORMS (pure capabilities: 7 of 12 spec scenarios judged, 1 more in part; R2, R6 not judged:
    their scenarios need search, lookup)``; ``CONFORMS (every capability: 12 of 12 spec scenarios
    judged)``. A run that judged nothing reads ``NOT JUDGED`` with its reason elsewhere.

    A run that does not conform says what failed, spec scenarios and the others counted apart:
    ``DOES NOT CONFORM (every capability: 12 of 12 spec scenarios judged, 12 passed; 4 derived
    scenarios of R5 failed)``, so a verdict never reads as contradicting its own counts.
    """
    if report.interruption is not None:  # stopped from outside: what finished is no judgement
        n = len(report.scenarios)
        return (
            f"{report.verdict} (not judged: stopped by {report.interruption.signal} after {n} "
            f"scenario{'s' * (n != 1)})"
        )
    if not report.scenarios:
        return report.verdict
    tally = report.judged_spec()
    declared = (report.environment.adapter or {}).get("capabilities")
    head = f"{capabilities_text(declared)}: " if isinstance(declared, list) else ""
    parts = []
    if tally.total:
        spec = f"{tally.judged} of {tally.total} spec scenarios judged"
        if report.verdict == "DOES NOT CONFORM":  # say what failed in the counts the table prints
            spec += f", {tally.passed} passed"
        if tally.partly_judged:
            spec += f", {tally.partly_judged} more in part"
        if tally.failed:
            spec += f", {tally.failed} failed"
        if tally.not_selected:
            spec += f", {tally.not_selected} not selected (-k)"
        parts.append(spec)
    parts += broken_outside_spec(report.scenarios)
    # By number: a version-1 report has no numbers stored, its requirement ids have them.
    rows = [(n, r) for r in report.requirements if (n := requirement_number(r.requirement_id))]
    blocked = [(n, r) for n, r in rows if r.verdict == "BLOCKED"]
    if blocked:
        by = sorted({requirement_label(b) for _, r in blocked for b in r.blocked_by}) or [
            "other requirements'"
        ]
        parts.append(f"{_join([n for n, _ in blocked])} blocked by {_join(by)} failures")
    lost = [n for n, r in rows if r.verdict == "NOT JUDGED"]
    if lost:
        erred = (report.reason or "").startswith(ENGINE_ERRORS_REASON)
        cause = "the engine answered errors" if erred else "the engine was lost"
        if (report.reason or "").startswith(COLLECTION_DROPPED_REASON):
            cause = "a collection of the run was dropped from outside it"
        parts.append(f"{_join(lost)} not judged: {cause}")
    absent = [(n, r) for n, r in rows if r.verdict == "NOT APPLICABLE"]
    if absent:
        text = f"{_join([n for n, _ in absent])} not judged"
        if isinstance(declared, list):
            ids = {r.requirement_id for _, r in absent}
            needed = missing_capabilities([s for s in report.scenarios if s.requirement_id in ids], declared)
            if needed:
                text += f": {'their' if len(absent) > 1 else 'its'} scenarios need {_join(needed)}"
        parts.append(text)
    if not parts:
        return report.verdict
    return f"{report.verdict} ({head}{'; '.join(parts)})"


def requirement_verdict_text(row: RequirementRow) -> str:
    """A requirement's verdict as the table, JUnit, the site and its pages show it: ``CONFORMS (3 of 8
    judged)`` where only part of its scenarios were judged, ``BLOCKED (1 stopped by R1)``.

    Judged: passed, failed, errored or a known divergence, of the row's total (its scenarios and the
    failures counted under it; those another requirement's failure stopped are apart, as in the counts)."""
    s = row.summary
    parts = []
    judged = s.passed + s.failed + s.errored + s.xfailed
    if row.verdict in ("CONFORMS", "DOES NOT CONFORM") and judged < s.total:
        parts.append(f"{judged} of {s.total} judged")
    if s.blocked:
        by = _join(sorted({requirement_label(b) for b in row.blocked_by})) or "another requirement"
        parts.append(f"{s.blocked} stopped by {by}")
    return f"{row.verdict} ({'; '.join(parts)})" if parts else row.verdict


def total_line(scenarios: Iterable[ScenarioResult]) -> str | None:
    """The line that accounts for the table's TOTAL: ``TOTAL 48 scenarios: 17 transcribe the spec's 12
    (5 more than one each: a, b, ...), 31 derived``, engine checks and any other kind counted apart."""
    results = list(scenarios)
    if not results:
        return None
    spec = [r for r in results if r.spec_hash]
    hashes = {r.spec_hash for r in spec}
    derived = sum(1 for r in results if not r.spec_hash and not r.engine_check and r.derived)
    engine = [r for r in results if not r.spec_hash and r.engine_check]
    other = [r for r in results if not r.spec_hash and not r.engine_check and not r.derived]
    parts = []
    if spec:
        text = f"{len(spec)} transcribe the spec's {len(hashes)}"
        seen: set[str | None] = set()
        again = [r.id for r in spec if r.spec_hash in seen or seen.add(r.spec_hash)]
        if again:
            text += f" ({len(again)} a further transcription of one, for another capability: {_join(again)})"
        parts.append(text)
    if derived:
        parts.append(f"{derived} derived")
    if engine:
        parts.append(f"{len(engine)} engine check{'s' * (len(engine) != 1)}")
    if other:
        parts.append(f"{len(other)} of no kind (neither spec, derived nor engine check)")
    return f"TOTAL {len(results)} scenarios: {'; '.join(parts)}"
