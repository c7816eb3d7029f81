"""The gate of ``rag-conformance upgrade``: old engine against new, query by query, and the verdict.

Ranking metrics are trec_eval's, through ir_measures (:func:`evaluation.compare`, the measures
``rag-reference evaluate`` reports), over the answerable queries; the gates are over every query. Every
test is paired over the queries both engines answered (:mod:`evaluation`'s paired statistics), and
their p-values are adjusted together (Benjamini-Hochberg) before they meet the tolerances.

The question about quality is one-sided (did it drop?), so its tests are; the gates (low-quality
rate, retry rate, relevance level) may move either way and are tested two-sided. Each metric row says
the smallest drop the set could have found (:func:`evaluation.detectable_drop`), and the result says
so when that is above the tolerance the settings promise.

A lookup that failed twice is data: its query leaves the paired comparison, and the error rate of
each side is a row of its own (any growth beyond ``max-error-rate-increase`` is a regression). A mode
left with fewer than two queries answered on both sides cannot be compared: NOT JUDGED, unless
``allow-uncompared-modes`` says the rest may decide.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from evaluation import LabelledSet, PairedTest, adjust, detectable_drop, paired_test
from evaluation import compare as compare_runs

from ._latency import LatencyRow, judge_latencies, sampled_row
from ._settings import UpgradeSettings
from ._sides import MODES, EngineEvaluation, Outcome
from ._suite import SuiteChanges

__all__ = [
    "METRICS",
    "GateRow",
    "LatencyRow",
    "MetricRow",
    "Mover",
    "QueryRecord",
    "UpgradeResult",
    "compare",
]

METRICS = ("R@1", "R@5", "R@10", "nDCG@10", "RR")
LEVELS = ("NONE", "WEAK", "RELEVANT", "HIGHLY_RELEVANT", "PRECISE")  # ordinal, worst first
MOVERS = 5  # winners and losers listed per mode
ERROR_RATE = "error rate"
Verdict = Literal["SAFE", "REGRESSES", "NOT JUDGED"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class MetricRow(_Value):
    mode: str
    metric: str
    test: PairedTest
    regressed: bool = False
    detectable_drop: float | None = None  # the smallest drop this set finds at alpha with 80% power


class GateRow(_Value):
    mode: str
    gate: str  # low-quality rate, retry rate, relevance level, error rate
    test: PairedTest
    old_counts: dict[str, int] = {}
    new_counts: dict[str, int] = {}
    regressed: bool = False


class Mover(_Value):
    mode: str
    query_id: str
    query: str
    old: float
    new: float
    delta: float


class QueryRecord(_Value):
    """One query on one side in one mode."""

    query_id: str
    # METRICS -> value; {} for a query with no relevant document, or one that errored
    metrics: dict[str, float] = {}
    seconds: float | None = None  # lookup wall time; None when it errored
    error: str | None = None  # the failure's first line after the retry, else None
    repeats: list[float | None] = []  # the same lookup timed again (None: that repeat failed)
    in_sample: bool = False  # whether its times are in the latency rows' sample (timed on every instance)


class UpgradeResult(_Value):
    old: str
    new: str
    old_version: str
    new_version: str
    adapter: str
    labelled_set: str
    queries: int
    answerable: int
    settings: UpgradeSettings
    suite: SuiteChanges
    metrics: list[MetricRow]
    gates: list[GateRow]
    movers: list[Mover]
    latency: list[LatencyRow]
    top_quality: dict[str, dict[str, list[float]]]  # mode -> "old"/"new" -> per-query top qualityScore
    deltas: dict[str, list[float]]  # mode -> per-query nDCG@10 differences (new - old)
    not_compared: list[str]
    regressions: list[str]
    verdict: Verdict
    # mode -> "old"/"new"/"old twin"/"new twin" -> records, in the set's order
    per_query: dict[str, dict[str, list[QueryRecord]]] = {}
    warnings: list[str] = []  # suspicious but allowed (the labelled set's warnings, etc.)
    sensitivity: list[str] = []  # drops the set is too small to see, said beside a SAFE

    @property
    def exit_code(self) -> int:
        return {"SAFE": 0, "REGRESSES": 1, "NOT JUDGED": 2}[self.verdict]


def _level(level: str) -> float:
    return float(LEVELS.index(level)) if level in LEVELS else float("nan")


class _Findings:
    """What the comparison collects on its way: rows, lines for the reader, and what blocks a verdict."""

    def __init__(self) -> None:
        self.not_compared: list[str] = []
        self.regressions: list[str] = []
        self.metrics: list[MetricRow] = []
        self.gates: list[GateRow] = []
        self.errors: list[GateRow] = []
        self.movers: list[Mover] = []
        self.latency: list[LatencyRow] = []
        self.top_quality: dict[str, dict[str, list[float]]] = {}
        self.deltas: dict[str, list[float]] = {}
        self.per_query: dict[str, dict[str, list[QueryRecord]]] = {}
        self.blocked: list[str] = []  # modes that errors kept from being compared


def compare(
    labelled: LabelledSet,
    old: EngineEvaluation,
    new: EngineEvaluation,
    suite: SuiteChanges,
    settings: UpgradeSettings,
    *,
    adapter: str,
    interleaved: bool,
    old_label: str,
    new_label: str,
    seed: int = 0,
    twins: tuple[EngineEvaluation, EngineEvaluation] | None = None,
) -> UpgradeResult:
    tol = settings.upgrade
    found = _Findings()
    sides = f"the old engine ({old_label})", f"the new engine ({new_label})"
    failed = old.failed or new.failed
    if failed:
        found.not_compared.append(
            f"retrieval quality, gates and latency: the evaluation could not run: {failed}"
        )
    if not labelled.answerable:
        found.not_compared.append(
            "retrieval quality: no query of the labelled set has a relevant document (every qrel graded "
            "0, or none), so no ranking metric exists"
        )
    for mode in () if failed else MODES:
        if mode in old.not_run and mode in new.not_run:
            found.not_compared.append(
                f"{mode} mode: neither engine ran it ({sides[0]}: {old.not_run[mode]}; "
                f"{sides[1]}: {new.not_run[mode]})"
            )
        elif mode in new.not_run:
            found.regressions.append(
                f"{mode} mode ran on {sides[0]} but {sides[1]} cannot run it: {new.not_run[mode]}"
            )
        elif mode in old.not_run:
            found.not_compared.append(
                f"{mode} mode: not compared: {sides[0]} cannot run it ({old.not_run[mode]}), so "
                f"{sides[1]}'s results have nothing to be compared with"
            )
        else:
            extra = [t.outcomes.get(mode) for t in twins or () if mode not in t.not_run]
            pair = (extra[0], extra[1]) if len(extra) == 2 and all(extra) else None
            _compare_mode(found, mode, labelled, old.outcomes[mode], new.outcomes[mode], pair, tol, seed)
    _judge(found, tol, interleaved=interleaved, old_label=old_label, new_label=new_label)
    _judge_suite(found, suite, tol.newly_failing_scenarios, old_label, new_label)
    judged_something = any(r.mode not in found.blocked for r in found.metrics + found.gates) or suite.compared
    cannot_judge = failed or (suite.why_not or "").startswith("NOT JUDGED") or not labelled.answerable
    blocked = bool(found.blocked) and not tol.allow_uncompared_modes
    # An engine lost, a suite not judged or a mode that errors hid say nothing either way; a regression
    # found elsewhere still stands beside a blocked mode (the error-rate row is usually it).
    verdict: Verdict = "SAFE"
    if cannot_judge:
        verdict = "NOT JUDGED"
    elif found.regressions:
        verdict = "REGRESSES"
    elif blocked or not judged_something:
        verdict = "NOT JUDGED"
    return UpgradeResult(
        old=old_label,
        new=new_label,
        old_version=old.version,
        new_version=new.version,
        adapter=adapter,
        labelled_set=labelled.name,
        queries=len(labelled.queries),
        answerable=len(labelled.answerable),
        settings=settings,
        suite=suite,
        metrics=found.metrics,
        gates=found.errors + found.gates,
        movers=found.movers,
        latency=found.latency,
        top_quality=found.top_quality,
        deltas=found.deltas,
        not_compared=found.not_compared,
        regressions=found.regressions,
        verdict=verdict,
        per_query=found.per_query,
        warnings=list(getattr(labelled, "warnings", ())),
        sensitivity=_sensitivity(found.metrics, tol.max_metric_drop, tol.alpha),
    )


def _compare_mode(
    found: _Findings,
    mode: str,
    labelled: LabelledSet,
    old: Sequence[Outcome],
    new: Sequence[Outcome],
    twins: tuple[Sequence[Outcome], Sequence[Outcome]] | None,
    tol: Any,
    seed: int,
) -> None:
    a = {o.query_id: o for o in old}
    b = {o.query_id: o for o in new}
    c = [{o.query_id: o for o in side} for side in twins or ()]
    asked = [q.id for q in labelled.queries if q.id in a and q.id in b]
    ids = [i for i in asked if a[i].error is None and b[i].error is None]
    errors = [(float(a[i].error is not None), float(b[i].error is not None)) for i in asked]
    found.errors.append(
        GateRow(
            mode=mode,
            gate=ERROR_RATE,
            test=paired_test(
                [x for x, _ in errors], [y for _, y in errors], seed=seed, alternative="greater"
            ),
            old_counts={"failed": sum(int(x) for x, _ in errors), "asked": len(asked)},
            new_counts={"failed": sum(int(y) for _, y in errors), "asked": len(asked)},
        )
    )
    metrics: dict[str, dict[str, dict[str, float]]] = {"old": {}, "new": {}}
    if len(ids) < 2:
        found.blocked.append(mode)
        found.not_compared.append(
            f"{mode} mode: quality, gates and latency not compared: only {len(ids)} of {len(asked)} "
            f"queries were answered on both sides ({int(sum(x for x, _ in errors))} lookups failed on the "
            f"old engine, {int(sum(y for _, y in errors))} on the new, each asked twice)"
            + ("" if tol.allow_uncompared_modes else "; allow-uncompared-modes = true lets the rest decide")
        )
    sample: set[str] = set()
    if len(ids) >= 2:
        _compare_answered(found, mode, labelled, a, b, ids, metrics, seed, tol.alpha)
        timed = [i for i in ids if all(i in t and t[i].error is None for t in c)]
        sample = set(timed)
        found.latency.append(sampled_row(mode, [a, b, *c], timed, seed=seed))
    named = [("old", a, metrics["old"]), ("new", b, metrics["new"])]
    named += [(name, side, {}) for name, side in zip(("old twin", "new twin"), c, strict=False)]
    found.per_query[mode] = {
        side: [
            QueryRecord(
                query_id=i,
                metrics={m: values[m][i] for m in METRICS if i in values.get(m, {})},
                seconds=outcomes[i].seconds,
                error=outcomes[i].error,
                repeats=list(outcomes[i].repeats),
                in_sample=i in sample,
            )
            for i in asked
            if i in outcomes
        ]
        for side, outcomes, values in named
    }


def _compare_answered(
    found: _Findings,
    mode: str,
    labelled: LabelledSet,
    a: dict[str, Outcome],
    b: dict[str, Outcome],
    ids: list[str],
    metrics: dict[str, dict[str, dict[str, float]]],
    seed: int,
    alpha: float,
) -> None:
    texts = {q.id: q.query for q in labelled.queries}
    answered = set(ids)
    qrels = {q.id: q.relevant for q in labelled.queries if q.relevant and q.id in answered}
    if qrels:
        runs = [{i: side[i].ranking for i in ids} for side in (a, b)]
        paired = compare_runs(qrels, runs[0], runs[1], METRICS, seed=seed, alternative="less")
        metrics["old"], metrics["new"] = paired.old.per_query, paired.new.per_query
        found.metrics += [
            MetricRow(
                mode=mode,
                metric=m,
                test=paired.tests[m],
                detectable_drop=detectable_drop(list(paired.old.per_query[m].values()), alpha=alpha),
            )
            for m in METRICS
        ]
        ma, mb = paired.old.per_query["nDCG@10"], paired.new.per_query["nDCG@10"]
        nd = [(i, ma[i], mb[i]) for i in paired.old.query_ids]
        found.deltas[mode] = [y - x for _, x, y in nd]
        ranked = sorted((m for m in nd if m[2] != m[1]), key=lambda m: m[2] - m[1])
        picked = ranked[:MOVERS] + [m for m in ranked[-MOVERS:][::-1] if m not in ranked[:MOVERS]]
        found.movers += [
            Mover(mode=mode, query_id=i, query=texts[i], old=x, new=y, delta=y - x) for i, x, y in picked
        ]
    oa, ob = [a[i] for i in ids], [b[i] for i in ids]
    found.gates.append(_gate(mode, "low-quality rate", oa, ob, lambda o: float(o.low_quality), seed))
    found.gates.append(_gate(mode, "retry rate", oa, ob, lambda o: float(o.path == "unfiltered_retry"), seed))
    level = _gate(mode, "relevance level (0 NONE .. 4 PRECISE)", oa, ob, lambda o: _level(o.level), seed)
    found.gates.append(
        level.model_copy(
            update={
                "old_counts": dict(Counter(o.level for o in oa)),
                "new_counts": dict(Counter(o.level for o in ob)),
            }
        )
    )
    found.top_quality[mode] = {
        "old": [o.top_quality or 0.0 for o in oa],
        "new": [o.top_quality or 0.0 for o in ob],
    }


def _judge(found: _Findings, tol: Any, *, interleaved: bool, old_label: str, new_label: str) -> None:
    adjusted = adjust([r.test for r in found.metrics] + [r.test for r in found.gates])
    n = len(found.metrics)
    metrics = [r.model_copy(update={"test": t}) for r, t in zip(found.metrics, adjusted[:n], strict=True)]
    gates = [r.model_copy(update={"test": t}) for r, t in zip(found.gates, adjusted[n:], strict=True)]
    found.metrics = [_judge_metric(r, tol.alpha, tol.max_metric_drop, found.regressions) for r in metrics]
    found.gates = [_judge_gate(r, tol, found.regressions) for r in gates]
    found.errors = [
        _judge_errors(r, tol.max_error_rate_increase, found.regressions, new_label) for r in found.errors
    ]
    found.latency = judge_latencies(
        [r.model_copy(update={"interleaved": interleaved}) for r in found.latency],
        tol.alpha,
        tol.max_latency_ratio,
        found.regressions,
        found.not_compared,
        new_label=new_label,
    )


def _judge_suite(found: _Findings, suite: SuiteChanges, allowed: int, old_label: str, new_label: str) -> None:
    if not suite.compared:
        found.not_compared.append(f"conformance suite and engine checks: {suite.why_not}")
        return
    if len(suite.newly_failing) > allowed:
        found.regressions.append(
            f"{len(suite.newly_failing)} scenarios newly fail on {new_label}: {_names(suite.newly_failing)}"
        )
    if suite.newly_not_applicable:
        found.regressions.append(
            f"{len(suite.newly_not_applicable)} scenarios that ran on {old_label} are not applicable on "
            f"{new_label} (the engine lacks what they need): {_names(suite.newly_not_applicable)}"
        )


def _sensitivity(rows: Sequence[MetricRow], tolerance: float, alpha: float) -> list[str]:
    """A line when the set cannot see drops as small as the tolerance promises (each row has its own)."""
    blind = [r for r in rows if (r.detectable_drop or 0) > tolerance]
    if not blind:
        return []
    headline = [r for r in blind if r.metric == "nDCG@10"] or blind[:1]
    drops = ", ".join(f"{r.detectable_drop:.3f} {r.metric} ({r.mode})" for r in headline)
    n = max(r.test.n for r in headline)
    return [
        f"within what {n} answerable queries can show: drops above {drops} (one-sided, alpha {alpha:g}, "
        f"80% power; every metric's in its row), wider than max-metric-drop {tolerance:g}"
    ]


def _names(rows: Sequence[dict[str, Any]], shown: int = 10) -> str:
    """The first scenario ids of ``rows``; the table of the report lists them all."""
    names = ", ".join(s["id"] for s in rows[:shown])
    return names + (f" and {len(rows) - shown} more (listed below)" if len(rows) > shown else "")


def _gate(
    mode: str, name: str, old: Sequence[Outcome], new: Sequence[Outcome], value: Any, seed: int
) -> GateRow:
    return GateRow(
        mode=mode, gate=name, test=paired_test([value(o) for o in old], [value(o) for o in new], seed=seed)
    )


def _significant(test: PairedTest, alpha: float) -> bool:
    return (test.q_value if test.q_value is not None else test.p_value) < alpha


def _judge_metric(row: MetricRow, alpha: float, drop: float, regressions: list[str]) -> MetricRow:
    t = row.test
    if _significant(t, alpha) and -t.delta > drop:
        regressions.append(
            f"{row.metric} ({row.mode}) drops from {t.old_mean:.3f} to {t.new_mean:.3f} "
            f"(difference {t.delta:+.3f}, 95% CI {t.ci_low:+.3f} to {t.ci_high:+.3f}, one-sided q "
            f"{t.q_value:.4f})"
        )
        return row.model_copy(update={"regressed": True})
    return row


def _judge_gate(row: GateRow, tol: Any, regressions: list[str]) -> GateRow:
    t = row.test
    limit = tol.max_level_shift if row.gate.startswith("relevance") else tol.max_gate_change
    if _significant(t, tol.alpha) and abs(t.delta) > limit:
        regressions.append(
            f"{row.gate} ({row.mode}) moves from {t.old_mean:.3f} to {t.new_mean:.3f} "
            f"(difference {t.delta:+.3f}, beyond ±{limit:g}; q {t.q_value:.4f})"
        )
        return row.model_copy(update={"regressed": True})
    return row


def _judge_errors(row: GateRow, limit: float, regressions: list[str], new_label: str) -> GateRow:
    """An error rate that grows beyond ``limit`` is a regression, significant or not: after a retry, a
    lookup that fails is not noise to be averaged away but a query users would see fail."""
    t = row.test
    if t.delta > limit:
        regressions.append(
            f"error rate ({row.mode}) grows on {new_label}: {row.new_counts['failed']} of "
            f"{row.new_counts['asked']} lookups failed twice, against {row.old_counts['failed']} on the old "
            f"engine (beyond max-error-rate-increase {limit:g})"
        )
        return row.model_copy(update={"regressed": True})
    return row
