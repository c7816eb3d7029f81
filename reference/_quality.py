"""The single normalizer: every hit becomes a ``qualityScore`` in [0, 1], higher is better."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NoReturn

from ._errors import InvalidMaxL2DistanceError, InvalidRankError, InvalidScoreError
from ._labels import CANONICAL_LABELS, LEGACY_ALIASES, canonicalize_label

__all__ = [
    "NEGATIVE_DISTANCE_TOLERANCE",
    "check_max_l2",
    "l2_to_quality",
    "normalize_all",
    "rank_to_quality",
    "to_quality_score",
]

# Engines return tiny negative squared distances for identical vectors (float32 rounding, e.g. -1e-7).
# Those clamp to 0. Anything more negative is not rounding: it is a bug upstream, and we say so.
NEGATIVE_DISTANCE_TOLERANCE = 1e-5
# canonicalize_label's table, for a dict lookup per hit; anything else goes through it (and fails there).
_CANONICAL: dict[str, str] = {**{label: label for label in CANONICAL_LABELS}, **LEGACY_ALIASES}


def l2_to_quality(distance: float | None, max_l2_distance: float, *, what: str = "score") -> float:
    """The spec's dense formula: ``max(0, 1 - min(d, maxL2) / maxL2)``; a null distance gives 0."""
    check_max_l2(max_l2_distance)
    return normalize_all((("dense", distance, 1, None),), 1, max_l2_distance, score_name=what)[0]


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
    """
    canonicalize_label(label)  # an unknown label fails first, whatever else is wrong
    check_max_l2(max_l2_distance)
    return normalize_all(((label, score, rank, dense_distance),), batch_size, max_l2_distance)[0]


def normalize_all(
    hits: Iterable[tuple[str, float | None, int, float | None]],
    batch_size: int,
    max_l2_distance: float,
    *,
    score_name: str = "score",
) -> list[float]:
    """:func:`to_quality_score` for each ``(label, score, rank, dense_distance)``, once ``max_l2_distance``
    is checked: the implementation behind every entry point of the normalizer.

    One loop instead of a call per hit, because post-processing runs it on every candidate of a batch.
    Every per-hit input check stays: a bad hit raises the same typed error :func:`to_quality_score`
    raises for it.
    """
    canonical_of, tolerance, isfinite = _CANONICAL, -NEGATIVE_DISTANCE_TOLERANCE, math.isfinite
    out: list[float] = []
    for label, score, rank, dense_distance in hits:
        canonical = canonical_of.get(label) or canonicalize_label(label)
        if canonical == "dense":
            distance, what = score, score_name
        elif dense_distance is not None:
            distance, what = dense_distance, "denseDistance"
        else:
            out.append(rank_to_quality(rank, batch_size))
            continue
        if distance is None:
            out.append(0.0)
        elif not (isfinite(distance) and distance >= tolerance):
            _refuse_distance(distance, what)
        # The formula with its min and max written as branches (same values; this runs once per hit).
        elif distance >= max_l2_distance:
            out.append(0.0)
        elif distance <= 0.0:
            out.append(1.0)
        else:
            out.append(1.0 - distance / max_l2_distance)
    return out


def _refuse_distance(distance: float, what: str) -> NoReturn:
    if not math.isfinite(distance):
        raise InvalidScoreError(f"{what} is {distance}; an L2 distance must be finite")
    raise InvalidScoreError(
        f"{what} is {distance}; an L2 distance cannot be negative "
        f"(values down to -{NEGATIVE_DISTANCE_TOLERANCE:g} are float rounding and clamp to 0)"
    )


def check_max_l2(max_l2_distance: float) -> None:
    """:class:`InvalidMaxL2DistanceError` unless ``max_l2_distance`` is a finite number above 0."""
    finite = isinstance(max_l2_distance, (int, float)) and math.isfinite(max_l2_distance)
    if not (finite and max_l2_distance > 0):
        raise InvalidMaxL2DistanceError(
            "rag.max-l2-distance",
            f"is {max_l2_distance}; it must be a finite number above 0 (2.0 for unit vectors)",
        )
