"""Single answers: a canonical label (R1) and one qualityScore from the normalizer (R3, R7)."""

from __future__ import annotations

import math

from ...boundary._protocol import QualityRequest
from ._labels import canonical
from ._numbers import close, dense_quality, show
from ._rules import Violation, violation

__all__ = ["check_label", "check_quality"]


def check_label(label: str, answer: str) -> list[Violation]:
    """``canonicalize_label(label)`` must be the kit's canonical label (unknown labels: not judged)."""
    expected = canonical(label)
    if expected is None or answer == expected:
        return []
    return [violation("canonical-label", f"label {label!r}", repr(expected), repr(answer))]


def check_quality(request: QualityRequest, answer: float) -> list[Violation]:
    """What the spec fixes about one normalizer answer; any allowed rank mapping passes.

    dense: the formula. hybrid without denseDistance: rank 1 -> 1.0 (monotonicity needs several
    answers: the batch and property checks see it). hybrid with denseDistance: anything in [0, 1]; at
    rank 1 neither the L2 formula on that distance nor 1.0 is a note.
    """
    item = _item(request)
    if not math.isfinite(answer) or not 0.0 <= answer <= 1.0:
        return [violation("quality-range", item, "a qualityScore within [0, 1]", show(answer))]
    label = canonical(request.score_label)
    if label == "dense":
        want = dense_quality(request.score, request.max_l2_distance)
        if not close(answer, want):
            return [violation("dense-formula", item, f"{want!r}", show(answer))]
    elif label == "hybrid" and request.dense_distance is None:
        if request.original_rank == 1 and not close(answer, 1.0):
            return [violation("rank-one", item, "1.0", show(answer))]
    elif label == "hybrid":
        by_distance = dense_quality(request.dense_distance, request.max_l2_distance)
        if request.original_rank == 1 and not (close(answer, by_distance) or close(answer, 1.0)):
            # R7 lets the gates use the distance "for absolute similarity" without fixing the formula:
            # another similarity is the implementation's choice, noted (readings 5).
            return [
                violation(
                    "dense-distance-formula",
                    item,
                    f"{by_distance!r} (the L2 formula on denseDistance) or 1.0 (rank 1 of a rank mapping)",
                    show(answer),
                )
            ]
    return []


def _item(request: QualityRequest) -> str:
    parts = [f"label {request.score_label!r}", f"score {show(request.score)}"]
    parts += [f"originalRank {request.original_rank}", f"batch size {request.batch_size}"]
    parts.append(f"maxL2Distance {request.max_l2_distance:g}")
    if request.dense_distance is not None:
        parts.append(f"denseDistance {request.dense_distance!r}")
    return "qualityScore for " + ", ".join(parts)
