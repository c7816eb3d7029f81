"""Paired statistics over queries: identical answers, a consistent drop, noise, the pairing, BH's q."""

from __future__ import annotations

import pytest

from evaluation import adjust, paired_test

# -- the paired tests-----------------------------------------------------------------------------------


def test_identical_answers_have_no_difference_and_p_1() -> None:
    test = paired_test([0.2, 0.5, 1.0, 0.0], [0.2, 0.5, 1.0, 0.0])
    assert (test.delta, test.ci_low, test.ci_high, test.p_value, test.d_z) == (0.0, 0.0, 0.0, 1.0, None)


def test_a_consistent_drop_is_significant_with_an_interval_below_zero() -> None:
    old = [0.5 + 0.01 * i for i in range(30)]
    new = [x - 0.2 + (0.02 if i % 3 else -0.02) for i, x in enumerate(old)]
    test = paired_test(old, new)
    assert test.p_value < 0.001
    assert test.ci_low < test.delta < test.ci_high < 0
    assert test.delta == pytest.approx(-0.2, abs=0.01)


def test_noise_around_zero_is_not_significant() -> None:
    old = [0.0, 1.0] * 10
    new = [1.0, 0.0] * 5 + [0.0, 1.0] * 5  # five queries better, five worse, ten the same
    test = paired_test(old, new)
    assert test.delta == 0.0
    assert test.p_value > 0.5
    assert test.ci_low < 0 < test.ci_high


def test_the_pairing_matters_a_small_gain_on_every_query_is_found_despite_wide_spread() -> None:
    # Queries differ a lot from each other (0 to 0.95); the new engine gains 0.03 on each one. Compared
    # unpaired, 0.03 is lost in the spread; paired, every query agrees.
    old = [0.05 * i for i in range(20)]
    new = [x + 0.03 for x in old]
    test = paired_test(old, new)
    assert test.p_value < 0.001
    assert test.ci_low == pytest.approx(0.03)
    assert test.ci_high == pytest.approx(0.03)


def test_adjusted_q_values_are_never_below_the_p_values() -> None:
    tests = adjust([paired_test([0, 1, 1, 0, 1] * 4, [1, 1, 0, 0, 0] * 4), paired_test([1.0] * 8, [0.0] * 8)])
    assert all(t.q_value is not None and t.q_value >= t.p_value for t in tests)
