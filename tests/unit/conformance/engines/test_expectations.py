"""Known divergences: a matching one runs as a strict xfail; once the divergence is gone, the run fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.engines._expectations import ExpectationError, load_expectations, shipped_files

pytest_plugins = ["pytester"]

FEATURE = """\
@req:mini-engine
Feature: Miniature engine behaviour
  @id:scores-non-negative
  Scenario: Scores are non-negative
    When the fake engine scores a match
    Then the score is at least 0

  @id:untouched
  Scenario: A scenario no expectation names
    When the fake engine scores a match
    Then nothing more is asked
"""

# A fake engine stands in for the kit's: its server version is what expectations match, and NEGATE
# is the divergence. The test flips it to play "the engine was fixed".
STEPS = """\
import os

import pytest
from pytest_bdd import scenarios, then, when

scenarios("mini.feature")


class FakeEngine:
    def describe(self):
        return {"backend": "fake", "version": "fake_engine-3.2.2"}


@pytest.fixture(scope="session")
def rqs_engine():
    return FakeEngine()


@when("the fake engine scores a match", target_fixture="score")
def _(rqs_engine):
    return -0.7 if os.environ.get("NEGATE") == "1" else 0.7


@then("the score is at least 0")
def _(score):
    assert score >= 0, f"score {score} is negative"


@then("nothing more is asked")
def _():
    pass
"""

EXPECTATIONS = """\
[[expected_failure]]
scenario = "scores-non-negative"
engine = "fake_engine-3."
reason = "fake engine 3.x negates scores"
"""


@pytest.fixture
def mini(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".feature", mini=FEATURE)
    pytester.makepyfile(test_mini=STEPS)
    pytester.makefile(".toml", expectations=EXPECTATIONS)
    return pytester


def _run(pytester: pytest.Pytester, *extra: str) -> tuple[pytest.RunResult, dict[str, dict]]:
    result = pytester.runpytest("test_mini.py", "--rqs-report", "out", *extra)
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    return result, {s["id"]: s for s in report["scenarios"]}


def test_known_divergence_runs_as_strict_xfail_with_its_reason(
    mini: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEGATE", "1")
    result, by_id = _run(mini, "--rqs-expectations", "expectations.toml")
    result.assert_outcomes(passed=1, xfailed=1)
    assert by_id["scores-non-negative"]["status"] == "xfailed"
    assert "fake engine 3.x negates scores" in by_id["scores-non-negative"]["message"]
    assert "expectations.toml" in by_id["scores-non-negative"]["message"]
    assert by_id["untouched"]["status"] == "passed"


def test_removing_the_divergence_makes_the_run_fail_as_stale(
    mini: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEGATE", "0")  # the engine was fixed; the expectation still says it diverges
    result, by_id = _run(mini, "--rqs-expectations", "expectations.toml")
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret != 0
    scenario = by_id["scores-non-negative"]
    assert scenario["status"] == "failed"
    assert "stale expectation: remove it" in scenario["message"]
    assert "fake engine 3.x negates scores" in scenario["message"]


def test_an_expectation_for_another_engine_version_does_not_apply(
    mini: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    mini.makefile(".toml", expectations=EXPECTATIONS.replace("fake_engine-3.", "fake_engine-2."))
    monkeypatch.setenv("NEGATE", "1")
    _, by_id = _run(mini, "--rqs-expectations", "expectations.toml")
    assert by_id["scores-non-negative"]["status"] == "failed"
    assert "is negative" in by_id["scores-non-negative"]["message"]


def test_an_implementation_matches_by_adapter_name(
    mini: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = STEPS + (
        "\n\nclass Info:\n    name = 'acme'\n\n\n"
        "@pytest.fixture(scope='session')\ndef rqs_info():\n    return Info()\n"
    )
    mini.makepyfile(test_mini=steps)
    mini.makefile(".toml", expectations=EXPECTATIONS.replace('engine = "fake_engine-3."', 'adapter = "acme"'))
    monkeypatch.setenv("NEGATE", "1")
    _, by_id = _run(mini, "--rqs-expectations", "expectations.toml")
    assert by_id["scores-non-negative"]["status"] == "xfailed"


def test_an_invalid_expectations_file_is_a_usage_error(mini: pytest.Pytester) -> None:
    mini.makefile(".toml", expectations='[[expected_failure]]\nscenario = "x"\nengine = "y"\n')
    result = mini.runpytest("test_mini.py", "--rqs-expectations", "expectations.toml")
    result.stderr.fnmatch_lines(["*'reason' is missing*"])
    assert result.ret != 0


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[expected_failure]]\nscenario = "x"\nreason = "r"\n', "say whom it concerns"),
        ('[[expected_failure]]\nscenario = "x"\nreason = "r"\nengine = "e"\nwhen = "1"\n', "unknown key"),
        ('[[expected_failure]]\nscenario = ""\nreason = "r"\nengine = "e"\n', "non-empty string"),
        ('[expected_failure]\nscenario = "x"\n', "expected a table"),
        ("[[oops]]\n", "unknown top-level key"),
        ("not toml [", "cannot read"),
    ],
)
def test_invalid_entries_say_what_is_wrong(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ExpectationError, match=needle):
        load_expectations([path])


def test_the_kit_ships_lite_3_divergences_with_reasons() -> None:
    shipped = load_expectations(shipped_files())
    lite3 = {e.scenario: e for e in shipped if e.engine == "milvus_lite-3."}
    assert set(lite3) >= {"engine-bm25-scores-non-negative", "engine-rrf-k-outside-range-rejected"}
    assert "negated" in lite3["engine-bm25-scores-non-negative"].reason
    assert all(e.source.startswith("conformance/engines/expectations/") for e in shipped)
    assert lite3["engine-bm25-scores-non-negative"].applies(
        engine_version="milvus_lite-3.2.2", adapter_name=None
    )
    assert not lite3["engine-bm25-scores-non-negative"].applies(
        engine_version="milvus_lite-2.5.1", adapter_name=None
    )
