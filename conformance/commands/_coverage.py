"""Does the Gherkin say what the pinned spec says? Coverage of spec scenarios by feature files.

For every spec scenario: ``covered`` (a Gherkin scenario has its name and an ``@spec:<hash>`` tag equal
to the hash of its current WHEN/THEN/AND text), ``missing`` (no Gherkin scenario has its name),
``different-text`` (the tag records another text: the spec changed after transcription) or ``untagged``.
Beside that: Gherkin scenarios that name no spec scenario and are not ``@derived``, feature files with
no scenarios, scenarios without exactly one unique ``@id``, and steps that no step definition binds.

A Gherkin scenario named like a spec scenario plus a parenthesized qualifier, e.g. ``No L2 enrichment
overwrite (lookup)``, transcribes that spec scenario through another capability: it needs the same
``@spec`` tag, so a spec edit flags every transcription.

"Bound" is decided the way pytest-bdd decides it at run time: a step is bound when a step definition
of the same type (or typeless) in one of :data:`conformance.scenarios.steps.STEP_MODULES` has a parser that
matches the step text, after rendering Scenario Outline examples. Two matching definitions are
reported as ambiguous, because pytest-bdd would silently pick one.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from pytest_bdd.parser import FeatureParser, ScenarioTemplate, Step
from pytest_bdd.steps import StepFunctionContext, step_function_context_registry

from ..scenarios.steps import STEP_MODULES
from ..spec._paths import features_dir, spec_path
from ..spec._pinned import SpecScenario, read_spec

__all__ = [
    "CoverageReport",
    "ExtraScenario",
    "FileProblem",
    "ScenarioCoverage",
    "Status",
    "StepProblem",
    "check_coverage",
    "coverage_main",
    "format_report",
    "spec_problem",
]

DERIVED_TAG = "derived"
ENGINE_TAG = "engine"  # checks of Milvus itself: they transcribe no spec scenario by design
# "Name (lookup)": the same spec scenario checked through another capability.
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
SPEC_TAG = "spec:"
ID_TAG = "id:"


class Status(StrEnum):
    COVERED = "covered"
    MISSING = "missing"
    DIFFERENT_TEXT = "different-text"
    UNTAGGED = "untagged"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class ScenarioCoverage(_Model):
    """One spec scenario and the Gherkin scenarios that transcribe it."""

    requirement: str
    name: str
    hash: str
    status: Status
    where: tuple[str, ...] = ()
    detail: str = ""


class ExtraScenario(_Model):
    """A Gherkin scenario that is neither a spec scenario nor marked ``@derived``."""

    where: str
    name: str
    reason: str


class FileProblem(_Model):
    """A feature file or scenario the kit cannot use as it is."""

    where: str
    problem: str


class StepProblem(_Model):
    """A step no step definition binds, or more than one does."""

    where: str
    scenario: str
    step: str
    problem: str


class CoverageReport(_Model):
    """Everything :func:`check_coverage` found; :attr:`ok` is the verdict."""

    spec_path: str
    spec_sha256: str
    scenarios: tuple[ScenarioCoverage, ...]
    derived: tuple[str, ...] = ()
    engine_checks: tuple[str, ...] = ()
    extras: tuple[ExtraScenario, ...] = ()
    file_problems: tuple[FileProblem, ...] = ()
    step_problems: tuple[StepProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every spec scenario is covered and nothing else is wrong."""
        all_covered = all(s.status is Status.COVERED for s in self.scenarios)
        return all_covered and not (self.extras or self.file_problems or self.step_problems)

    def by_status(self, status: Status) -> tuple[ScenarioCoverage, ...]:
        """Spec scenarios with the given status."""
        return tuple(s for s in self.scenarios if s.status is status)


