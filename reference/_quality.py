"""The single normalizer: every hit becomes a ``qualityScore`` in [0, 1], higher is better."""

from __future__ import annotations

import math

from ._errors import InvalidMaxL2DistanceError, InvalidRankError, InvalidScoreError
from ._labels import CanonicalLabel, canonicalize_label

__all__ = [
    "NEGATIVE_DISTANCE_TOLERANCE",
    "check_max_l2",
    "l2_to_quality",
    "normalize",
    "rank_to_quality",
    "to_quality_score",
]

# Engines return tiny negative squared distances for identical vectors (float32 rounding, e.g. -1e-7).
# Those clamp to 0. Anything more negative is not rounding: it is a bug upstream, and we say so.
NEGATIVE_DISTANCE_TOLERANCE = 1e-5


def to_quality_score(
    label: str,
    score: float | None,
    *,
    rank: int,
    batch_size: int,
    max_l2_distance: float,
    dense_distance: float | None = None,
) -> float:
    """The one normalizer: branches only on the canonical label.

    - ``dense``: ``score`` is the L2 distance, quality by the spec's formula (null score -> 0).
    - ``hybrid`` with ``dense_distance``: the same formula on that distance (absolute quality for gates).
    - ``hybrid`` without: :func:`rank_to_quality`. The fused ``score`` is not read at all.

    An unknown label fails first, whatever else is wrong; then ``max_l2_distance``; then the hit.
    """
    canonical = canonicalize_label(label)
    check_max_l2(max_l2_distance)
    return normalize(canonical, score, rank, batch_size, max_l2_distance, dense_distance)


def normalize(
    canonical: CanonicalLabel,
    score: float | None,
    rank: int,
    batch_size: int,
    max_l2_distance: float,
    dense_distance: float | None,
) -> float:
    """:func:`to_quality_score` once the label is canonical and ``max_l2_distance`` is checked.

    Post-processing checks the setting once for its batch and calls this for each candidate.
    """
    if canonical == "dense":
        return _dense_formula(score, max_l2_distance, "score")
    if dense_distance is not None:
        return _dense_formula(dense_distance, max_l2_distance, "denseDistance")
    return rank_to_quality(rank, batch_size)


def l2_to_quality(distance: float | None, max_l2_distance: float, *, what: str = "score") -> float:
    """The spec's dense formula: ``max(0, 1 - min(d, maxL2) / maxL2)``; a null distance gives 0."""
    check_max_l2(max_l2_distance)
    return _dense_formula(distance, max_l2_distance, what)


def rank_to_quality(rank: int, batch_size: int) -> float:
    """Hybrid quality from rank alone: linear, ``max(0, 1 - (r - 1) / n)``.

    Rank 1 maps to 1.0 for every batch size, rank ``n`` to ``1/n``, and a rank above the batch size
    (possible when ranks come from a larger retrieval) is clamped to at least 0. It never reads the
    fused score's magnitude: RRF scores are rank sums, not similarities.
    """
    if batch_size < 1:
        raise InvalidRankError(f"batch size is {batch_size}; a batch holds at least one candidate")
    if rank < 1:
        raise InvalidRankError(f"originalRank is {rank}; ranks start at 1 (the best hit)")
    return max(0.0, 1.0 - (rank - 1) / batch_size)


def check_max_l2(max_l2_distance: float) -> None:
    """:class:`InvalidMaxL2DistanceError` unless ``max_l2_distance`` is a finite number above 0."""
    finite = isinstance(max_l2_distance, (int, float)) and math.isfinite(max_l2_distance)
    if not (finite and max_l2_distance > 0):
        raise InvalidMaxL2DistanceError(
            "rag.max-l2-distance",
            f"is {max_l2_distance}; it must be a finite number above 0 (2.0 for unit vectors)",
        )


def _dense_formula(distance: float | None, max_l2_distance: float, what: str) -> float:
    if distance is None:
        return 0.0
    if not math.isfinite(distance):
        raise InvalidScoreError(f"{what} is {distance}; an L2 distance must be finite")
    if distance < -NEGATIVE_DISTANCE_TOLERANCE:
        raise InvalidScoreError(
            f"{what} is {distance}; an L2 distance cannot be negative "
            f"(values down to -{NEGATIVE_DISTANCE_TOLERANCE:g} are float rounding and clamp to 0)"
        )
    # max(0, 1 - min(d, maxL2) / maxL2), a distance rounded below 0 read as 0. Written as branches: this
    # runs for every candidate of every batch, and max() and min() calls cost more than the arithmetic.
    if distance >= max_l2_distance:
        return 0.0
    if distance <= 0.0:
        return 1.0
    return 1.0 - distance / max_l2_distance
