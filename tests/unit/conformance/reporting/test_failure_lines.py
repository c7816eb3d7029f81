"""A failure line keeps what was expected and what came, and names the rule that broke (issue 55 item 4).

The planted slip is the issue's: a dense formula that answers 0.5 where the spec's gives 0.75 (it
ignores maxL2Distance), met by the property step "qualityScore SHALL lie within [0, 1]". 0.5 is within
[0, 1]: the rule that broke is the formula, and the line must say so, with both numbers, however long
the description of the request before them.
"""

from __future__ import annotations

import pytest

from conformance.boundary._protocol import BASE_CAPABILITIES, ImplementationInfo, QualityRequest
from conformance.judging._judge import Judge
from conformance.reporting import Environment, ScenarioResult, build_report, format_table
from conformance.reporting._classify import with_step
from conformance.reporting._shorten import shorten_middle

STEP = "step 'Then qualityScore SHALL lie within [0, 1]'"


class _WrongDenseFormula:
    """1 - d where the spec says 1 - d / maxL2Distance: 0.5 for the spec's 0.75 at d 0.5, maxL2 2."""

    def quality_score(self, request: QualityRequest) -> float:
        return max(0.0, 1.0 - (request.score or 0.0))


def _violation() -> AssertionError:
    info = ImplementationInfo(name="wrong", version="1", capabilities=BASE_CAPABILITIES)
    judge = Judge(_WrongDenseFormula(), info)  # type: ignore[arg-type]  # quality_score is all it is asked
    with pytest.raises(AssertionError) as caught:
        judge.quality_score(QualityRequest(score_label="dense", score=0.5, max_l2_distance=2.0))
    return caught.value


def _table_line(message: str, rules: tuple[str, ...]) -> str:
    result = ScenarioResult(
        id="prop-quality-within-0-and-1-for-any-input",
        requirement="Quality score SHALL be produced by a single normalizer",
        requirement_id="single-normalizer",
        name="qualityScore lies within [0, 1]",
        status="failed",
        message=message,
        derived=True,
        broken_requirements=("single-normalizer",),
        rules=rules,
    )
    env = Environment(kit_version="0", spec_sha256=None, python="3", platform="test")
    table = format_table(build_report([result], env))
    [line] = [line for line in table.splitlines() if line.startswith("FAILED ")]
    return line


def test_a_wrong_dense_formula_names_the_formulas_rule_with_expected_and_actual() -> None:
    error = _violation()
    rules = tuple(dict.fromkeys(v.rule.id for v in getattr(error, "violations", ())))
    assert rules == ("dense-formula",)
    line = _table_line(with_step(str(error), STEP, rules), rules)
    assert "rule dense-formula]" in line
    assert "expected 0.75; got 0.5" in line
    assert "SHALL lie within" not in line  # the step that happened to meet it is on the report's next line


def test_a_long_failure_line_loses_its_middle_never_its_end() -> None:
    error = _violation()
    long_request = "the reply to post_process (" + "x" * 600 + "): " + str(error)
    line = _table_line(with_step(long_request, STEP, ("dense-formula",)), ("dense-formula",))
    assert line.endswith("expected 0.75; got 0.5 […]")  # […]: the step follows in the report
    assert "chars…]" in line


def test_a_steps_own_assertion_leads_with_the_step() -> None:
    assert with_step("rank 2 -> 0.9 < rank 3 -> 0.95", STEP, ()) == f"{STEP}: rank 2 -> 0.9 < rank 3 -> 0.95"


@pytest.mark.parametrize("limit", [10, 40, 300])
def test_shortening_keeps_both_ends_within_the_limit(limit: int) -> None:
    text = "begin " + "m" * 1000 + " end"
    short = shorten_middle(text, limit)
    assert len(short) <= max(limit, len(" […1000 chars…] ") + 2)
    assert short.endswith("d")
    assert short.startswith("b")
    assert shorten_middle("short", limit) == "short"
