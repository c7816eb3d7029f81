"""The plugin end to end on a miniature feature: tags, capability check, statuses, report, JUnit."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

FEATURE = """\
@req:mini
Feature: Miniature requirement SHALL hold
  @id:adds-up @needs:labels
  Scenario: Labels come back canonical
    When the implementation canonicalizes "rrf_fused"
    Then the answer is "hybrid"

  @id:crashes @needs:quality
  Scenario: A crash is an error, not a failure
    When the implementation computes a quality
    Then nothing more is asked

  @id:needs-search @needs:search
  Scenario: Undeclared capability
    When the implementation canonicalizes "dense"
    Then the answer is "dense"

  @id:outline @needs:labels @derived
  Scenario Outline: Outline examples fold into one scenario
    When the implementation canonicalizes "<label>"
    Then the answer is "<canonical>"

    Examples:
      | label       | canonical |
      | l2_distance | dense     |
      | rrf_fused   | hybrid    |
"""

STEPS = """\
from pytest_bdd import parsers, scenarios, then, when
from conformance.boundary._asking import ask
from conformance.boundary._protocol import QualityRequest

scenarios("mini.feature")


@when(parsers.parse('the implementation canonicalizes "{label}"'), target_fixture="answer")
def _(rqs_implementation, label):
    return ask(rqs_implementation, "canonicalize_label", label)


@when("the implementation computes a quality", target_fixture="answer")
def _(rqs_implementation):
    request = QualityRequest(score_label="dense", score=0.5)
    return ask(rqs_implementation, "quality_score", request)


@then(parsers.parse('the answer is "{expected}"'))
def _(answer, expected):
    assert answer == expected, f"spec requires {expected!r}, implementation answered {answer!r}"


@then("nothing more is asked")
def _():
    pass
"""

ADAPTER = """\
from conformance import Capability, ImplementationInfo

ALIASES = {"l2_distance": "dense", "rrf_fused": "hybrid", "dense": "dense", "hybrid": "hybrid"}


class Fake:
    def __init__(self, wrong=False):
        self.wrong = wrong

    def describe(self):
        return ImplementationInfo(name="fake", version="0.0.1",
                                  capabilities={Capability.LABELS, Capability.QUALITY})

    def canonicalize_label(self, label):
        return "dense" if self.wrong else ALIASES[label]

    def quality_score(self, request):
        raise ZeroDivisionError("boom")

    def post_process(self, request): ...
    def prepare(self, endpoint, corpus): ...
    def search(self, request): ...
    def lookup(self, request): ...
    def close(self): ...


def wrong():
    return Fake(wrong=True)


class Incomplete:
    def describe(self): ...


class Labels:
    def describe(self):
        return {"name": "labels-only", "version": "1", "capabilities": ["labels"]}
"""


@pytest.fixture
def mini(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".feature", mini=FEATURE)
    pytester.makepyfile(test_mini=STEPS, fake_adapter=ADAPTER)
    pytester.syspathinsert()
    return pytester


def _report(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "out" / "report.json").read_text())


def test_statuses_and_report(mini: pytest.Pytester) -> None:
    result = mini.runpytest("test_mini.py", "--rqs-adapter", "fake_adapter:Fake", "--rqs-report", "out")
    result.assert_outcomes(passed=3, failed=1, skipped=1)
    report = _report(mini)
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert by_id["adds-up"]["status"] == "passed"
    assert by_id["crashes"]["status"] == "errored"
    assert "ZeroDivisionError" in by_id["crashes"]["message"]
    assert by_id["crashes"]["message"].startswith("step 'When the implementation computes a quality'")
    assert "'fake'" in by_id["crashes"]["message"]
    assert "quality_score" in by_id["crashes"]["message"]
    assert by_id["needs-search"]["status"] == "not_applicable"
    assert "'search'" in by_id["needs-search"]["message"]
    assert by_id["outline"]["status"] == "passed"
    assert by_id["outline"]["examples"] == 2
    assert by_id["outline"]["derived"] is True
    assert report["summary"] == {
        "passed": 2,
        "failed": 0,
        "errored": 1,
        "not_judged": 0,
        "not_applicable": 1,
        "xfailed": 0,
        "skipped": 0,
        "total": 4,
        "blocked": 0,
    }
    assert report["verdict"] == "DOES NOT CONFORM"
    env = report["environment"]
    assert env["adapter"]["name"] == "fake"
    assert env["adapter"]["version"] == "0.0.1"
    assert len(env["spec_sha256"] or "x" * 64) == 64
    assert (mini.path / "out" / "junit.xml").is_file()
    result.stdout.fnmatch_lines(
        ["*rag-retrieval-quality-score conformance*", "*Miniature requirement*DOES NOT CONFORM*"]
    )


def test_wrong_answer_is_failed_with_the_spec_message(mini: pytest.Pytester) -> None:
    mini.runpytest("test_mini.py", "--rqs-adapter", "fake_adapter:wrong", "--rqs-report", "out")
    by_id = {s["id"]: s for s in _report(mini)["scenarios"]}
    assert by_id["adds-up"]["status"] == "failed"
    assert "spec requires 'hybrid'" in by_id["adds-up"]["message"]
    assert by_id["adds-up"]["message"].startswith("step 'Then the answer is \"hybrid\"'")
    assert by_id["outline"]["status"] == "failed"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("no_such_module:X", "cannot import module 'no_such_module'"),
        ("fake_adapter:Nope", "has no 'Nope'"),
        ("fake_adapter:Incomplete", "describe() must return an ImplementationInfo"),
        ("fake_adapter:Labels", "capability 'labels' needs canonicalize_label"),
        ("nobody", "no adapter named 'nobody'"),
    ],
)
def test_bad_adapter_is_one_usage_error_and_a_not_judged_report(
    mini: pytest.Pytester, spec: str, needle: str
) -> None:
    result = mini.runpytest("test_mini.py", "--rqs-adapter", spec, "--rqs-report", "out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count(needle) == 1, result.stderr.str()
    assert "could not judge" in result.stderr.str()
    result.stdout.fnmatch_lines(["*no tests ran*"])  # no scenario ran, so none repeats the cause
    report = _report(mini)
    assert report["verdict"] == "NOT JUDGED"
    assert report["scenarios"] == []
    assert needle in report["reason"]
    junit = (mini.path / "out" / "junit.xml").read_text()
    assert junit.count("<error") == 1
    assert needle.replace("'", "&apos;") in junit or needle in junit


def test_unknown_tag_is_rejected_by_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makefile(".feature", mini=FEATURE.replace("@id:adds-up", "@id:adds-up @typo"))
    pytester.makepyfile(test_mini=STEPS, fake_adapter=ADAPTER)
    pytester.syspathinsert()
    result = pytester.runpytest("test_mini.py", "--strict-markers", "--rqs-adapter", "fake_adapter:Fake")
    result.stdout.fnmatch_lines(["*'typo' not found in `markers` configuration option*"])


def test_importing_the_plugin_starts_nothing(pytester: pytest.Pytester) -> None:
    code = (
        "import sys, conformance.plugin\n"
        "heavy = ('pymilvus', 'milvus_lite', 'reference', 'testcontainers')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    result = pytester.run(__import__("sys").executable, "-c", code)
    assert result.ret == 0, result.stderr.str()


def test_the_library_api_is_public() -> None:
    import conformance

    public = ("run_conformance", "RunOutcome", "load_adapter", "Implementation", "ConformanceError")
    for name in (*public, "BASE_CAPABILITIES", "PURE_CAPABILITIES"):  # what adapters need, exported
        assert name in conformance.__all__
        assert getattr(conformance, name) is not None
