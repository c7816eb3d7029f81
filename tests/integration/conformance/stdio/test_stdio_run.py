"""Whole runs over stdio: each fault gets its status and message, the run always completes, and the
Python example passes every scenario of the capabilities it declares."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from conformance.commands._runner import run_conformance

from ._stdio_miniatures import EXAMPLE_VARIANT, TEMPLATE

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[4]

FEATURE = """\
@req:mini
Feature: Miniature requirement over stdio
  @id:quality-first @needs:quality
  Scenario: The faulty call
    When the implementation computes a quality
    Then it is a number

  @id:labels-after @needs:labels
  Scenario: The next call still works
    When the implementation canonicalizes "rrf_fused"
    Then the answer is "hybrid"
"""

STEPS = """\
from pytest_bdd import parsers, scenarios, then, when
from conformance.boundary._asking import ask
from conformance.boundary._protocol import QualityRequest

scenarios("mini.feature")


@when("the implementation computes a quality", target_fixture="answer")
def _(rqs_implementation):
    request = QualityRequest(score_label="dense", score=1.0)
    return ask(rqs_implementation, "quality_score", request)


@when(parsers.parse('the implementation canonicalizes "{label}"'), target_fixture="answer")
def _(rqs_implementation, label):
    return ask(rqs_implementation, "canonicalize_label", label)


@then("it is a number")
def _(answer):
    assert isinstance(answer, float)


@then(parsers.parse('the answer is "{expected}"'))
def _(answer, expected):
    assert answer == expected
"""


def _mini_run(pytester: pytest.Pytester, fault: str, *options: str, feature: str = FEATURE) -> dict:
    pytester.makefile(".feature", mini=feature)
    pytester.makepyfile(test_mini=STEPS)
    script = pytester.path / "fault.py"
    script.write_text(TEMPLATE.format(fault=fault, state=str(pytester.path / "state"), token="t"))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    pytester.runpytest(
        "test_mini.py",
        "--rqs-adapter-cmd",
        command,
        "--rqs-adapter-timeout",
        "1",
        "--rqs-report",
        "out",
        *options,
    )
    return json.loads((pytester.path / "out" / "report.json").read_text())


@pytest.mark.parametrize(
    ("fault", "status", "needle"),
    [
        ("crash", "errored", "exited (code 3) before replying"),
        ("hang", "errored", "no reply within 1 s"),
        ("garbage", "errored", "no reply within 1 s"),  # a non-JSON line, and then nothing
        ("invalid", "errored", "does not fit the quality_score reply's shape"),
        ("string-number", "errored", "expected a number, got str '0.5'"),
        ("nan", "errored", "is not JSON: result is NaN"),  # Gson's bare NaN: invalid, not out of range
        ("noise", "passed", None),
        ("slow", "passed", None),
        ("skip", "not_applicable", "no normalizer in this build"),
        ("error", "errored", "ValueError: bad label"),
    ],
)
def test_each_fault_gets_its_status_and_the_run_completes(
    pytester: pytest.Pytester, fault: str, status: str, needle: str | None
) -> None:
    report = _mini_run(pytester, fault)
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert by_id["quality-first"]["status"] == status, by_id["quality-first"]
    if needle is not None:
        assert needle in by_id["quality-first"]["message"]
    assert by_id["labels-after"]["status"] == "passed", by_id["labels-after"]  # restarted if it died
    if fault == "crash":
        assert "about to fail" in by_id["quality-first"]["message"]  # the tail of its stderr
    if fault == "noise":
        assert len(report["warnings"]) == 1
        assert "'computing quality...'" in report["warnings"][0]


def test_a_run_reports_the_handshakes_own_fields_and_no_default_language(
    pytester: pytest.Pytester,
) -> None:
    report = _mini_run(pytester, "handshake-extra")
    assert report["environment"]["adapter"]["extra"] == {"vendor": {"team": "acme", "build": 7}}
    assert report["environment"]["adapter"]["language"] is None  # it did not say; never "python"
    assert any("fields the protocol does not define: vendor" in n for n in report["notes"]), report["notes"]
    assert any("does not say its language" in n for n in report["notes"]), report["notes"]
    assert report["verdict"] == "CONFORMS"  # reported, never failed


def test_strict_stdout_errors_the_noisy_call_and_only_that_one(pytester: pytest.Pytester) -> None:
    report = _mini_run(pytester, "noise", "--rqs-strict-stdout")
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert by_id["quality-first"]["status"] == "errored"
    assert "'computing quality...' is not JSON" in by_id["quality-first"]["message"]
    assert "--strict-stdout" in by_id["quality-first"]["message"]
    assert by_id["labels-after"]["status"] == "passed"
    assert report["warnings"] == []


# Five quality scenarios, then labels: the program crashes on every quality call.
QUALITY_SCENARIO = """
  @id:quality-{n} @needs:quality
  Scenario: Quality call {n}
    When the implementation computes a quality
    Then it is a number
