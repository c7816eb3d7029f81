"""How a property scenario reports a falsified property: FAILED with the examples, never a crash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import strategies as st

import conformance
from conformance.scenarios.steps._property_run import PropertyRun

RUN = PropertyRun(seed=1234, profile="ci", max_examples=200)


def test_one_falsifying_example_fails_with_the_replay_hint_for_the_cli_and_pytest() -> None:
    def body(x: int) -> None:
        assert x < 50, f"x is {x}"

    with pytest.raises(AssertionError) as caught:
        RUN.check({"x": st.integers(0, 100)}, body)
    message = str(caught.value)
    assert re.search(r"x is \d+", message)
    assert "replay: rag-conformance run --seed 1234 --profile ci" in message
    assert "in pytest: --rqs-seed 1234 --rqs-profile ci" in message


def _under_ten(x: int) -> None:
    assert x < 10, "big"


def test_the_selftest_profile_hints_at_selftest() -> None:
    run = PropertyRun(seed=99, profile="selftest", max_examples=50, shrink=False)
    with pytest.raises(AssertionError, match=r"replay: rag-conformance selftest --seed 99\)"):
        run.check({"x": st.integers(0, 100)}, _under_ten)


def test_lines_hypothesis_names_are_not_absolute_paths_of_the_kit() -> None:
    def body(x: int) -> None:
        if x > 5:  # a branch only failing examples take: Hypothesis's explain phase names this line
            raise AssertionError("big")

    with pytest.raises(AssertionError) as caught:
        RUN.check({"x": st.integers(0, 100)}, body)
    root = str(Path(conformance.__file__).resolve().parents[1])
    assert "tests/unit/conformance/scenarios/test_property_run.py:" in str(caught.value)  # named, relative
    assert root not in str(caught.value)


def test_several_distinct_falsifying_examples_are_one_failure_listing_each() -> None:
    # Two different assertion lines: Hypothesis reports them as an ExceptionGroup.
    def body(x: int) -> None:
        if x % 2:
            assert x < 50, f"odd x is {x}"
        else:
            assert x < 60, f"even x is {x}"

    with pytest.raises(AssertionError) as caught:
        RUN.check({"x": st.integers(0, 100)}, body)
    message = str(caught.value)
    assert "falsifying example 1 of 2" in message
    assert "odd x is" in message
    assert "even x is" in message


def test_a_crash_in_the_body_is_not_turned_into_a_failure() -> None:
    def body(x: int) -> None:
        if x > 10:
            raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError):
        RUN.check({"x": st.integers(0, 100)}, body)


# -- the explicit examples, run in the kit's own loop (steps/_explicit_loop.py) --------------------------

NOTHING_DRAWN = {"x": st.just(0)}


def test_failing_explicit_examples_fail_once_per_line_with_the_shortest_example_and_a_count() -> None:
    def body(x: int) -> None:
        assert x < 10, f"x is {x}"

    with pytest.raises(AssertionError) as caught:
        RUN.check(NOTHING_DRAWN, body, examples=[{"x": 1000}, {"x": 12}, {"x": 3}, {"x": 345}])
    message = str(caught.value)
    assert "x is 12" in message  # the shortest of the three failing examples, alone
    assert "x is 1000" not in message
    assert "x is 345" not in message
    assert "(note: 2 other explicit examples also failed this way)" in message
    assert "Failing explicit example: prop(\n    x=12,\n)" in message


def test_explicit_examples_failing_on_two_lines_are_one_failure_listing_both() -> None:
    def body(x: int) -> None:
        if x % 2:
            assert x < 5, f"odd x is {x}"
        else:
            assert x < 5, f"even x is {x}"

    with pytest.raises(AssertionError) as caught:
        RUN.check(NOTHING_DRAWN, body, examples=[{"x": 7}, {"x": 8}, {"x": 1}])
    message = str(caught.value)
    assert "falsifying example 1 of 2" in message
    assert "odd x is 7" in message
    assert "even x is 8" in message


def test_a_failing_explicit_example_ends_the_property_before_anything_is_drawn() -> None:
    drawn: list[int] = []

    def body(x: int) -> None:
        drawn.append(x)
        assert x != 99, "ninety-nine"

    with pytest.raises(AssertionError, match="ninety-nine"):
        RUN.check({"x": st.integers(0, 5)}, body, examples=[{"x": 99}, {"x": 98}])
    assert drawn == [99, 98]  # every explicit example, in order; then no drawn one


def test_a_crash_in_an_explicit_example_stays_a_crash_and_an_interrupt_stops_the_loop() -> None:
    def crash(x: int) -> None:
        raise ZeroDivisionError(f"boom {x}")

    with pytest.raises(ZeroDivisionError):
        RUN.check(NOTHING_DRAWN, crash, examples=[{"x": 1}, {"x": 2}])

    seen: list[int] = []

    def interrupted(x: int) -> None:
        seen.append(x)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        RUN.check(NOTHING_DRAWN, interrupted, examples=[{"x": 1}, {"x": 2}])
    assert seen == [1]


def test_explicit_examples_see_the_same_global_random_draws_every_run_and_leave_them_as_they_were() -> None:
    import random

    def draws() -> list[float]:
        got: list[float] = []
        RUN.check(NOTHING_DRAWN, lambda x: got.append(random.random()), examples=[{"x": 1}, {"x": 2}])
        return got[:2]

    random.seed(5)
    before = random.random()
    random.seed(5)
    first, second = draws(), draws()
    assert first == second
    assert random.random() == before  # the caller's generator is where it was


def test_a_ctrl_c_hypothesis_turns_into_an_assertion_of_its_own_stays_an_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Hypothesis 6.170: an interrupt that lands in run_engine before its runner is set (a Ctrl-C 5 s into
    # `rag-conformance run`) meets `assert state._runner is not None` in its handler, and an AssertionError
    # leaves in its place; read as a falsified property, that run ended DOES NOT CONFORM, exit 1.
    from hypothesis.internal.conjecture import engine

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt("SIGINT")

    monkeypatch.setattr(engine.ConjectureRunner, "__init__", interrupted)
    with pytest.raises(KeyboardInterrupt):
        RUN.check({"x": st.integers(0, 100)}, _under_ten)
