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

from pydantic import BaseModel, ConfigDict

__all__ = ["PairedTest", "adjust", "paired_test", "percentile"]

RESAMPLES = 9999
CONFIDENCE = 0.95


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


def paired_test(old: Sequence[float], new: Sequence[float], *, seed: int = 0) -> PairedTest:
    """Test ``new`` against ``old`` (same length, same query order)."""
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
        )

    def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(y - x, axis=axis)

    permutation = stats.permutation_test(
        (a, b),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        alternative="two-sided",
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
    )


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
    if not tests:
        return []
    from scipy import stats

    q = stats.false_discovery_control([t.p_value for t in tests], method="bh")
    return [t.model_copy(update={"q_value": float(v)}) for t, v in zip(tests, q, strict=True)]


def percentile(values: Sequence[float], q: float) -> float:
    """NumPy's percentile (linear interpolation); NaN for no values."""
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else math.nan
