"""Read the pinned OpenSpec markdown: requirements, their scenarios, and a hash per scenario text.

The hash is what a Gherkin scenario records in its ``@spec:<hash>`` tag. When someone edits a spec
scenario's WHEN/THEN/AND lines, the hash changes and coverage reports the transcription as stale, so a
feature file can never silently keep testing an older wording.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..boundary._errors import ConformanceError

__all__ = [
    "HASH_LENGTH",
    "Requirement",
    "Spec",
    "SpecFormatError",
    "SpecScenario",
    "normalize_line",
    "parse_spec",
    "read_spec",
    "scenario_hash",
    "spec_sha256",
]

HASH_LENGTH = 12

_REQUIREMENT = re.compile(r"^###\s+Requirement:\s*(?P<title>.+?)\s*$")
_SCENARIO = re.compile(r"^####\s+Scenario:\s*(?P<name>.+?)\s*$")
_HEADING = re.compile(r"^#{1,6}\s")
# "- **WHEN** text", also tolerating "* WHEN text" and a missing bold.
_STEP = re.compile(r"^\s*[-*]\s+(?:\*\*)?(?P<keyword>GIVEN|WHEN|THEN|AND|BUT)(?:\*\*)?\s+(?P<text>.+?)\s*$")


class SpecFormatError(ConformanceError):
    """The spec markdown does not have the OpenSpec shape the kit reads."""


class SpecScenario(BaseModel):
    """One ``#### Scenario:`` block: its name and its normalized WHEN/THEN/AND lines."""

    model_config = ConfigDict(frozen=True)

    requirement: str
    name: str
    lines: tuple[str, ...]
    line_number: int

    @property
    def hash(self) -> str:
        """The ``@spec:`` tag value a faithful transcription carries."""
        return scenario_hash(self)


class Requirement(BaseModel):
    """One ``### Requirement:`` block: title, prose and scenarios, in spec order."""

    model_config = ConfigDict(frozen=True)

    title: str
    text: str
    scenarios: tuple[SpecScenario, ...]
    line_number: int


class Spec(BaseModel):
    """A parsed spec file."""

    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str
    requirements: tuple[Requirement, ...]

    @property
    def scenarios(self) -> tuple[SpecScenario, ...]:
        """Every scenario of every requirement, in spec order."""
        return tuple(s for r in self.requirements for s in r.scenarios)


def normalize_line(keyword: str, text: str) -> str:
    """``WHEN text`` with bold markers dropped and whitespace collapsed.

    Layout edits (re-wrapping, ``**`` emphasis, bullet style) must not count as a change of meaning;
    anything else, including backticks and punctuation, does.
    """
    cleaned = " ".join(text.replace("**", "").split())
    return f"{keyword.upper()} {cleaned}"


def scenario_hash(scenario: SpecScenario) -> str:
    """sha256 of the scenario's normalized lines joined by newlines, first 12 hex digits.

    The name is not hashed: a rename is a different scenario (coverage reports it missing), while a
    changed WHEN/THEN under the same name is a stale transcription.
    """
    digest = hashlib.sha256("\n".join(scenario.lines).encode("utf-8")).hexdigest()
    return digest[:HASH_LENGTH]


def spec_sha256(path: Path) -> str:
    """sha256 of the spec file's bytes, recorded in reports so a result names the text it judged."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_spec(path: Path) -> Spec:
    """Parse the spec file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecFormatError(f"cannot read the spec {path}: {exc}; pass the pinned spec's path") from None
    return parse_spec(text, path=str(path), sha256=spec_sha256(path))


def parse_spec(text: str, *, path: str = "<string>", sha256: str | None = None) -> Spec:
    """Parse OpenSpec markdown into requirements and scenarios.

    Only ``### Requirement:`` and ``#### Scenario:`` headings and the keyword bullets under a scenario
    matter. Any other heading ends the current requirement. A requirement without scenarios is kept
    (coverage has nothing to check for it); a scenario without keyword lines is an error, because its
    hash would say nothing.
    """
    builder = _Builder(path)
    for number, line in enumerate(text.splitlines(), start=1):
        builder.feed(number, line)
    requirements = builder.finish()
    if not requirements:
        raise SpecFormatError(f"{path}: no '### Requirement:' heading found; is this an OpenSpec spec?")
    digest = sha256 or hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Spec(path=path, sha256=digest, requirements=requirements)


class _Builder:
    """Line-by-line state of :func:`parse_spec`; kept out of the public API."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.requirements: list[Requirement] = []
        self.requirement: tuple[str, int] | None = None
        self.prose: list[str] = []
        self.scenarios: list[SpecScenario] = []
        self.scenario: tuple[str, int] | None = None
        self.lines: list[str] = []

    def feed(self, number: int, line: str) -> None:
        if match := _REQUIREMENT.match(line):
            self._close_requirement()
            self.requirement = (match["title"], number)
        elif match := _SCENARIO.match(line):
            if self.requirement is None:
                where = f"{self.path}:{number}"
                raise SpecFormatError(f"{where}: scenario {match['name']!r} is outside any requirement")
            self._close_scenario()
            self.scenario = (match["name"], number)
        elif _HEADING.match(line):
            self._close_requirement()
        elif self.scenario is not None:
            if match := _STEP.match(line):
                self.lines.append(normalize_line(match["keyword"], match["text"]))
            elif line.strip() and self.lines and line.startswith((" ", "\t")):
                # A wrapped bullet continues the previous keyword line.
                self.lines[-1] += " " + " ".join(line.replace("**", "").split())
        elif self.requirement is not None and line.strip():
            self.prose.append(line.strip())

    def finish(self) -> tuple[Requirement, ...]:
        self._close_requirement()
        return tuple(self.requirements)

    def _close_scenario(self) -> None:
        if self.scenario is None or self.requirement is None:
            return
        name, number = self.scenario
        if not self.lines:
            raise SpecFormatError(f"{self.path}:{number}: scenario {name!r} has no WHEN/THEN/AND lines")
        requirement = self.requirement[0]
        lines = tuple(self.lines)
        scenario = SpecScenario(requirement=requirement, name=name, lines=lines, line_number=number)
        self.scenarios.append(scenario)
        self.scenario = None
        self.lines = []

    def _close_requirement(self) -> None:
        self._close_scenario()
        if self.requirement is not None:
            title, number = self.requirement
            prose, scenarios = " ".join(self.prose), tuple(self.scenarios)
            self.requirements.append(
                Requirement(title=title, text=prose, scenarios=scenarios, line_number=number)
            )
        self.requirement = None
        self.prose = []
        self.scenarios = []
