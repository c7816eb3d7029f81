"""The mutation matrix as data: its rows (``matrix.toml``), what a run against one miniature gave, the
whole selftest's result and verdicts, and the table ``rag-conformance selftest`` prints. Running the kit
over the miniatures is :mod:`._selftest`'s."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..boundary._errors import ConformanceError

__all__ = [
    "MatrixRow",
    "MiniatureResult",
    "SelftestResult",
    "format_selftest_matrix",
    "load_matrix",
    "miniature_verdict",
]

_CAUGHT = ("failed", "errored")


@dataclass(frozen=True)
class MatrixRow:
    """One row of the matrix: a miniature, the requirements it violates, and scenarios that must catch it."""

    name: str
    module: str
    kind: Literal["broken", "conforming", "noted"]
    caught_by: frozenset[str]
    violates: frozenset[str] = frozenset()
    notes: frozenset[str] = frozenset()
    advice: frozenset[str] = frozenset()
    freedoms: frozenset[str] = frozenset()

    def adapter(self, package: str) -> str:
        """The adapter address ``package.module:name`` that :func:`run_conformance` loads."""
        return f"{package}.{self.module}:{self.name}"


@dataclass
class MiniatureResult:
    """What one run against one miniature gave, compared with its expectation."""

    expectation: MatrixRow
    statuses: dict[str, str]  # scenario id -> status
    requirements: dict[str, str]  # scenario id -> requirement id
    seconds: float
    output: str = ""
    error: str | None = None
    interrupted: int | None = None  # the signal that stopped this miniature's run: the selftest stops
    broken: dict[str, tuple[str, ...]] = field(default_factory=dict)  # scenario id -> requirements broken
    noted: frozenset[str] = frozenset()  # rule ids the report noted, anywhere
    advised: frozenset[str] = frozenset()  # advice ids the report gave

    @property
    def caught_by(self) -> frozenset[str]:
        return frozenset(i for i, s in self.statuses.items() if s in _CAUGHT)

    @property
    def attributed(self) -> frozenset[str]:
        """Scenarios that failed it under one of the requirements it violates."""
        want = self.expectation.violates
        return frozenset(
            i for i, s in self.statuses.items() if s == "failed" and set(self.broken.get(i, ())) <= want
        )

    @property
    def caught(self) -> bool:
        """Caught under its named requirement (a conforming or noted one: failed or errored anywhere)."""
        if self.expectation.kind != "broken":
            return bool(self.caught_by)
        return bool(self.attributed)

    @property
    def unnoted(self) -> frozenset[str]:
        """Notes and advice the matrix expects that the report did not give."""
        return (self.expectation.notes - self.noted) | (self.expectation.advice - self.advised)

    @property
    def unexpected(self) -> frozenset[str]:
        """Scenarios that errored, or failed under a requirement the miniature does not violate."""
        return self.caught_by - self.attributed

    @property
    def missed(self) -> frozenset[str]:
        """Scenarios the matrix expects to catch the miniature that passed it (or never ran)."""
        return self.expectation.caught_by - self.caught_by

    @property
    def ok(self) -> bool:
        return self.error is None and not self.unexpected and not self.missed and not self.unnoted


@dataclass
class SelftestResult:
    """The whole matrix: per-miniature results, the seed that replays it, and the verdicts."""

    results: list[MiniatureResult]
    seed: int
    seconds: float
    scenario_ids: list[str] = field(default_factory=list)

    @property
    def broken(self) -> list[MiniatureResult]:
        return [r for r in self.results if r.expectation.kind == "broken"]

    @property
    def mutation_score(self) -> tuple[int, int]:
        """(caught, broken miniatures)."""
        return sum(r.caught for r in self.broken), len(self.broken)

    def scenarios_catching_nothing(self) -> list[str]:
        """Scenario ids that caught no broken miniature: spec text the miniatures do not exercise."""
        catching = {i for r in self.broken for i in r.attributed}
        return [i for i in self.scenario_ids if i not in catching]

    @property
    def ok(self) -> bool:
        """Every miniature behaved as the matrix says: no escape, no false alarm, no drift."""
        return all(r.ok for r in self.results)


def load_matrix(path: str | Path) -> list[MatrixRow]:
    """Read and check the matrix file; a mistake names the miniature and what to fix."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConformanceError(f"cannot read the mutation matrix {path}: {exc}") from None
    rows = data.get("miniatures")
    if not isinstance(rows, dict) or not rows:
        raise ConformanceError(f"{path} has no [miniatures.<Name>] tables")
    out = []
    for name, row in rows.items():
        kind = row.get("kind")
        caught_by = row.get("caught_by", [])
        violates = row.get("violates", [])
        if kind not in ("broken", "conforming", "noted") or not isinstance(row.get("module"), str):
            raise ConformanceError(
                f"{path}: miniature {name!r} needs module = '<module>' and kind = 'broken', 'conforming' "
                "or 'noted'"
            )
        if kind == "noted" and not row.get("notes"):
            raise ConformanceError(
                f"{path}: noted miniature {name!r} names no rule in notes (e.g. ['dropped'])"
            )
        if kind == "broken" and not violates:
            raise ConformanceError(
                f"{path}: broken miniature {name!r} names no requirement in violates (e.g. violates = "
                "['rank-order'])"
            )
        if kind != "broken" and (caught_by or violates):
            raise ConformanceError(
                f"{path}: {kind} miniature {name!r} must not list caught_by or violates: "
                "the kit must pass it everywhere"
            )
        out.append(
            MatrixRow(
                name=name,
                module=row["module"],
                kind=kind,
                caught_by=frozenset(caught_by),
                violates=frozenset(violates),
                notes=frozenset(row.get("notes", [])),
                advice=frozenset(row.get("advice", [])),
                freedoms=frozenset(row.get("freedoms", [])),
            )
        )
    return out


