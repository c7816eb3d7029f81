"""What the site is made of: one column per report, one page per requirement.

A column is one report: one implementation judged on one engine. Pages come from the feature files
(the living documentation) joined with the pinned spec's requirement text by title, in spec order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..boundary._errors import ConformanceError
from ..reporting import (
    Report,
    RequirementRow,
    ScenarioResult,
    Summary,
    broken_requirements,
    requirement_number,
)
from ..reporting._scope import requirement_label
from ..spec._pinned import Requirement, Spec
from ._gherkin import FeatureDoc, ScenarioDoc

__all__ = [
    "NOT_RUN",
    "Column",
    "DocsError",
    "RequirementPage",
    "counted_here",
    "counts_text",
    "judged_text",
    "load_columns",
    "pages_for",
    "requirement_title",
    "status_text",
    "stopped_here",
    "unshown_results",
    "verdict_class",
    "verdict_detail",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class DocsError(ConformanceError):
    """The site cannot be built from these inputs; the message says which input and what to do."""


@dataclass(frozen=True)
class Column:
    """One report: ``label`` is unique on the site, ``slug`` names its files (the badge)."""

    label: str
    slug: str
    report: Report
    source: str
    _results: dict[str, ScenarioResult] = field(default_factory=dict, repr=False, compare=False)
    _rows: dict[str, RequirementRow] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._results.update({s.id: s for s in self.report.scenarios})
        self._rows.update({r.requirement_id: r for r in self.report.requirements})

    @property
    def implementation(self) -> str:
        return _implementation(self.report)

    @property
    def engine(self) -> str:
        """``backend version`` of the Milvus the report ran on, e.g. ``lite milvus_lite-3.2.2``."""
        return _engine(self.report)

    def result(self, scenario_id: str | None) -> ScenarioResult | None:
        """This report's result for a scenario id; None when the run did not include it."""
        return self._results.get(scenario_id) if scenario_id else None

    def requirement(self, requirement_id: str) -> RequirementRow | None:
        return self._rows.get(requirement_id)


@dataclass(frozen=True)
class RequirementPage:
    """A requirement's page: its feature files, its spec text (None for engine checks), its file name.

    A requirement may have several feature files (examples, properties, lookup), all titled with the
    requirement's title and tagged with its ``@req``; the page shows them all, those that transcribe
    spec scenarios first.
    """

    requirement_id: str
    title: str
    features: tuple[FeatureDoc, ...]
    spec: Requirement | None

    @property
    def engine(self) -> bool:
        return any(f.engine for f in self.features)

    @property
    def scenarios(self) -> tuple[ScenarioDoc, ...]:
        return tuple(s for f in self.features for s in f.scenarios)

    @property
    def stem(self) -> str:
        return _slug(self.requirement_id)


def unshown_results(column: Column, pages: Sequence[RequirementPage]) -> list[str]:
    """Ids of the report's scenarios that no page shows: a report from another kit version, usually."""
    shown = {s.id for p in pages for s in p.scenarios}
    return [s.id for s in column.report.scenarios if s.id not in shown]


def _transcribes_nothing(feature: FeatureDoc) -> bool:
    return not any(s.spec_hash for s in feature.scenarios)


def _implementation(report: Report) -> str:
    adapter = report.environment.adapter or {}
    return str(adapter.get("name") or "unknown implementation")


def _engine(report: Report) -> str:
    milvus = report.environment.milvus or {}
    parts = [str(milvus[k]) for k in ("backend", "version") if milvus.get(k)]
    return " ".join(parts) or "no engine recorded"