def check_coverage(features: Path, spec: Path) -> CoverageReport:
    """Compare the feature files under ``features`` with the spec at ``spec``."""
    parsed = read_spec(spec)
    by_name: dict[str, list[SpecScenario]] = {}
    for scenario in parsed.scenarios:
        by_name.setdefault(scenario.name, []).append(scenario)
    hashes = {s.hash: s for s in parsed.scenarios}
    definitions = _step_definitions()

    found: dict[tuple[str, str], list[tuple[str, ScenarioTemplate]]] = {}
    derived, engine_checks, extras, file_problems, step_problems = [], [], [], [], []
    ids: dict[str, str] = {}
    for path in sorted(Path(features).rglob("*.feature")):
        rel = path.relative_to(features).as_posix()
        try:
            feature = FeatureParser(str(path.parent), path.name).parse()
        except Exception as exc:  # pytest-bdd raises several kinds; all mean "unusable file"
            file_problems.append(FileProblem(where=rel, problem=f"cannot be parsed: {exc}"))
            continue
        if not feature.scenarios:
            file_problems.append(FileProblem(where=rel, problem="has no scenarios"))
        for template in feature.scenarios.values():
            where = f"{rel}:{template.line_number}"
            file_problems.extend(_id_problems(template, where, ids))
            step_problems.extend(_unbound_steps(template, where, definitions))
            match = _spec_match(template, feature.name, by_name)
            if match is not None:
                found.setdefault((match.requirement, match.name), []).append((where, template))
            elif ENGINE_TAG in template.tags or ENGINE_TAG in feature.tags:
                engine_checks.append(f"{where} {template.name}")
            elif DERIVED_TAG in template.tags:
                derived.append(f"{where} {template.name}")
            else:
                extras.append(
                    ExtraScenario(where=where, name=template.name, reason=_extra_reason(template, hashes))
                )
    coverage = tuple(_coverage(s, found.get((s.requirement, s.name), [])) for s in parsed.scenarios)
    return CoverageReport(
        spec_path=str(spec),
        spec_sha256=parsed.sha256,
        scenarios=coverage,
        derived=tuple(derived),
        engine_checks=tuple(engine_checks),
        extras=tuple(extras),
        file_problems=tuple(file_problems),
        step_problems=tuple(step_problems),
    )


def _spec_match(
    template: ScenarioTemplate, feature_name: str, by_name: dict[str, list[SpecScenario]]
) -> SpecScenario | None:
    candidates = by_name.get(template.name) or by_name.get(_QUALIFIER.sub("", template.name), [])
    if len(candidates) > 1:  # the same scenario name under two requirements: the feature name decides
        candidates = [s for s in candidates if s.requirement == feature_name]
    return candidates[0] if len(candidates) == 1 else None


def _spec_tags(template: ScenarioTemplate) -> list[str]:
    return [tag.removeprefix(SPEC_TAG) for tag in template.tags if tag.startswith(SPEC_TAG)]


def _coverage(scenario: SpecScenario, transcriptions: list[tuple[str, ScenarioTemplate]]) -> ScenarioCoverage:
    common = {"requirement": scenario.requirement, "name": scenario.name, "hash": scenario.hash}
    if not transcriptions:
        return ScenarioCoverage(
            **common, status=Status.MISSING, detail="no Gherkin scenario has this name; transcribe it"
        )
    where = tuple(w for w, _ in transcriptions)
    for at, template in transcriptions:
        tags = _spec_tags(template)
        if not tags:
            detail = f"{at} has no @spec tag; add @spec:{scenario.hash}"
            return ScenarioCoverage(**common, status=Status.UNTAGGED, where=where, detail=detail)
        if scenario.hash not in tags or len(tags) > 1:
            detail = (
                f"{at} transcribes spec text {', '.join(tags)}, the spec text now hashes to {scenario.hash}; "
                f"re-read the spec scenario, update the Gherkin, then the tag"
            )
            return ScenarioCoverage(**common, status=Status.DIFFERENT_TEXT, where=where, detail=detail)
    return ScenarioCoverage(**common, status=Status.COVERED, where=where)


def _extra_reason(template: ScenarioTemplate, hashes: dict[str, SpecScenario]) -> str:
    reason = "names no spec scenario and is not tagged @derived"
    renamed = [hashes[t].name for t in _spec_tags(template) if t in hashes]
    if renamed:
        reason += f"; its @spec tag is the text of spec scenario {renamed[0]!r} (renamed?)"
    return reason


def _id_problems(template: ScenarioTemplate, where: str, seen: dict[str, str]) -> Iterator[FileProblem]:
    ids = [tag.removeprefix(ID_TAG) for tag in template.tags if tag.startswith(ID_TAG)]
    if len(ids) != 1:
        yield FileProblem(
            where=where, problem=f"scenario {template.name!r} needs exactly one @id tag, has {ids}"
        )
    for scenario_id in ids:
        if scenario_id in seen:
            yield FileProblem(where=where, problem=f"@id:{scenario_id} is also used at {seen[scenario_id]}")
        seen.setdefault(scenario_id, where)


# -- step binding ----------------------------------------------------------------------------------