# -- presentation --------------------------------------------------------------------------------


def format_selftest_matrix(outcome: SelftestResult) -> str:
    """Miniature x requirement: how many scenarios of each requirement caught it, and the verdict."""
    requirements: dict[str, None] = {}
    for r in outcome.results:
        requirements.update(dict.fromkeys(r.requirements.values()))
    columns = list(requirements)
    header = ("miniature", "kind", *columns, "verdict")
    rows = []
    for r in outcome.results:
        per_req = {
            c: sum(1 for i in r.caught_by if c in (r.broken.get(i) or (r.requirements.get(i),)))
            for c in columns
        }
        rows.append(
            (
                r.expectation.name,
                r.expectation.kind,
                *(str(per_req[c] or ".") for c in columns),
                miniature_verdict(r),
            )
        )
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(row: Iterable[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()

    caught, broken = outcome.mutation_score
    lines = [line(header), line("-" * w for w in widths), *map(line, rows), ""]
    lines.append(f"mutation score: {caught}/{broken} broken miniatures caught")
    for r in outcome.results:
        if r.unexpected:
            shown = [
                f"{i} ({r.statuses[i]}: {', '.join(r.broken.get(i, ())) or 'no requirement'})"
                for i in sorted(r.unexpected)
            ]
            lines.append(f"  {r.expectation.name}: unexpected {', '.join(shown)}")
        if r.missed:
            lines.append(f"  {r.expectation.name}: expected to be caught by {sorted(r.missed)}, but passed")
        if r.unnoted:
            lines.append(f"  {r.expectation.name}: expected notes or advice {sorted(r.unnoted)}, not given")
        if r.error:
            lines.append(f"  {r.expectation.name}: {r.error}")
    idle = outcome.scenarios_catching_nothing()
    if idle:
        lines.append(f"scenarios that caught no broken miniature: {', '.join(idle)}")
    lines.append(f"seed {outcome.seed} (replay: --seed {outcome.seed}); {outcome.seconds:.0f} s")
    return "\n".join(lines)


def miniature_verdict(r: MiniatureResult) -> str:
    """One miniature's verdict, as the table and the progress lines show it."""
    if r.error:
        return "ERROR"
    if r.expectation.kind != "broken":
        if r.caught:
            return "FALSE ALARM"
        if r.unnoted:
            return "NOTE MISSING"
        return "passes (noted)" if r.expectation.kind == "noted" else "passes"
    if not r.caught:
        return "ESCAPED" if not r.caught_by else "MISATTRIBUTED"
    if r.unexpected:
        return "caught (+MISATTRIBUTED)"
    return "caught" if r.ok else "caught (MATRIX DRIFT)"
