"""Paired statistics over queries (``rag-conformance upgrade`` compares two engines with them): SciPy's,
none of our own.

Every comparison is paired: the same query on the old and on the new engine. For each measure the
per-query differences ``new - old`` are tested with a paired randomization test
(:func:`scipy.stats.permutation_test`, ``permutation_type="samples"``: the two answers of one query are
swapped at random, which under "the engine makes no difference" changes nothing), and their mean gets a
95% bootstrap confidence interval (:func:`scipy.stats.bootstrap`, BCa, resampling queries). The effect
size is that mean difference in the measure's own units, plus ``d_z`` (the mean over the standard
deviation of the differences) to compare across measures. Many measures are tested at once, so the
p-values are adjusted with :func:`scipy.stats.false_discovery_control` (Benjamini-Hochberg) before they
are compared with ``alpha``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Alternative",
    "PairedTest",
    "adjust",
    "adjust_p",
    "detectable_drop",
    "paired_quantile_test",
    "paired_test",
    "percentile",
]

RESAMPLES = 9999
CONFIDENCE = 0.95
POWER = 0.8
Alternative = Literal["two-sided", "less", "greater"]
"""What the test asks of ``new - old``: any difference, a drop (``less``), a rise (``greater``)."""


class PairedTest(BaseModel):
    """One paired comparison over queries: means, mean difference with its interval, p (and adjusted q)."""

    model_config = ConfigDict(frozen=True)

    n: int
    old_mean: float
    new_mean: float
    delta: float  # mean of new - old
    ci_low: float
    ci_high: float
    d_z: float | None  # mean difference over its standard deviation; None when every difference is 0
    p_value: float
    q_value: float | None = None  # after Benjamini-Hochberg over the report's tests
    alternative: Alternative = "two-sided"


def paired_test(
    old: Sequence[float], new: Sequence[float], *, seed: int = 0, alternative: Alternative = "two-sided"
) -> PairedTest:
    """Test ``new`` against ``old`` (same length, same query order).

    ``alternative`` is the question: ``less`` asks whether ``new`` is lower (a drop), and its p-value
    is the share of sign flips with a mean difference at or below the one observed. The interval is
    the two-sided 95% bootstrap interval of the mean difference either way: it describes the size of
    the difference, the p-value answers the one-sided question, so at the boundary they can disagree.
    """
    import numpy as np
    from scipy import stats

    a = np.asarray(old, dtype=float)
    b = np.asarray(new, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples need the same length, got {a.shape} and {b.shape}")
    diff = b - a
    n = len(diff)
    mean = float(diff.mean()) if n else 0.0
    if n < 2 or not np.any(diff):
        # No difference to resample (or one query): the data say nothing else; p is 1 by definition.
        return PairedTest(
            n=n,
            old_mean=float(a.mean()) if n else math.nan,
            new_mean=float(b.mean()) if n else math.nan,
            delta=mean,
            ci_low=mean,
            ci_high=mean,
            d_z=None,
            p_value=1.0,
            alternative=alternative,
        )

    def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(y - x, axis=axis)

    permutation = stats.permutation_test(
        (a, b),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        alternative=alternative,
        random_state=seed,
    )
    low, high = _interval(diff, seed)
    sd = float(diff.std(ddof=1))
    return PairedTest(
        n=n,
        old_mean=float(a.mean()),
        new_mean=float(b.mean()),
        delta=mean,
        ci_low=low,
        ci_high=high,
        d_z=mean / sd if sd > 0 else None,
        p_value=float(min(1.0, permutation.pvalue)),
        alternative=alternative,
    )


def paired_quantile_test(old: Sequence[float], new: Sequence[float], q: float, *, seed: int = 0) -> float:
    """One-sided p-value that ``new``'s ``q``-th percentile is above ``old``'s (same queries, paired).

    The same sign-flip idea as :func:`paired_test`: under "the engine makes no difference" the two
    times of one query are exchangeable, so they are swapped at random and the percentile difference
    recomputed. A tail (p95) moves when a share of lookups slows down while the median does not.
    """
    import numpy as np
    from scipy import stats

    a = np.asarray(old, dtype=float)
    b = np.asarray(new, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples need the same length, got {a.shape} and {b.shape}")
    if len(a) < 2 or not np.any(a != b):
        return 1.0

    def quantile_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.percentile(y, q, axis=axis) - np.percentile(x, q, axis=axis)

    result = stats.permutation_test(
        (a, b),
        quantile_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        alternative="greater",
        random_state=seed,
    )
    return float(min(1.0, result.pvalue))


def detectable_drop(old: Sequence[float], *, alpha: float, power: float = POWER) -> float | None:
    """The smallest mean drop a one-sided paired test at ``alpha`` finds with ``power``, on these queries.

    The model of a regression: a random share ``s`` of the queries lose what they had (their value
    falls to 0), the rest keep it. The per-query differences are then ``-v`` on the share and 0
    elsewhere, so the drop is ``s * m1`` and, for the sign-flip test's normal approximation, the test
    reaches ``power`` when ``sqrt(n * s) * m1 / sqrt(m2) = z(1 - alpha) + z(power)``, with ``m1`` and
    ``m2`` the mean of the old values and of their squares. Solved for the drop:
    ``(z(1 - alpha) + z(power))**2 * m2 / (n * m1)``. None when the old values are all 0 (nothing
    can drop). It is stated before any adjustment for many tests; Benjamini-Hochberg makes the
    drop a report can see somewhat larger. ``tests/unit/evaluation/test_stats.py`` checks it by planting
    drops of this size and counting how often the test finds them.
    """
    from scipy import stats

    values = [float(v) for v in old]
    n = len(values)
    m1 = sum(values) / n if n else 0.0
    if n == 0 or m1 <= 0:
        return None
    m2 = sum(v * v for v in values) / n
    z = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))
    return min(m1, z * z * m2 / (n * m1))


def _interval(diff: object, seed: int) -> tuple[float, float]:
    import numpy as np
    from scipy import stats

    with warnings.catch_warnings():
        # Few distinct differences (a metric that moved for two queries) make BCa degenerate: SciPy
        # warns and returns NaN; the percentile interval is then the honest one.
        warnings.simplefilter("ignore")
        for method in ("BCa", "percentile"):
            result = stats.bootstrap(
                (diff,),
                np.mean,
                confidence_level=CONFIDENCE,
                n_resamples=RESAMPLES,
                method=method,
                vectorized=True,
                random_state=seed,
            )
            low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
            if math.isfinite(low) and math.isfinite(high):
                return low, high
    mean = float(np.mean(diff))  # type: ignore[call-overload]
    return mean, mean


def adjust(tests: Sequence[PairedTest]) -> list[PairedTest]:
    """The same tests with ``q_value``: Benjamini-Hochberg adjusted p-values over all of them."""
    q = adjust_p([t.p_value for t in tests])
    return [t.model_copy(update={"q_value": v}) for t, v in zip(tests, q, strict=True)]


def adjust_p(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values) of ``p_values``, in their order."""
    if not p_values:
        return []
    from scipy import stats

    return [float(v) for v in stats.false_discovery_control(list(p_values), method="bh")]


def percentile(values: Sequence[float], q: float) -> float:
    """NumPy's percentile (linear interpolation); NaN for no values."""
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else math.nan