def _step_definitions(modules: Iterable[str] = STEP_MODULES) -> list[StepFunctionContext]:
    """The step definitions pytest-bdd will see at run time: those of the plugin's step modules."""
    names = set(modules)
    for name in names:
        importlib.import_module(name)
    return [ctx for ctx in list(step_function_context_registry.values()) if ctx.step_func.__module__ in names]


def _rendered_steps(template: ScenarioTemplate) -> Iterator[Step]:
    contexts = [context for examples in template.examples for context in examples.as_contexts()] or [{}]
    seen: set[tuple[str, str]] = set()
    for context in contexts:
        for step in template.render(context).steps:
            if (step.type, step.name) not in seen:
                seen.add((step.type, step.name))
                yield step


def _unbound_steps(
    template: ScenarioTemplate, where: str, definitions: list[StepFunctionContext]
) -> Iterator[StepProblem]:
    for step in _rendered_steps(template):
        matching = [d for d in definitions if d.type in (None, step.type) and d.parser.is_matching(step.name)]
        functions = {(d.step_func.__module__, d.step_func.__qualname__, id(d.step_func)) for d in matching}
        problem = "no step definition binds it" if not functions else None
        if len(functions) > 1:
            problem = f"ambiguous: {len(functions)} step definitions bind it"
        if problem:
            step_where = f"{where.rsplit(':', 1)[0]}:{step.line_number}"
            yield StepProblem(
                where=step_where, scenario=template.name, step=f"{step.type} {step.name!r}", problem=problem
            )


# -- the command -----------------------------------------------------------------------------------


def format_report(report: CoverageReport) -> str:
    """A plain-text table: one line per spec scenario, then whatever else is wrong."""
    lines = [f"spec {report.spec_path} (sha256 {report.spec_sha256[:12]})", ""]
    width = max((len(s.name) for s in report.scenarios), default=10) + 2
    requirement = None
    for s in report.scenarios:
        if s.requirement != requirement:
            requirement = s.requirement
            lines.append(f"Requirement: {requirement}")
        lines.append(f"  {s.name:<{width}}{s.hash}  {s.status.value:<15}{', '.join(s.where)}")
        if s.detail:
            lines.append(f"  {'':<{width}}{s.detail}")
    sections = (
        ("Extra scenarios", [f"{e.where} {e.name!r}: {e.reason}" for e in report.extras]),
        ("Feature problems", [f"{p.where}: {p.problem}" for p in report.file_problems]),
        (
            "Step problems",
            [f"{p.where} {p.step} in {p.scenario!r}: {p.problem}" for p in report.step_problems],
        ),
    )
    for title, entries in sections:
        if entries:
            lines += ["", f"{title}:", *(f"  {e}" for e in entries)]
    counts = {status: len(report.by_status(status)) for status in Status}
    summary = ", ".join(f"{n} {status.value}" for status, n in counts.items() if n)
    lines += [
        "",
        f"{len(report.scenarios)} spec scenarios: {summary}; {len(report.derived)} derived scenarios; "
        f"{len(report.engine_checks)} engine checks; "
        f"{len(report.extras)} extra; {len(report.file_problems) + len(report.step_problems)} other problems",
        "coverage OK" if report.ok else "coverage FAILED",
    ]
    return "\n".join(lines)


def spec_problem(spec: str | Path) -> str | None:
    """Why ``spec`` cannot be read as a spec's text (a directory, nothing there, unreadable, not UTF-8
    text), checked before any work; None when it can."""
    path = Path(spec)
    if not path.exists():
        return f"--spec {spec}: no such file"
    if path.is_dir():
        return f"--spec {spec} is a directory, not the spec's text file"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"--spec {spec} cannot be read: {exc.strerror or exc}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"--spec {spec} is not UTF-8 text (byte {exc.start}: a binary file?)"
    if "\x00" in text:
        return f"--spec {spec} holds NUL bytes: a binary file, not the spec's text"
    return None


def coverage_main(spec: Path | None = None, *, features: Path | None = None) -> int:
    """Print the coverage table for the kit's features against ``spec`` (default: the pinned spec).

    Returns 0 when every spec scenario is covered and nothing else is wrong, else 1 (the command line
    returns 2 first for a ``--spec`` that is no text file: :func:`spec_problem`).
    """
    report = check_coverage(features or features_dir(), spec or spec_path())
    print(format_report(report))
    return 0 if report.ok else 1
