"""Paired statistics over queries: identical answers, a consistent drop, noise, the pairing, BH's q."""

from __future__ import annotations

import pytest

from evaluation import adjust, detectable_drop, paired_quantile_test, paired_test

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


# -- one-sided questions, tails, and what a set can see --------------------------------------------------


def test_a_drop_asked_one_sided_has_half_the_two_sided_p_and_a_rise_is_no_drop() -> None:
    old = [0.6 + 0.01 * (i % 7) for i in range(40)]
    new = [x - (0.05 if i % 4 == 0 else 0.0) for i, x in enumerate(old)]
    two = paired_test(old, new)
    drop = paired_test(old, new, alternative="less")
    rise = paired_test(old, new, alternative="greater")
    assert drop.alternative == "less"
    assert two.alternative == "two-sided"
    assert drop.p_value < two.p_value
    assert drop.p_value == pytest.approx(two.p_value / 2, rel=0.2)
    assert rise.p_value > 0.9
    assert (drop.ci_low, drop.ci_high) == (two.ci_low, two.ci_high)  # the interval is the same either way


def test_a_slower_tail_is_found_where_the_median_does_not_move() -> None:
    import random

    rng = random.Random(3)
    old = [0.010 + rng.random() * 0.004 for _ in range(100)]
    new = [t + (0.05 if i % 10 < 3 else 0.0) for i, t in enumerate(old)]  # +50 ms on 30% of lookups
    assert paired_quantile_test(old, new, 95) < 0.001
    assert paired_quantile_test(old, old, 95) == 1.0
    assert paired_quantile_test(new, old, 95) > 0.9  # faster is not slower


def test_detectable_drop_is_found_about_as_often_as_the_power_it_promises() -> None:
    # Plant drops of the stated size (the model: a random share of queries lose their value) and count
    # how often the one-sided test at alpha finds them: about 80%, not 50%, not 99%.
    import random

    rng = random.Random(7)
    old = [rng.choice([0.0, 0.3, 0.6, 1.0, 1.0]) for _ in range(112)]
    alpha = 0.05
    drop = detectable_drop(old, alpha=alpha)
    assert drop is not None
    assert 0 < drop < 0.2
    m1 = sum(old) / len(old)
    found = 0
    trials = 120
    for t in range(trials):
        share = drop / m1
        new = [0.0 if rng.random() < share else v for v in old]
        found += paired_test(old, new, seed=t, alternative="less").p_value < alpha
    assert 0.65 <= found / trials <= 0.92, found / trials


def test_nothing_can_drop_from_zero() -> None:
    assert detectable_drop([0.0] * 10, alpha=0.05) is None
    assert detectable_drop([], alpha=0.05) is None
