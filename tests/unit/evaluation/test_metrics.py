"""Ranking metrics through trec_eval's implementation, and classifier scores.

The ranking measures come from ir_measures; these tests check what the evaluation package hands it: that a
ranking reaches trec_eval in its own order (not trec_eval's tie order by docid), that the names mean
the standard measures, and that the values equal slow direct definitions (nDCG with the grade as gain).
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation import (
    EvaluationError,
    binary_scores,
    measure_names,
    per_query,
    run_scores,
    threshold_grid,
)

KEYS = [f"d#{i}" for i in range(12)]
rankings = st.permutations(KEYS).map(lambda p: list(p)[: len(p) // 2 + 3])
labels = st.dictionaries(st.sampled_from(KEYS), st.integers(1, 3), min_size=1, max_size=6)
cutoffs = st.integers(1, 12)


def _one(name: str, ranking: list[str], relevant: dict[str, int]) -> float:
    return per_query([name], {"q": ranking}, {"q": relevant})["q"][name]


def _slow_ndcg(ranking: list[str], relevant: dict[str, int], k: int) -> float:
    """nDCG spelled out, gain = grade: the best DCG over every ordering of the labelled keys."""

    def dcg(keys: list[str] | tuple[str, ...]) -> float:
        return sum(relevant.get(key, 0) / math.log2(i + 2) for i, key in enumerate(keys[:k]))

    best = max(dcg(order) for order in itertools.permutations(relevant))
    return dcg(ranking) / best


@given(rankings, labels, cutoffs)
def test_recall_counts_labelled_keys_in_the_first_k(
    ranking: list[str], relevant: dict[str, int], k: int
) -> None:
    expected = sum(1 for key in relevant if key in ranking[:k]) / len(relevant)
    assert _one(f"R@{k}", ranking, relevant) == pytest.approx(expected)


@given(rankings, labels)
def test_reciprocal_rank_is_one_over_the_first_labelled_position(
    ranking: list[str], relevant: dict[str, int]
) -> None:
    positions = [i for i, key in enumerate(ranking, start=1) if key in relevant]
    expected = 1 / positions[0] if positions else 0.0
    assert _one("RR", ranking, relevant) == pytest.approx(expected)


@given(rankings, labels.filter(lambda r: len(r) <= 5), cutoffs)
def test_ndcg_equals_the_brute_force_definition_with_the_grade_as_gain(
    ranking: list[str], relevant: dict[str, int], k: int
) -> None:
    assert _one(f"nDCG@{k}", ranking, relevant) == pytest.approx(_slow_ndcg(ranking, relevant, k))


def test_the_gain_is_the_grade_not_two_to_the_grade_minus_one() -> None:
    # A grade-1 chunk first, the grade-2 one second: DCG 1 + 2/log2(3); ideal 2 + 1/log2(3).
    linear = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    exponential = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    value = _one("nDCG@2", ["b#0", "a#0"], {"a#0": 2, "b#0": 1})
    assert value == pytest.approx(linear)
    assert value != pytest.approx(exponential)


def test_the_ranking_order_is_kept_where_trec_eval_would_break_ties_by_docid() -> None:
    # trec_eval orders equal scores by docid, descending: "z" before "a". Our order must win.
    assert _one("RR", ["a#0", "z#0"], {"a#0": 1}) == 1.0
    assert _one("RR", ["z#0", "a#0"], {"a#0": 1}) == 0.5
    assert run_scores(["a#0", "z#0", "a#0"]) == {"a#0": 2.0, "z#0": 1.0}  # a repeat counts at its first rank


def test_a_labelled_query_without_a_ranking_scores_zero_and_unlabelled_ones_are_left_out() -> None:
    names = measure_names([1, 5])
    scores = per_query(names, {"q1": ["x#0"], "q9": ["y#0"]}, {"q1": {"x#0": 1}, "q2": {"x#0": 2}})
    assert set(scores) == {"q1", "q2"}
    assert scores["q1"] == dict.fromkeys(names, 1.0)
    assert scores["q2"] == dict.fromkeys(names, 0.0)
    assert per_query(names, {"q1": ["x#0"]}, {}) == {}


def test_measure_names_are_the_standard_ones_in_report_order() -> None:
    assert measure_names([1, 10]) == ("R@1", "nDCG@1", "R@10", "nDCG@10", "RR")


@pytest.mark.parametrize("k", [0, -2, True])
def test_a_bad_cutoff_is_refused(k: int) -> None:
    with pytest.raises(EvaluationError, match="cut-off"):
        measure_names([k])


pairs = st.lists(st.tuples(st.booleans(), st.booleans()), max_size=40)


@given(pairs)
def test_binary_scores_count_the_confusion_matrix(data: list[tuple[bool, bool]]) -> None:
    predicted, actual = [p for p, _ in data], [a for _, a in data]
    s = binary_scores(predicted, actual)
    assert (s.tp, s.fp, s.fn, s.tn) == (
        data.count((True, True)),
        data.count((True, False)),
        data.count((False, True)),
        data.count((False, False)),
    )
    if s.precision and s.recall:
        assert s.f1 == pytest.approx(2 * s.precision * s.recall / (s.precision + s.recall))
    if s.recall is not None and s.false_positive_rate is not None:
        assert s.youden_j == pytest.approx(s.recall - s.false_positive_rate)
    else:
        assert s.youden_j is None


def test_undefined_scores_are_none_not_zero() -> None:
    nothing_flagged = binary_scores([False, False], [True, False])
    assert nothing_flagged.precision is None
    assert nothing_flagged.recall == 0.0
    assert nothing_flagged.f1 == 0.0
    one_class = binary_scores([True], [True])
    assert one_class.false_positive_rate is None
    assert one_class.youden_j is None


def test_binary_scores_need_pairs() -> None:
    with pytest.raises(ValueError, match="pair up"):
        binary_scores([True], [True, False])


def test_threshold_grid_reads_as_settings() -> None:
    grid = threshold_grid(0.01)
    assert len(grid) == 101
    assert grid[0] == 0.0
    assert grid[-1] == 1.0
    assert all(g == round(g, 2) for g in grid)
    assert threshold_grid(0.25) == (0.0, 0.25, 0.5, 0.75, 1.0)
    with pytest.raises(ValueError, match="step"):
        threshold_grid(0)
