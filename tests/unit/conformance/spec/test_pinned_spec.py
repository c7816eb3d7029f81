"""The spec parser: requirements, scenarios, and a hash that moves only when the words move."""

import hashlib

import pytest

from conformance.spec._paths import spec_path
from conformance.spec._pinned import SpecFormatError, parse_spec, read_spec, scenario_hash, spec_sha256

SMALL = """# demo Specification

## Requirements

### Requirement: Things SHALL work

Things SHALL work well.

#### Scenario: It works

- **WHEN** a thing is asked
- **THEN** it SHALL answer
- **AND** the answer SHALL be `42`

### Requirement: Nothing to see

Prose only.
"""


def test_pinned_spec_has_seven_requirements_and_twelve_scenarios():
    spec = read_spec(spec_path())
    assert [len(r.scenarios) for r in spec.requirements] == [3, 1, 2, 2, 2, 1, 1]
    assert spec.requirements[2].title == "Quality score SHALL be produced by a single normalizer"
    dense = spec.requirements[2].scenarios[0]
    assert dense.name == "Dense quality from L2"
    assert dense.lines == (
        "WHEN label is `dense` and score is L2 distance `d` with configured `maxL2Distance`",
        "THEN `qualityScore` SHALL equal `max(0, 1 - min(d, maxL2Distance) / maxL2Distance)` "
        "(null score → 0)",
    )
    assert spec.requirements[2].text.startswith("The pipeline SHALL compute a `qualityScore`")


def test_every_pinned_scenario_starts_with_when_and_has_a_then():
    for scenario in read_spec(spec_path()).scenarios:
        assert scenario.lines[0].startswith("WHEN "), scenario.name
        assert any(line.startswith("THEN ") for line in scenario.lines), scenario.name


def test_hash_is_sha256_of_the_normalized_lines_first_12_hex():
    scenario = parse_spec(SMALL).scenarios[0]
    text = "WHEN a thing is asked\nTHEN it SHALL answer\nAND the answer SHALL be `42`"
    assert scenario.hash == scenario_hash(scenario) == hashlib.sha256(text.encode()).hexdigest()[:12]


def test_hash_ignores_layout_but_not_words():
    base = parse_spec(SMALL).scenarios[0].hash
    relaid = SMALL.replace("- **WHEN** a thing is asked", "* WHEN   a thing\n  is asked")
    assert parse_spec(relaid).scenarios[0].hash == base
    assert parse_spec(SMALL.replace("`42`", "`43`")).scenarios[0].hash != base
    assert parse_spec(SMALL.replace("It works", "It still works")).scenarios[0].hash == base


def test_a_requirement_without_scenarios_is_kept():
    spec = parse_spec(SMALL)
    assert [r.title for r in spec.requirements] == ["Things SHALL work", "Nothing to see"]
    assert spec.requirements[1].scenarios == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# nothing here\n", "no '### Requirement:' heading"),
        ("#### Scenario: Orphan\n- **WHEN** x\n", "outside any requirement"),
        ("### Requirement: R\n#### Scenario: Empty\nprose\n", "has no WHEN/THEN/AND lines"),
    ],
)
def test_malformed_specs_are_rejected_with_a_reason(text, message):
    with pytest.raises(SpecFormatError, match=message):
        parse_spec(text)


def test_spec_sha256_is_the_file_digest(tmp_path):
    path = tmp_path / "spec.md"
    path.write_text(SMALL, encoding="utf-8")
    assert spec_sha256(path) == hashlib.sha256(SMALL.encode()).hexdigest() == read_spec(path).sha256


def test_unreadable_spec_says_so(tmp_path):
    with pytest.raises(SpecFormatError, match="cannot read the spec"):
        read_spec(tmp_path / "absent.md")
