"""Threshold calibration from an evaluation run: how well top ``qualityScore`` separates queries.

For every mode and every ``rag.max-l2-distance`` asked for, the top ``qualityScore`` of each query's
returned evidence is recomputed with :func:`reference.post_process` over the blocks the run accepted
(which blocks are accepted depends on rank, dedup, caps and ``rag.return-n`` only, never on quality, so
they stay the same under another ``maxL2Distance``). The lookup path is held at the run's settings.
A hybrid variant without ``denseDistance`` shows what the rank-only quality of the spec gives.

The low-quality gate flags a query when its top quality is below the threshold (or there is no
evidence). Thresholds 0.00, 0.01, ..., 1.00 are swept; the suggested one maximizes Youden's J
(recall on unanswerable queries minus the false-alarm rate on answerable ones), which, unlike F1, does
not depend on how many unanswerable queries the set happens to hold. Ties go to the middle of the
widest run of equally good thresholds, the one farthest from both classes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import median, quantiles
from typing import Any, Literal

from evaluation import BinaryScores, binary_scores, threshold_grid

from .._models import _Model
from .._postprocess import post_process
from .._settings import Settings
from ._dataset import EvaluationError
from ._run import EvalRun, ModeOutcome, SearchMode

__all__ = [
    "CRITERION",
    "Calibration",
    "CalibrationCase",
    "Distribution",
    "Suggestion",
    "SweepPoint",
    "calibrate",
]

Variant = Literal["dense", "hybrid", "hybrid-rank-only"]
DEFAULT_MAX_L2 = (1.0, 1.5, 2.0, 3.0, 4.0)
CRITERION = (
    "Youden's J = recall on unanswerable queries - false-alarm rate on answerable ones, over thresholds "
    "0.00..1.00 in steps of 0.01; ties go to the middle of the widest run of equal J"
)
HIGHLY_RELEVANT_PRECISION = 0.9
HIGHLY_RELEVANT_MIN_QUERIES = 5


class Distribution(_Model):
    """Top qualityScore values of one class; ``no_evidence`` counts queries with nothing accepted."""

    n: int
    no_evidence: int
    values: tuple[float, ...]
    minimum: float | None
    p10: float | None
    median: float | None
    p90: float | None
    maximum: float | None


class SweepPoint(_Model):
    """The gate's scores at one threshold."""

    threshold: float
    scores: BinaryScores


class CalibrationCase(_Model):
    """One variant at one ``maxL2Distance``: distributions, the sweep, the best and the current point."""

    variant: Variant
    max_l2_distance: float
    answerable: Distribution
    unanswerable: Distribution
    sweep: tuple[SweepPoint, ...]
    best: SweepPoint | None
    best_f1: SweepPoint | None
    current: SweepPoint


class Suggestion(_Model):
    """Suggested settings for one mode, by :data:`CRITERION`, or why there is none."""

    variant: Variant
    settings: dict[str, float]
    best: SweepPoint | None
    current: SweepPoint
    note: str


class Calibration(_Model):
    """Everything ``calibration.json`` holds."""

    embedder: str
    created: str
    queries: int
    answerable: int
    unanswerable: int
    configured: dict[str, Any]
    criterion: str
    max_l2_distances: tuple[float, ...]
    cases: tuple[CalibrationCase, ...]
    suggestions: tuple[Suggestion, ...]

    def case(self, variant: str, max_l2: float) -> CalibrationCase:
        """The case of ``variant`` at ``max_l2``."""
        for c in self.cases:
            if c.variant == variant and c.max_l2_distance == max_l2:
                return c
        raise KeyError(f"no case {variant} at maxL2Distance {max_l2}")


