"""Ranking metrics and classifier scores: properties, and agreement with slow direct definitions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.evaluation._metrics import (
    binary_scores,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    threshold_grid,
)

KEYS = [f"d#{i}" for i in range(12)]
rankings = st.permutations(KEYS).map(lambda p: list(p)[: len(p) // 2 + 3])
labels = st.dictionaries(st.sampled_from(KEYS), st.integers(1, 3), min_size=1, max_size=6)
cutoffs = st.integers(1, 12)


def _slow_ndcg(ranking: list[str], relevant: dict[str, int], k: int) -> float:
    """nDCG spelled out: the best DCG over every possible ranking of the labelled keys, by brute force."""
    import itertools

    def dcg(keys: list[str]) -> float:
        return sum((2 ** relevant.get(key, 0) - 1) / math.log2(i + 2) for i, key in enumerate(keys[:k]))

    best = max(dcg(list(order)) for order in itertools.permutations(relevant))
    return dcg(ranking) / best


@given(rankings, labels, cutoffs)
def test_recall_counts_labelled_keys_in_the_first_k(
    ranking: list[str], relevant: dict[str, int], k: int
) -> None:
    expected = sum(1 for key in relevant if key in ranking[:k]) / len(relevant)
    assert recall_at_k(ranking, relevant, k) == expected


@given(rankings, labels)
def test_recall_grows_with_k_and_reaches_one_when_all_are_ranked(
    ranking: list[str], relevant: dict[str, int]
) -> None:
    values = [recall_at_k(ranking, relevant, k) for k in range(1, 14)]
    assert values == sorted(values)
    if set(relevant) <= set(ranking):
        assert values[-1] == 1.0


@given(rankings, labels)
def test_reciprocal_rank_is_one_over_the_first_labelled_position(
    ranking: list[str], relevant: dict[str, int]
) -> None:
    positions = [i for i, key in enumerate(ranking, start=1) if key in relevant]
    expected = 1 / positions[0] if positions else 0.0
    assert reciprocal_rank(ranking, relevant) == expected


@given(rankings, labels.filter(lambda r: len(r) <= 5), cutoffs)
def test_ndcg_equals_the_brute_force_definition(ranking: list[str], relevant: dict[str, int], k: int) -> None:
    assert ndcg_at_k(ranking, relevant, k) == pytest.approx(_slow_ndcg(ranking, relevant, k))


@given(labels, cutoffs)
def test_ndcg_of_the_ideal_order_is_one(relevant: dict[str, int], k: int) -> None:
    ideal = sorted(relevant, key=lambda key: -relevant[key])
    assert ndcg_at_k(ideal, relevant, k) == pytest.approx(1.0)


@given(rankings, labels, cutoffs)
def test_ndcg_is_in_unit_range_and_zero_without_labelled_keys(
    ranking: list[str], relevant: dict[str, int], k: int
) -> None:
    value = ndcg_at_k(ranking, relevant, k)
    assert 0.0 <= value <= 1.0 + 1e-12
    assert ndcg_at_k([key for key in ranking if key not in relevant], relevant, k) == 0.0


def test_a_higher_grade_first_scores_higher() -> None:
    relevant = {"a#0": 2, "b#0": 1}
    assert ndcg_at_k(["a#0", "b#0"], relevant, 2) > ndcg_at_k(["b#0", "a#0"], relevant, 2)


@pytest.mark.parametrize("k", [0, -2, True])
def test_a_bad_cutoff_is_refused(k: int) -> None:
    with pytest.raises(ValueError, match="cut-off"):
        recall_at_k(["a"], {"a": 1}, k)
    with pytest.raises(ValueError, match="cut-off"):
        ndcg_at_k(["a"], {"a": 1}, k)


def test_metrics_need_a_labelled_key() -> None:
    with pytest.raises(ValueError, match="no relevant chunk"):
        recall_at_k(["a"], {}, 1)
    with pytest.raises(ValueError, match="no relevant chunk"):
        ndcg_at_k(["a"], {}, 1)
    assert reciprocal_rank(["a"], {}) == 0.0


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
