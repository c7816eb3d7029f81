"""The gate of ``rag-conformance upgrade``: old engine against new, query by query, and the verdict.

Ranking metrics are trec_eval's, through ir_measures (:func:`evaluation.compare`, the measures
``rag-reference evaluate`` reports), over the answerable queries; the gates are over every query. Every
test is paired over the queries both engines answered (:mod:`evaluation`'s paired statistics), and
their p-values are adjusted together (Benjamini-Hochberg) before they meet the tolerances.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from evaluation import LabelledSet, PairedTest, adjust, paired_test, percentile
from evaluation import compare as compare_runs

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
Verdict = Literal["SAFE", "REGRESSES", "NOT JUDGED"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class MetricRow(_Value):
    mode: str
    metric: str
    test: PairedTest
    regressed: bool = False


class GateRow(_Value):
    mode: str
    gate: str  # low-quality rate, retry rate, relevance level
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


class LatencyRow(_Value):
    mode: str
    old_p50: float
    old_p95: float
    new_p50: float
    new_p95: float
    ratio_p50: float
    ratio_p95: float
    interleaved: bool
    log_ratio_test: PairedTest  # log(new seconds) - log(old seconds) per query
    regressed: bool = False
    old_p99: float | None = None
    new_p99: float | None = None
    ratio_p99: float | None = None  # None where the sample is too small
    noise: str | None = None  # what the A/A calibration measured, said in words


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
    per_query: dict[str, dict[str, list[QueryRecord]]] = {}  # mode -> "old"/"new" -> records, set order
    warnings: list[str] = []  # suspicious but allowed (the labelled set's warnings, etc.)

    @property
    def exit_code(self) -> int:
        return {"SAFE": 0, "REGRESSES": 1, "NOT JUDGED": 2}[self.verdict]


def _level(level: str) -> float:
    return float(LEVELS.index(level)) if level in LEVELS else float("nan")


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
) -> UpgradeResult:
    tol = settings.upgrade
    not_compared: list[str] = []
    regressions: list[str] = []
    metric_rows: list[MetricRow] = []
    gate_rows: list[GateRow] = []
    movers: list[Mover] = []
    latency: list[LatencyRow] = []
    top_quality: dict[str, dict[str, list[float]]] = {}
    deltas: dict[str, list[float]] = {}
    texts = {q.id: q.query for q in labelled.queries}
    compared_modes = []
    failed = old.failed or new.failed
    if failed:
        not_compared.append(f"retrieval quality, gates and latency: the evaluation could not run: {failed}")
    for mode in () if failed else MODES:
        if mode in old.not_run and mode in new.not_run:
            not_compared.append(
                f"{mode} mode: neither engine ran it ({old_label}: {old.not_run[mode]}; "
                f"{new_label}: {new.not_run[mode]})"
            )
        elif mode in new.not_run:
            regressions.append(f"{mode} mode ran on {old_label} but not on {new_label}: {new.not_run[mode]}")
        elif mode in old.not_run:
            not_compared.append(
                f"{mode} mode: not compared, {old_label} could not run it ({old.not_run[mode]}); "
                f"{new_label} can, so there is nothing to compare it with"
            )
        else:
            compared_modes.append(mode)
    for mode in compared_modes:
        a = {o.query_id: o for o in old.outcomes[mode]}
        b = {o.query_id: o for o in new.outcomes[mode]}
        ids = [q.id for q in labelled.queries if q.id in a and q.id in b]
        qrels = {q.id: q.relevant for q in labelled.queries if q.relevant and q.id in a and q.id in b}
        runs = [{i: side[i].ranking for i in ids} for side in (a, b)]
        paired = compare_runs(qrels, runs[0], runs[1], METRICS, seed=seed)
        metric_rows += [MetricRow(mode=mode, metric=m, test=paired.tests[m]) for m in METRICS]
        ma, mb = paired.old.per_query["nDCG@10"], paired.new.per_query["nDCG@10"]
        nd = [(i, ma[i], mb[i]) for i in paired.old.query_ids]
        deltas[mode] = [y - x for _, x, y in nd]
        ranked = sorted((m for m in nd if m[2] != m[1]), key=lambda m: m[2] - m[1])
        picked = ranked[:MOVERS] + [m for m in ranked[-MOVERS:][::-1] if m not in ranked[:MOVERS]]
        movers += [
            Mover(mode=mode, query_id=i, query=texts[i], old=x, new=y, delta=y - x) for i, x, y in picked
        ]
        oa, ob = [a[i] for i in ids], [b[i] for i in ids]
        gate_rows.append(_gate(mode, "low-quality rate", oa, ob, lambda o: float(o.low_quality), seed))
        gate_rows.append(
            _gate(mode, "retry rate", oa, ob, lambda o: float(o.path == "unfiltered_retry"), seed)
        )
        level = _gate(mode, "relevance level (0 NONE .. 4 PRECISE)", oa, ob, lambda o: _level(o.level), seed)
        gate_rows.append(
            level.model_copy(
                update={
                    "old_counts": dict(Counter(o.level for o in oa)),
                    "new_counts": dict(Counter(o.level for o in ob)),
                }
            )
        )
        top_quality[mode] = {
            "old": [o.top_quality or 0.0 for o in oa],
            "new": [o.top_quality or 0.0 for o in ob],
        }
        latency.append(_latency(mode, oa, ob, interleaved, seed))
    adjusted = adjust([r.test for r in metric_rows] + [r.test for r in gate_rows])
    n = len(metric_rows)
    metric_rows = [r.model_copy(update={"test": t}) for r, t in zip(metric_rows, adjusted[:n], strict=True)]
    gate_rows = [r.model_copy(update={"test": t}) for r, t in zip(gate_rows, adjusted[n:], strict=True)]
    metric_rows = [_judge_metric(r, tol.alpha, tol.max_metric_drop, regressions) for r in metric_rows]
    gate_rows = [_judge_gate(r, tol, regressions) for r in gate_rows]
    latency = [
        _judge_latency(r, tol.alpha, tol.max_latency_ratio, regressions, not_compared) for r in latency
    ]
    if not suite.compared:
        not_compared.append(f"conformance suite and engine checks: {suite.why_not}")
    else:
        if len(suite.newly_failing) > tol.newly_failing_scenarios:
            regressions.append(
                f"{len(suite.newly_failing)} scenarios newly fail on {new_label}: "
                f"{_names(suite.newly_failing)}"
            )
        if suite.newly_not_applicable:
            regressions.append(
                f"{len(suite.newly_not_applicable)} scenarios that ran on {old_label} are not applicable on "
                f"{new_label} (the engine lacks what they need): {_names(suite.newly_not_applicable)}"
            )
    judged_something = bool(compared_modes) or suite.compared
    cannot_judge = failed or (suite.why_not or "").startswith("NOT JUDGED")
    # An engine lost or a suite not judged says nothing either way; a mode lost is a finding by itself.
    verdict: Verdict = "SAFE"
    if cannot_judge:
        verdict = "NOT JUDGED"
    elif regressions:
        verdict = "REGRESSES"
    elif not judged_something:
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
        metrics=metric_rows,
        gates=gate_rows,
        movers=movers,
        latency=latency,
        top_quality=top_quality,
        deltas=deltas,
        not_compared=not_compared,
        regressions=regressions,
        verdict=verdict,
    )


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
            f"(difference {t.delta:+.3f}, 95% CI {t.ci_low:+.3f} to {t.ci_high:+.3f}, q {t.q_value:.4f})"
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


def _latency(
    mode: str, old: Sequence[Outcome], new: Sequence[Outcome], interleaved: bool, seed: int
) -> LatencyRow:
    import math

    sa, sb = [o.seconds for o in old], [o.seconds for o in new]
    logs = paired_test([math.log(max(s, 1e-9)) for s in sa], [math.log(max(s, 1e-9)) for s in sb], seed=seed)
    p50a, p95a, p50b, p95b = percentile(sa, 50), percentile(sa, 95), percentile(sb, 50), percentile(sb, 95)
    return LatencyRow(
        mode=mode,
        old_p50=p50a,
        old_p95=p95a,
        new_p50=p50b,
        new_p95=p95b,
        ratio_p50=p50b / p50a if p50a > 0 else math.inf,
        ratio_p95=p95b / p95a if p95a > 0 else math.inf,
        interleaved=interleaved,
        log_ratio_test=logs,
    )


def _judge_latency(
    row: LatencyRow, alpha: float, limit: float, regressions: list[str], not_compared: list[str]
) -> LatencyRow:
    if not row.interleaved:
        not_compared.append(
            f"latency ({row.mode}): the engines could not run at once, so the ratio "
            f"{row.ratio_p50:.2f} was measured one after the other and is reported, not gated"
        )
        return row
    if row.ratio_p50 > limit and row.log_ratio_test.p_value < alpha:
        regressions.append(
            f"lookup latency ({row.mode}): median {row.new_p50 * 1000:.1f} ms against "
            f"{row.old_p50 * 1000:.1f} ms, {row.ratio_p50:.2f} times (beyond {limit:g})"
        )
        return row.model_copy(update={"regressed": True})
    return row