"""
MANY = (
    "@req:mini\nFeature: Miniature requirement over stdio\n"
    + "".join(QUALITY_SCENARIO.format(n=n) for n in range(1, 6))
    + "\n"
    + FEATURE[FEATURE.index("  @id:labels-after") :]
)


def test_after_the_restart_limit_one_capability_errors_with_one_reason_and_others_run(
    pytester: pytest.Pytester,
) -> None:
    report = _mini_run(pytester, "crash", feature=MANY)
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert [by_id[f"quality-{n}"]["status"] for n in range(1, 6)] == ["errored"] * 5
    assert all("exited (code 3)" in by_id[f"quality-{n}"]["message"] for n in range(1, 4))
    given_up = {by_id[f"quality-{n}"]["message"] for n in (4, 5)}
    assert len(given_up) == 1, given_up  # one shared reason
    assert "stopped asking it for quality" in given_up.pop()
    assert by_id["labels-after"]["status"] == "passed"


def _applicable_all_passed(report_dir: Path) -> tuple[dict[str, int], list[str]]:
    report = json.loads((report_dir / "report.json").read_text())
    bad = [
        f"{s['id']}: {s['status']}: {s['message']}" for s in report["scenarios"] if s["status"] != "passed"
    ]
    return report["summary"], [b for b in bad if ": not_applicable: " not in b]


# Engine checks judge Milvus, not the implementation; they have their own tests.
NOT_ENGINE = ["-m", "not rqs_engine_check"]


def test_the_python_example_passes_its_declared_capabilities(tmp_path: Path) -> None:
    example = ROOT / "examples" / "python-stdio" / "impl.py"
    command = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(example))}"
    outcome = run_conformance(command, report_dir=tmp_path, validate=True, pytest_args=NOT_ENGINE)
    summary, problems = _applicable_all_passed(tmp_path)
    assert not problems, problems
    assert summary["passed"] >= 10
    assert summary["not_applicable"] >= 1  # search and lookup scenarios: not declared
    assert outcome.exit_code == 0


# -- the Python example with one thing changed, judged by the kit's own scenarios --------------------

# One or two scenarios of each capability the example declares (spec scenario names, which stay put).
ONE_PER_CAPABILITY = (
    "legacy_aliases_canonicalize or dense_quality_from_l2 or keyword_overlap or structural_caps "
    "or low_quality_uses_top"
)


def _needs_by_id() -> dict[str, set[str]]:
    from conformance.site._gherkin import read_features
    from conformance.spec._paths import features_dir

    return {
        s.id: {t.removeprefix("needs:") for t in s.tags if t.startswith("needs:")}
        for f in read_features(features_dir())
        for s in f.scenarios
        if s.id
    }


def _variant_run(tmp_path: Path, mode: str, **options: object) -> tuple[int, dict]:
    example = ROOT / "examples" / "python-stdio" / "impl.py"
    tmp_path.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "variant.py"
    script.write_text(EXAMPLE_VARIANT.format(example=str(example)))
    command = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))} {mode}"
    out = tmp_path / "out"
    outcome = run_conformance(
        command, report_dir=out, select=ONE_PER_CAPABILITY, pytest_args=NOT_ENGINE, **options
    )
    return outcome.exit_code, json.loads((out / "report.json").read_text())


def test_invalid_replies_of_one_capability_error_only_its_scenarios(tmp_path: Path) -> None:
    code, report = _variant_run(tmp_path, "invalid-post-process")
    needs = _needs_by_id()
    post = [s for s in report["scenarios"] if "post_process" in needs[s["id"]]]
    others = [s for s in report["scenarios"] if "post_process" not in needs[s["id"]]]
    assert post, "the selection must reach post_process scenarios"
    assert others, "and scenarios of the other capabilities"
    for scenario in post:
        # isLowQuality "perhaps": text where a flag belongs fails the rule owning the field, R5 (readings
        # 23), with the wire error in the message; a reply that is wrong in other ways too is ERRORED.
        if scenario["status"] == "failed":
            assert scenario["broken_numbers"] == ["R5"], scenario
            assert "isLowQuality on the wire: expected a JSON boolean" in scenario["message"]
        else:
            assert scenario["status"] == "errored", scenario
            assert "does not fit the post_process reply's shape" in scenario["message"]
        assert "perhaps" in scenario["message"]  # what was received, quoted
    assert {s["status"] for s in others} == {"passed"}, others  # labels and quality still judged
    assert code == 1


def test_stdout_noise_is_judged_with_a_warning_and_fails_under_strict_stdout(tmp_path: Path) -> None:
    code, report = _variant_run(tmp_path / "lenient", "noise")
    assert {s["status"] for s in report["scenarios"]} == {"passed"}, report["scenarios"]
    assert code == 0
    assert report["warnings"], "the noise must be reported"
    assert any("'handling post_process'" in w for w in report["warnings"])
    assert len(report["warnings"]) == len(set(report["warnings"]))  # each line once

    code, report = _variant_run(tmp_path / "strict", "noise", strict_stdout=True)
    assert {s["status"] for s in report["scenarios"]} == {"errored"}
    assert all("--strict-stdout" in s["message"] for s in report["scenarios"])
    assert code == 1
