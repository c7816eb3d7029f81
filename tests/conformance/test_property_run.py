"""How a property scenario reports a falsified property: FAILED with the examples, never a crash."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from conformance.steps._property_run import PropertyRun

RUN = PropertyRun(seed=1234, profile="ci", max_examples=200)


def test_one_falsifying_example_fails_with_the_replay_hint() -> None:
    def body(x: int) -> None:
        assert x < 50, f"x is {x}"

    with pytest.raises(AssertionError, match=r"x is \d+[\s\S]*replay: --rqs-seed 1234 --rqs-profile ci"):
        RUN.check({"x": st.integers(0, 100)}, body)


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
