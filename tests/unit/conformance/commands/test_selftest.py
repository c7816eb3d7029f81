"""The selftest's matrix file and verdicts, without running the kit (that is test_mutation_matrix)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.boundary._errors import ConformanceError
from conformance.commands._matrix import (
    MatrixRow,
    MiniatureResult,
    SelftestResult,
    format_selftest_matrix,
    load_matrix,
)
from conformance.commands._selftest import selftest_main


def _matrix(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[miniatures.A]\nmodule = "broken"\nkind = "broken"\n', "names no requirement"),
        ('[miniatures.A]\nmodule = "c"\nkind = "conforming"\ncaught_by = ["x"]\n', "must not list"),
        ('[miniatures.A]\nmodule = "c"\nkind = "conforming"\nviolates = ["r"]\n', "must not list"),
        (
            '[miniatures.A]\nmodule = "b"\nkind = "odd"\ncaught_by = ["x"]\n',
            "kind = 'broken', 'conforming' or 'noted'",
        ),
        ("title = 1\n", "no [miniatures"),
    ],
)
def test_a_bad_matrix_says_what_to_fix(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(ConformanceError) as info:
        load_matrix(_matrix(tmp_path, text))
    assert says in str(info.value)


def _result(
    name: str, kind: str, expected: set[str], failed: dict[str, str], violates: set[str] = frozenset({"req"})
) -> MiniatureResult:
    """``failed``: scenario id -> the requirement its failure broke."""
    statuses = {i: ("failed" if i in failed else "passed") for i in ("s1", "s2")}
    expectation = MatrixRow(
        name=name,
        module="m",
        kind=kind,  # type: ignore[arg-type]
        caught_by=frozenset(expected),
        violates=frozenset(violates if kind == "broken" else ()),
    )
    broken = {i: (req,) for i, req in failed.items()}
    return MiniatureResult(expectation, statuses, dict.fromkeys(statuses, "req"), 1.0, broken=broken)


def test_verdicts_escape_false_alarm_misattribution_and_score() -> None:
    outcome = SelftestResult(
        [
            _result("Caught", "broken", {"s1"}, {"s1": "req"}),
            _result("Escaped", "broken", {"s2"}, {}),
            _result("FalseAlarm", "conforming", set(), {"s2": "req"}),
            _result("Elsewhere", "broken", set(), {"s2": "other"}),
        ],
        seed=7,
        seconds=1.0,
        scenario_ids=["s1", "s2"],
    )
    assert outcome.mutation_score == (1, 3)
    assert not outcome.ok
    table = format_selftest_matrix(outcome)
    assert "ESCAPED" in table
    assert "FALSE ALARM" in table
    assert "MISATTRIBUTED" in table
    assert "mutation score: 1/3" in table
    assert outcome.scenarios_catching_nothing() == ["s2"]


def test_a_catch_under_another_requirement_is_not_a_catch() -> None:
    result = _result("X", "broken", set(), {"s1": "req", "s2": "other"})
    assert result.caught
    assert result.unexpected == {"s2"}
    assert not result.ok


def test_missing_miniatures_say_what_to_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code = selftest_main(
        miniatures="no_such_pkg.miniatures", matrix=None, milvus="lite", seed=1, profile="ci"
    )
    assert code == 2
    assert "--miniatures" in capsys.readouterr().err


def test_the_miniatures_run_one_per_usable_core_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.commands import _cli, _selftest

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)), raising=False)
    assert _selftest.default_jobs() == _selftest.MAX_DEFAULT_JOBS == 8  # one engine serves them all
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5}, raising=False)
    assert _selftest.default_jobs() == 6
    asked: list[int] = []

    def run_selftest(expectations: object, **kwargs: object) -> SelftestResult:
        asked.append(kwargs["jobs"])  # type: ignore[arg-type]
        return SelftestResult([], 1, 0.0, [])

    monkeypatch.setattr(_selftest, "run_selftest", run_selftest)
    for argv, want in ((["selftest"], 6), (["selftest", "--jobs", "1"], 1)):
        args = _cli.build_parser().parse_args(argv)
        _cli._selftest(args)
        assert asked.pop() == want
