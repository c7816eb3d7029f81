"""The reference's batch normalizer ``normalize_all`` as they were at git 02ce19c, before issue 25.

The old version, frozen for comparison only (see :mod:`benchmarks.figures.old_reference`): copied
unchanged but for the imports. Nothing of the reference imports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NoReturn

from reference._errors import InvalidScoreError
from reference._labels import CANONICAL_LABELS, LEGACY_ALIASES, canonicalize_label
from reference._quality import NEGATIVE_DISTANCE_TOLERANCE, rank_to_quality

__all__ = ["normalize_all"]

_CANONICAL: dict[str, str] = {**{label: label for label in CANONICAL_LABELS}, **LEGACY_ALIASES}


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
