"""The spec's arithmetic and the kit's tolerances: one place, so every check agrees.

Tolerance (readings 11): an implementation in Java, Go or C# computes in float32 and Milvus returns
float32 distances; a quality that float32 arithmetic gets right (relative error about 1e-6) conforms.
Rounding to a few decimals does not: it moves values across thresholds, and fails.
"""

from __future__ import annotations

import math

__all__ = [
    "DISTANCE_TOLERANCE",
    "QUALITY_TOLERANCE",
    "close",
    "dense_quality",
    "show",
]

QUALITY_TOLERANCE = 1e-6
"""How far a qualityScore may be from the exact value: float32 arithmetic, not rounding."""

DISTANCE_TOLERANCE = 1e-4
"""How far a distance may be from the kit's brute-force float32 L2 (engines sum in another order)."""


def dense_quality(distance: float | None, max_l2: float) -> float:
    """The spec's formula ``max(0, 1 - min(d, maxL2) / maxL2)``, null -> 0 (negative rounding -> 1)."""
    if distance is None:
        return 0.0
    return max(0.0, 1.0 - min(max(distance, 0.0), max_l2) / max_l2)


def close(actual: float | None, expected: float | None, tolerance: float = QUALITY_TOLERANCE) -> bool:
    """Equal within ``tolerance`` (absolute below 1, relative above); None only equals None."""
    if actual is None or expected is None:
        return actual is None and expected is None
    if not (math.isfinite(actual) and math.isfinite(expected)):
        return actual == expected
    return abs(actual - expected) <= tolerance * max(1.0, abs(expected))


def show(value: float | None) -> str:
    """A number as the implementation sent it (repr keeps every digit), or null."""
    return "null" if value is None else repr(value)
