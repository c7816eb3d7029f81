"""Coverage of the pinned spec by the feature files, and that coverage notices when they drift apart."""

import shutil
from pathlib import Path

import pytest

from conformance.commands._coverage import Status, check_coverage, coverage_main
from conformance.spec._paths import features_dir, spec_path

EXTRA = """\
@req:rank-order
Feature: Post-process SHALL preserve retrieval rank order

  @id:an-invented-rule @needs:post_process{tags}
  Scenario: An invented rule
    Given no candidates
    When post-process runs
    Then no evidence block is accepted
"""


@pytest.fixture
def features(tmp_path: Path) -> Path:
    """A copy of the kit's feature files (without the spec), free to edit."""
    copy = tmp_path / "features"
    shutil.copytree(features_dir(), copy, ignore=shutil.ignore_patterns("spec"))
    return copy


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """A copy of the pinned spec, free to edit."""
    copy = tmp_path / "spec.md"
    shutil.copy(spec_path(), copy)
    return copy


def _remove_scenario(feature: Path, scenario_id: str) -> None:
    """Cut one tagged scenario (tag line to the next tag line) out of a feature file."""
    lines = feature.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if f"@id:{scenario_id}" in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("@id:")), len(lines))
    feature.write_text("".join(lines[:start] + lines[end:]), encoding="utf-8")


def test_the_repository_has_no_stale_or_extra_scenarios():
    report = check_coverage(features_dir(), spec_path())
    assert not report.by_status(Status.DIFFERENT_TEXT)
    assert not report.extras
    assert not report.file_problems
    assert not report.step_problems


def test_the_repository_covers_every_spec_scenario(capsys):
    assert coverage_main(None) == 0, capsys.readouterr().out
    assert "coverage OK" in capsys.readouterr().out


def test_a_removed_scenario_is_reported_missing_by_name(features, capsys):
    _remove_scenario(features / "single_normalizer.feature", "dense-quality-from-l2")
    report = check_coverage(features, spec_path())
    assert [s.name for s in report.by_status(Status.MISSING)] == ["Dense quality from L2"]
    assert coverage_main(None, features=features) == 1
    out = capsys.readouterr().out
    assert "Dense quality from L2" in out
    assert "missing" in out
    assert "coverage FAILED" in out


def test_an_edited_spec_scenario_is_reported_as_different_text(spec):
    text = spec.read_text(encoding="utf-8")
    edited = text.replace("1 - min(d, maxL2Distance) / maxL2Distance", "1 - d / maxL2Distance")
    assert edited != text
    spec.write_text(edited, encoding="utf-8")
    report = check_coverage(features_dir(), spec)
    stale = report.by_status(Status.DIFFERENT_TEXT)
    assert [s.name for s in stale] == ["Dense quality from L2"]
    assert "6d62a7601ae4" in stale[0].detail  # the text the Gherkin was written from
    assert not report.ok


def test_an_extra_scenario_must_be_derived(features):
    (features / "invented.feature").write_text(EXTRA.format(tags=""), encoding="utf-8")
    report = check_coverage(features, spec_path())
    assert [e.name for e in report.extras] == ["An invented rule"]
    assert not report.ok

    (features / "invented.feature").write_text(EXTRA.format(tags=" @derived"), encoding="utf-8")
    report = check_coverage(features, spec_path())
    assert not report.extras
    assert any("An invented rule" in d for d in report.derived)


def test_a_renamed_scenario_points_at_its_spec_text(features):
    path = features / "rank_order.feature"
    path.write_text(path.read_text(encoding="utf-8").replace("Keyword overlap does not", "Keywords do not"))
    report = check_coverage(features, spec_path())
    missing = [s.name for s in report.by_status(Status.MISSING)]
    assert missing == ["Keyword overlap does not promote lower rank"]
    assert "renamed?" in report.extras[0].reason


def test_a_missing_spec_tag_is_reported(features):
    path = features / "quality_gates.feature"
    path.write_text(path.read_text(encoding="utf-8").replace(" @spec:dbb61ba9905e", ""))
    report = check_coverage(features, spec_path())
    assert [s.name for s in report.by_status(Status.UNTAGGED)] == ["PRECISE does not require hint support"]


def test_unbound_steps_and_empty_features_are_reported(features):
    body = EXTRA.format(tags=" @derived").replace("no evidence block is accepted", "the moon is green")
    (features / "invented.feature").write_text(body, encoding="utf-8")
    (features / "empty.feature").write_text("Feature: Nothing yet\n", encoding="utf-8")
    report = check_coverage(features, spec_path())
    assert [(p.step, p.problem) for p in report.step_problems] == [
        ("then 'the moon is green'", "no step definition binds it")
    ]
    assert [(p.where, p.problem) for p in report.file_problems] == [("empty.feature", "has no scenarios")]


def test_outline_steps_are_checked_per_example(features):
    path = features / "quality_gates.feature"
    # "the top qualityScore is {expected:g}" binds numbers only: one bad Examples row, one unbound step.
    edited = path.read_text(encoding="utf-8").replace(
        "| 0.2     | 0.9     | no  |", "| 0.2     | high    | no  |"
    )
    path.write_text(edited, encoding="utf-8")
    problems = check_coverage(features, spec_path()).step_problems
    assert [(p.step, p.problem) for p in problems] == [
        ("then 'the top qualityScore is high'", "no step definition binds it")
    ]


def test_duplicate_ids_are_reported(features):
    body = EXTRA.format(tags=" @derived").replace("an-invented-rule", "no-accepted-evidence-is-low-quality")
    (features / "invented.feature").write_text(body, encoding="utf-8")
    problems = check_coverage(features, spec_path()).file_problems
    assert any("@id:no-accepted-evidence-is-low-quality is also used" in p.problem for p in problems)
