"""The feature files as display values: what a reader of the site sees, parsed once.

pytest-bdd's parser is used (as in coverage), so the site shows the scenarios exactly as the kit runs
them. Its objects are mutable and tie steps to scenarios; these frozen copies carry only what a page
needs, so rendering cannot depend on pytest-bdd internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_bdd.parser import FeatureParser, Step

from ..boundary._errors import ConformanceError

__all__ = [
    "ExamplesDoc",
    "FeatureDoc",
    "FeatureReadError",
    "ScenarioDoc",
    "StepDoc",
    "background_gherkin",
    "read_features",
    "to_gherkin",
]

Table = tuple[tuple[str, ...], ...]
# Tags shown first, in this order; the others follow alphabetically (pytest-bdd keeps tags as a set).
_TAG_ORDER = ("id:", "req:", "spec:", "needs:", "derived", "property", "engine")


class FeatureReadError(ConformanceError):
    """A feature file the site cannot show; the message names it."""


@dataclass(frozen=True)
class StepDoc:
    keyword: str
    text: str
    table: Table = ()
    docstring: str | None = None


@dataclass(frozen=True)
class ExamplesDoc:
    name: str
    header: tuple[str, ...]
    rows: Table


@dataclass(frozen=True)
class ScenarioDoc:
    """One Gherkin scenario; ``id`` is its ``@id`` tag, the key of its results in every report."""

    id: str | None
    keyword: str
    name: str
    tags: tuple[str, ...]
    description: str
    steps: tuple[StepDoc, ...]
    examples: tuple[ExamplesDoc, ...]

    @property
    def spec_hash(self) -> str | None:
        """The ``@spec`` tag: which spec scenario text this transcribes (None when derived)."""
        return next((t.removeprefix("spec:") for t in self.tags if t.startswith("spec:")), None)

    @property
    def derived(self) -> bool:
        return "derived" in self.tags


@dataclass(frozen=True)
class FeatureDoc:
    """One feature file: one requirement (``@req`` id, title = the spec's requirement title)."""

    requirement_id: str
    title: str
    description: str
    tags: tuple[str, ...]
    background: tuple[StepDoc, ...]
    scenarios: tuple[ScenarioDoc, ...]
    path: str

    @property
    def engine(self) -> bool:
        """An ``@engine`` feature checks Milvus itself, not a spec requirement."""
        return "engine" in self.tags


def _ordered_tags(tags: set[str]) -> tuple[str, ...]:
    def key(tag: str) -> tuple[int, str]:
        rank = next((i for i, p in enumerate(_TAG_ORDER) if tag.startswith(p)), len(_TAG_ORDER))
        return rank, tag

    return tuple(sorted(tags, key=key))


def _step(step: Step) -> StepDoc:
    table: Table = ()
    if step.datatable is not None:
        table = tuple(tuple(cell.value for cell in row.cells) for row in step.datatable.rows)
    return StepDoc(keyword=step.keyword.strip(), text=step.name, table=table, docstring=step.docstring)


def read_features(root: Path) -> list[FeatureDoc]:
    """Every ``*.feature`` under ``root``, sorted by path; :class:`FeatureReadError` names a bad file."""
    features = []
    for path in sorted(Path(root).rglob("*.feature")):
        rel = path.relative_to(root).as_posix()
        try:
            feature = FeatureParser(str(path.parent), path.name).parse()
        except Exception as exc:  # pytest-bdd raises several kinds; all mean "cannot show this file"
            raise FeatureReadError(f"cannot parse {rel}: {exc}; run 'rag-conformance coverage'") from None
        req = next((t.removeprefix("req:") for t in feature.tags if t.startswith("req:")), None)
        scenarios = []
        for template in feature.scenarios.values():
            own_steps = template.steps[len(template.all_background_steps) :]
            scenarios.append(
                ScenarioDoc(
                    id=next((t.removeprefix("id:") for t in template.tags if t.startswith("id:")), None),
                    keyword=template.keyword,
                    name=template.name,
                    tags=_ordered_tags(template.tags),
                    description=(template.description or "").strip(),
                    steps=tuple(_step(s) for s in own_steps),
                    examples=tuple(
                        ExamplesDoc(
                            name=e.name or "",
                            header=tuple(e.example_params),
                            rows=tuple(tuple(row) for row in e.examples),
                        )
                        for e in template.examples
                        if e.example_params
                    ),
                )
            )
        background = feature.background.steps if feature.background else []
        features.append(
            FeatureDoc(
                requirement_id=req or path.stem,  # an untagged file still gets a page, named after it
                title=feature.name,
                description=(feature.description or "").strip(),
                tags=_ordered_tags(feature.tags),
                background=tuple(_step(s) for s in background),
                scenarios=tuple(scenarios),
                path=rel,
            )
        )
    return features


# -- plain Gherkin text, for the Markdown pages (GitHub highlights ```gherkin blocks) ---------------


def _table_lines(rows: Table, indent: str) -> list[str]:
    if not rows:
        return []
    escaped = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in escaped if i < len(row)) for i in range(max(map(len, escaped)))]
    # A ragged row (Gherkin forbids them, but be safe) keeps its own cells: strict=False on purpose.
    return [
        indent + "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + " |"
        for row in escaped
    ]


def _step_lines(steps: tuple[StepDoc, ...], indent: str) -> list[str]:
    lines = []
    for step in steps:
        lines.append(f"{indent}{step.keyword} {step.text}")
        lines += _table_lines(step.table, indent + "  ")
        if step.docstring is not None:
            lines += [indent + '  """', *(indent + "  " + line for line in step.docstring.splitlines())]
            lines.append(indent + '  """')
    return lines


def to_gherkin(scenario: ScenarioDoc) -> str:
    """The scenario as Gherkin source text, tables aligned."""
    lines = [" ".join("@" + tag for tag in scenario.tags)] if scenario.tags else []
    lines.append(f"{scenario.keyword}: {scenario.name}")
    if scenario.description:
        lines += ["  " + line for line in scenario.description.splitlines()]
    lines += _step_lines(scenario.steps, "  ")
    for examples in scenario.examples:
        lines += ["", f"  Examples: {examples.name}".rstrip()]
        lines += _table_lines((examples.header, *examples.rows), "    ")
    return "\n".join(lines)


def background_gherkin(feature: FeatureDoc) -> str:
    """The feature's Background as Gherkin text ('' when it has none)."""
    if not feature.background:
        return ""
    return "\n".join(["Background:", *_step_lines(feature.background, "  ")])
