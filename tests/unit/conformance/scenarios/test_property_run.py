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