def _slug(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.") or "x"


def _read_report(path: Path) -> Report:
    if path.is_dir():
        path = path / "report.json"  # a report directory works as well as its report.json
    try:
        return Report.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise DocsError(f"cannot read report {path}: {exc}; pass a report.json or its directory") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the top level"
        raise DocsError(
            f"{path} is not a conformance report of this kit ({first['msg']} at {where}); "
            "pass a report.json written by 'rag-conformance run'"
        ) from None


def load_columns(paths: Sequence[str | Path]) -> list[Column]:
    """Read the reports, in the order given, and give each a unique label and slug.

    The label is the implementation's name; when two reports share it (one implementation on several
    engines), the engine is added, and a counter if that is still not enough.
    """
    if not paths:
        raise DocsError("no reports given; pass --results report.json at least once")
    reports = [(str(p), _read_report(Path(p))) for p in paths]
    names = [_implementation(r) for _, r in reports]
    labels = [
        name if names.count(name) == 1 else f"{name} ({_engine(r)})"
        for name, (_, r) in zip(names, reports, strict=True)
    ]
    columns: list[Column] = []
    seen: list[str] = []
    for label, (source, report) in zip(labels, reports, strict=True):
        seen.append(label)
        if labels.count(label) > 1:
            label = f"{label} #{seen.count(label)}"
        slug, n = _slug(label), 2
        while any(c.slug == slug for c in columns):  # labels may differ only where a file name cannot
            slug, n = f"{_slug(label)}-{n}", n + 1
        columns.append(Column(label=label, slug=slug, report=report, source=source))
    return columns


def pages_for(features: Sequence[FeatureDoc], spec: Spec) -> list[RequirementPage]:
    """One page per spec requirement (in spec order), then one per other ``@req`` (the engine checks).

    Feature files join a requirement by title, as coverage matches them. A requirement without a
    feature file still gets its page: the spec text, with no scenarios.
    """
    by_title: dict[str, list[FeatureDoc]] = {}
    for feature in features:
        by_title.setdefault(feature.title, []).append(feature)
    pages = []
    for requirement in spec.requirements:
        # The files transcribing spec scenarios first (the examples), then derived ones (properties...).
        joined = tuple(sorted(by_title.pop(requirement.title, ()), key=_transcribes_nothing))
        rid = joined[0].requirement_id if joined else _slug(requirement.title.lower())
        pages.append(RequirementPage(rid, requirement.title, joined, requirement))
    others: dict[str, list[FeatureDoc]] = {}
    for group in by_title.values():
        for feature in group:
            others.setdefault(feature.requirement_id, []).append(feature)
    pages += [RequirementPage(rid, group[0].title, tuple(group), None) for rid, group in others.items()]
    return pages


# -- words shared by the HTML and the Markdown pages ------------------------------------------------

STATUS_TEXT = {
    "passed": "passed",
    "failed": "FAILED",
    "errored": "ERRORED",
    "not_judged": "NOT JUDGED",
    "not_applicable": "n/a",
    "xfailed": "xfail",
    "skipped": "skipped",
}
NOT_RUN = "not run"


def status_text(result: ScenarioResult | None, requirement_id: str | None = None) -> str:
    """How a scenario's status reads in a cell; ``not run`` when the report lacks the scenario.

    On ``requirement_id``'s page, a failure of another requirement's rule is not this requirement's
    failure (the counts put it there): it reads ``stopped (breaks R3)``, as the row counts it."""
    if result is None:
        return NOT_RUN
    if stopped_here(result, requirement_id):
        return "stopped (breaks " + ", ".join(requirement_label(b) for b in broken_requirements(result)) + ")"
    return STATUS_TEXT[result.status]


def stopped_here(result: ScenarioResult | None, requirement_id: str | None) -> bool:
    """Whether ``result`` failed on another requirement's rule only: on this page, it is stopped."""
    return (
        result is not None
        and requirement_id is not None
        and result.status == "failed"
        and requirement_id not in broken_requirements(result)
    )


def counted_here(columns: Sequence[Column], page: RequirementPage) -> list[str]:
    """Ids of scenarios of other requirements whose failures count under ``page``'s requirement, in any
    column: the page lists them with its own, so its FAILED rows are the failures its counts give."""
    own = {s.id for s in page.scenarios}
    found = [
        s.id
        for c in columns
        for s in c.report.scenarios
        if s.id not in own and page.requirement_id in broken_requirements(s)
    ]
    return list(dict.fromkeys(found))


def counts_text(summary: Summary, blocked_by: Sequence[str] = ()) -> str:
    """``3/4 passed, 1 failed``: the passed share first, then only the counts that are not zero
    (scenarios stopped by another requirement's failure name it, ``1 stopped by R1``)."""
    stopped = "stopped by " + (", ".join(requirement_label(r) for r in blocked_by) or "another requirement")
    parts = [f"{summary.passed}/{summary.total} passed"]
    for name, n in (
        ("failed", summary.failed),
        ("errored", summary.errored),
        ("not judged", summary.not_judged),
        ("xfail", summary.xfailed),
        ("n/a", summary.not_applicable),
        ("skipped", summary.skipped),
        (stopped, summary.blocked),
    ):
        if n:
            parts.append(f"{n} {name}")
    return ", ".join(parts)


def judged_text(report: Report) -> str:
    """``7/12 judged (1 more in part), 7 passed``: the spec scenarios, as the table counts them."""
    tally = report.judged_spec()
    part = f" ({tally.partly_judged} more in part)" if tally.partly_judged else ""
    failed = f", {tally.failed} failed" if tally.failed else ""
    return f"{tally.judged}/{tally.total} judged{part}, {tally.passed} passed{failed}"


def verdict_detail(report: Report) -> str:
    """What the verdict judged, without the verdict word: the parenthesis of its text, or ''."""
    text = report.described_verdict()
    return text[len(report.verdict) :].strip().removeprefix("(").removesuffix(")")


def requirement_title(page: RequirementPage) -> str:
    """``R1 Primary score labels ...`` for a spec requirement; the title alone for the engine checks."""
    number = requirement_number(page.requirement_id)
    return f"{number} {page.title}" if number and page.spec is not None else page.title


def verdict_class(verdict: str | None) -> str:
    """CSS class suffix of a verdict: ``conforms``, ``does-not-conform``, ``not-judged``, ``not-run``..."""
    return (verdict or NOT_RUN).lower().replace(" ", "-")
