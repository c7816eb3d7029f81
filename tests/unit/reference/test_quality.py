"""R3: the single normalizer. Dense quality from the L2 distance, hybrid quality from rank alone."""

from itertools import pairwise

import pytest

from reference import rank_to_quality, to_quality_score


def spec_dense_quality(d, max_l2):
    """The spec's formula, written out here so the test does not borrow the reference's code."""
    if d is None:
        return 0.0
    return max(0.0, 1.0 - min(d, max_l2) / max_l2)


# (distance, maxL2Distance, expected by hand)
DENSE_TABLE = [
    (0.0, 2.0, 1.0),
    (0.5, 2.0, 0.75),
    (1.0, 2.0, 0.5),
    (1.5, 2.0, 0.25),
    (2.0, 2.0, 0.0),
    (2.0000001, 2.0, 0.0),
    (3.0, 2.0, 0.0),
    (1e9, 2.0, 0.0),
    (1.0, 4.0, 0.75),
    (4.0, 4.0, 0.0),
    (0.1, 0.5, 0.8),
    (0.6, 0.5, 0.0),
    (1e-12, 2.0, 1.0 - 5e-13),
]


@pytest.mark.parametrize(("distance", "max_l2", "expected"), DENSE_TABLE)
def test_dense_quality_from_l2(distance, max_l2, expected):
    quality = to_quality_score("dense", distance, rank=1, batch_size=1, max_l2_distance=max_l2)
    assert quality == pytest.approx(expected, abs=1e-9)
    assert quality == pytest.approx(spec_dense_quality(distance, max_l2), abs=1e-9)


@pytest.mark.parametrize("max_l2", [0.5, 2.0, 4.0])
def test_dense_null_score_is_quality_zero(max_l2):
    assert to_quality_score("dense", None, rank=1, batch_size=1, max_l2_distance=max_l2) == 0.0


@pytest.mark.parametrize("tiny_negative", [-1e-7, -1e-9, -5e-6])
def test_dense_float_rounding_below_zero_clamps_to_distance_zero(tiny_negative):
    # Engines report -1e-7 for identical vectors (float32); that is distance 0, quality 1.
    quality = to_quality_score("dense", tiny_negative, rank=1, batch_size=1, max_l2_distance=2.0)
    assert quality == pytest.approx(1.0, abs=1e-9)
    assert quality <= 1.0


@pytest.mark.parametrize("rank", [1, 2, 5, 50])
def test_dense_quality_does_not_depend_on_rank_or_batch(rank):
    quality = to_quality_score("dense", 0.5, rank=rank, batch_size=50, max_l2_distance=2.0)
    assert quality == pytest.approx(0.75, abs=1e-9)


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 20, 100, 10_000])
def test_hybrid_rank_one_is_quality_one_for_every_batch_size(batch_size):
    assert to_quality_score("hybrid", 0.0163, rank=1, batch_size=batch_size, max_l2_distance=2.0) == 1.0
    assert rank_to_quality(1, batch_size) == 1.0


@pytest.mark.parametrize("batch_size", [1, 2, 3, 10, 37])
def test_hybrid_quality_is_non_increasing_in_rank(batch_size):
    qualities = [
        to_quality_score("hybrid", None, rank=r, batch_size=batch_size, max_l2_distance=2.0)
        for r in range(1, batch_size + 1)
    ]
    assert all(a >= b for a, b in pairwise(qualities))
    assert all(0.0 <= q <= 1.0 for q in qualities)


@pytest.mark.parametrize("score", [None, 0.0, 0.0164, 0.5, 1.0, 42.0, -3.0, 1e30])
def test_hybrid_quality_does_not_read_the_fused_score(score):
    # Same rank, any fused score (RRF sums, BM25 magnitudes, even distance-like values): same quality.
    for rank in (1, 2, 4):
        baseline = to_quality_score("hybrid", 0.03, rank=rank, batch_size=4, max_l2_distance=2.0)
        assert to_quality_score("hybrid", score, rank=rank, batch_size=4, max_l2_distance=2.0) == baseline


def test_hybrid_quality_does_not_depend_on_max_l2_without_dense_distance():
    qualities = {
        to_quality_score("hybrid", 0.02, rank=3, batch_size=5, max_l2_distance=m)
        for m in (0.1, 2.0, 4.0, 1e6)
    }
    assert len(qualities) == 1


@pytest.mark.parametrize(("dense_distance", "max_l2"), [(0.0, 2.0), (0.5, 2.0), (1.2, 4.0), (9.0, 2.0)])
def test_hybrid_with_dense_distance_uses_the_l2_formula_on_it(dense_distance, max_l2):
    expected = spec_dense_quality(dense_distance, max_l2)
    for rank in (1, 3, 9):
        quality = to_quality_score(
            "hybrid", 0.016, rank=rank, batch_size=9, max_l2_distance=max_l2, dense_distance=dense_distance
        )
        assert quality == pytest.approx(expected, abs=1e-9)


def test_hybrid_with_tiny_negative_dense_distance_clamps():
    quality = to_quality_score("hybrid", 0.5, rank=4, batch_size=4, max_l2_distance=2.0, dense_distance=-1e-7)
    assert quality == pytest.approx(1.0, abs=1e-9)


def test_dense_label_ignores_dense_distance():
    # For dense hits the score already is the distance; a stray denseDistance must not override it.
    quality = to_quality_score("dense", 1.0, rank=1, batch_size=1, max_l2_distance=2.0, dense_distance=0.0)
    assert quality == pytest.approx(0.5, abs=1e-9)


@pytest.mark.parametrize(("rank", "batch_size"), [(2, 1), (10, 3), (1000, 5), (6, 5)])
def test_rank_beyond_batch_size_stays_in_unit_interval(rank, batch_size):
    quality = to_quality_score("hybrid", None, rank=rank, batch_size=batch_size, max_l2_distance=2.0)
    assert 0.0 <= quality <= 1.0
    assert quality <= to_quality_score("hybrid", None, rank=1, batch_size=batch_size, max_l2_distance=2.0)


@pytest.mark.parametrize(
    ("rank", "batch_size"), [(1, 1), (1, 4), (2, 4), (3, 4), (4, 4), (5, 4), (9, 4), (2, 10), (10, 10)]
)
def test_reference_documented_linear_rank_mapping(rank, batch_size):
    # Not a spec requirement (any monotone mapping with rank 1 -> 1.0 conforms); this pins the mapping
    # the reference documents: max(0, 1 - (r - 1) / n).
    expected = max(0.0, 1.0 - (rank - 1) / batch_size)
    assert rank_to_quality(rank, batch_size) == pytest.approx(expected, abs=1e-9)