def calibrate(
    run: EvalRun,
    *,
    max_l2_distances: Sequence[float] = DEFAULT_MAX_L2,
    progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Distributions, sweeps and suggested settings for every mode of ``run``.

    ``progress(done, total)`` is called with 0 first, then after each case (a variant at one
    ``rag.max-l2-distance``).
    """
    settings = run.settings_model()
    configured_l2 = settings.max_l2_distance
    l2s = tuple(sorted({float(m) for m in (*max_l2_distances, configured_l2)}))
    for m in l2s:
        Settings.from_mapping({**run.settings, "rag.max-l2-distance": m}, source="--max-l2")
    if not any(o.answerable for o in run.outcomes) or all(o.answerable for o in run.outcomes):
        raise EvaluationError(
            "calibration needs answerable and unanswerable queries; the run has only one class"
        )
    todo: list[tuple[SearchMode, Variant, float]] = [(mode, mode, m) for mode in run.modes for m in l2s]
    if "hybrid" in run.modes:
        todo.append(("hybrid", "hybrid-rank-only", configured_l2))
    cases = []
    if progress is not None:
        progress(0, len(todo))
    for done, (mode, variant, m) in enumerate(todo, start=1):
        cases.append(_case(run, mode, variant, m))
        if progress is not None:
            progress(done, len(todo))
    suggestions = tuple(
        _suggest(run, settings, [c for c in cases if c.variant == mode]) for mode in run.modes
    )
    if "hybrid" in run.modes:
        rank_only = [c for c in cases if c.variant == "hybrid-rank-only"]
        suggestions += (_suggest(run, settings, rank_only),)
    answerable = sum(1 for o in run.outcomes if o.answerable)
    return Calibration(
        embedder=run.embedder,
        created=run.created,
        queries=len(run.outcomes),
        answerable=answerable,
        unanswerable=len(run.outcomes) - answerable,
        configured=run.settings,
        criterion=CRITERION,
        max_l2_distances=l2s,
        cases=tuple(cases),
        suggestions=suggestions,
    )


def _top_quality(outcome: ModeOutcome, settings: Settings, *, keep_dense_distance: bool) -> float | None:
    if not outcome.evidence:
        return None
    candidates = [row.candidate(keep_dense_distance=keep_dense_distance) for row in outcome.evidence]
    return post_process(candidates, settings).top_quality_score


def _case(run: EvalRun, mode: SearchMode, variant: Variant, max_l2: float) -> CalibrationCase:
    settings = Settings.from_mapping({**run.settings, "rag.max-l2-distance": max_l2})
    keep = variant != "hybrid-rank-only"
    tops = [_top_quality(o.modes[mode], settings, keep_dense_distance=keep) for o in run.outcomes]
    truth = [not o.answerable for o in run.outcomes]
    sweep = tuple(_point(t, tops, truth) for t in threshold_grid(0.01))
    return CalibrationCase(
        variant=variant,
        max_l2_distance=max_l2,
        answerable=_distribution([q for q, t in zip(tops, truth, strict=True) if not t]),
        unanswerable=_distribution([q for q, t in zip(tops, truth, strict=True) if t]),
        sweep=sweep,
        best=_best(sweep, "youden_j"),
        best_f1=_best(sweep, "f1"),
        current=_point(settings.reference_threshold, tops, truth),
    )


def _point(threshold: float, tops: list[float | None], truth: list[bool]) -> SweepPoint:
    # The gate of reference.post_process: nothing accepted, or the top quality below the threshold.
    flagged = [top is None or top < threshold for top in tops]
    return SweepPoint(threshold=threshold, scores=binary_scores(flagged, truth))


def _best(sweep: Sequence[SweepPoint], score: str) -> SweepPoint | None:
    values = [getattr(p.scores, score) for p in sweep]
    known = [v for v in values if v is not None]
    if not known or max(known) <= 0:
        return None  # nothing beats flagging at random (J) or flags any unanswerable query (F1)
    top = max(known)
    runs: list[list[int]] = []
    for i, v in enumerate(values):
        if v is not None and v >= top - 1e-12:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
    widest = max(runs, key=len)  # the first of equally wide runs: the lower threshold
    return sweep[widest[(len(widest) - 1) // 2]]


def _distribution(values: list[float | None]) -> Distribution:
    present = sorted(v for v in values if v is not None)
    if not present:
        return Distribution(
            n=len(values), no_evidence=len(values), values=(), minimum=None, p10=None,
            median=None, p90=None, maximum=None,
        )  # fmt: skip
    deciles = quantiles(present, n=10, method="inclusive") if len(present) > 1 else [present[0]] * 9
    return Distribution(
        n=len(values),
        no_evidence=len(values) - len(present),
        values=tuple(present),
        minimum=present[0],
        p10=deciles[0],
        median=median(present),
        p90=deciles[-1],
        maximum=present[-1],
    )


def _suggest(run: EvalRun, settings: Settings, cases: list[CalibrationCase]) -> Suggestion:
    configured_l2 = settings.max_l2_distance
    configured = next(c for c in cases if c.max_l2_distance == configured_l2)
    usable = [c for c in cases if c.best is not None]
    if not usable:
        return Suggestion(
            variant=configured.variant,
            settings={},
            best=None,
            current=configured.current,
            note="no threshold separates answerable from unanswerable queries better than chance",
        )

    def rank(c: CalibrationCase) -> tuple[float, int, float]:
        assert c.best is not None
        assert c.best.scores.youden_j is not None
        # Best J; on a tie keep the configured maxL2, else the nearest to it (fewest surprises).
        return (
            -c.best.scores.youden_j,
            c.max_l2_distance != configured_l2,
            abs(c.max_l2_distance - configured_l2),
        )

    chosen = min(usable, key=rank)
    assert chosen.best is not None
    threshold = chosen.best.threshold
    highly, how = _highly_relevant(run, chosen, threshold, settings)
    proposal = {
        "rag.max-l2-distance": chosen.max_l2_distance,
        "rag.reference-threshold": threshold,
        "rag.highly-relevant-threshold": highly,
    }
    Settings.from_mapping({**run.settings, **proposal}, source="the suggestion")  # must be valid
    return Suggestion(
        variant=chosen.variant, settings=proposal, best=chosen.best, current=configured.current, note=how
    )


def _highly_relevant(
    run: EvalRun, case: CalibrationCase, threshold: float, settings: Settings
) -> tuple[float, str]:
    """The lowest threshold at or above ``threshold`` where most results above it hold the answer."""
    mode: SearchMode = "hybrid" if case.variant.startswith("hybrid") else "dense"
    scaled = Settings.from_mapping({**run.settings, "rag.max-l2-distance": case.max_l2_distance})
    keep = case.variant != "hybrid-rank-only"
    pairs = []
    for o in run.outcomes:
        top = _top_quality(o.modes[mode], scaled, keep_dense_distance=keep)
        best = max(o.relevant.values(), default=None)
        keys = {row.evidence_key for row in o.modes[mode].evidence}
        answered = best is not None and any(o.relevant.get(k) == best for k in keys)
        pairs.append((top, answered))
    for t in threshold_grid(0.01):
        if t < threshold:
            continue
        above = [answered for top, answered in pairs if top is not None and top >= t]
        if len(above) >= HIGHLY_RELEVANT_MIN_QUERIES and sum(above) / len(above) >= HIGHLY_RELEVANT_PRECISION:
            return t, (
                f"highly-relevant: the lowest threshold where at least {HIGHLY_RELEVANT_PRECISION:.0%} "
                f"of the {len(above)} results at or above it hold a best-graded chunk"
            )
    fallback = max(threshold, settings.highly_relevant_threshold)
    return fallback, (
        f"highly-relevant: no threshold reaches {HIGHLY_RELEVANT_PRECISION:.0%} answered results with at "
        f"least {HIGHLY_RELEVANT_MIN_QUERIES} queries; kept at max(suggested, configured)"
    )
