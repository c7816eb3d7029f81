"""The upgrade gate never says SAFE without having looked (issue 42), on planted evaluations.

Each test plants a change in what the two engines answered (no engine runs here; the command-line
tests run real ones) and checks what the gate makes of it: a failed lookup is data, the tail of the
latency is gated beyond the noise two instances of the old engine show, a set with nothing to
answer is NOT JUDGED, and a SAFE says what the set could have seen.
"""

from __future__ import annotations

import json
import random
from typing import Any

from conformance.upgrade import (
    EngineEvaluation,
    Outcome,
    SuiteChanges,
    UpgradeResult,
    compare,
    load_labelled_set,
    load_upgrade_settings,
)
from conformance.upgrade._data import upgrade_json
from conformance.upgrade._settings import UpgradeSettings

LABELLED = load_labelled_set(None)  # the bundled set: 137 queries, 112 answerable
ANSWERABLE = [q for q in LABELLED.queries if q.relevant]


def _side(
    engine: str,
    *,
    seconds: Any = 0.010,
    failing: dict[str, set[str]] | None = None,
    drop_top: set[str] = frozenset(),  # type: ignore[assignment]
    modes: tuple[str, ...] = ("dense", "hybrid"),
) -> EngineEvaluation:
    """Every query answered with its first relevant chunk first, unless planted otherwise."""
    evaluation = EngineEvaluation(engine, version=engine)
    for mode in modes:
        outcomes = []
        for i, q in enumerate(LABELLED.queries):
            if q.id in (failing or {}).get(mode, set()):
                outcomes.append(Outcome.failed(q.id, "RuntimeError: boom"))
                continue
            ranking = (*tuple(q.relevant)[:1], "noise#0", "noise#1")
            if mode in drop_top:
                ranking = ranking[1:]  # the new engine loses the answer at rank 1
            t = seconds(i) if callable(seconds) else seconds
            outcomes.append(Outcome(q.id, ranking, 0.6, False, "RELEVANT", "unfiltered", t))
        evaluation.outcomes[mode] = outcomes
    return evaluation


def _compare(
    old: EngineEvaluation,
    new: EngineEvaluation,
    settings: UpgradeSettings | None = None,
    twins: tuple[EngineEvaluation, EngineEvaluation] | None = None,
    labelled: Any = LABELLED,
) -> UpgradeResult:
    return compare(
        labelled,
        old,
        new,
        SuiteChanges(compared=False, why_not="skipped (--no-suite)"),
        settings or load_upgrade_settings(None),
        adapter="planted",
        interleaved=True,
        old_label=old.engine,
        new_label=new.engine,
        twins=twins,
    )


def _settings(**upgrade: Any) -> UpgradeSettings:
    return UpgradeSettings.model_validate({"upgrade": upgrade})


# -- errors are data ---------------------------------------------------------------------------------


def test_one_failed_lookup_on_the_old_side_no_longer_hides_a_regression_in_that_mode() -> None:
    # At 9e88514: one lookup raising on the old engine made hybrid "not compared", and the new engine
    # dropping the top hit on every hybrid lookup went unseen: SAFE, exit 0.
    one = ANSWERABLE[3].id
    result = _compare(_side("lite", failing={"hybrid": {one}}), _side("lite", drop_top={"hybrid"}))
    assert result.verdict == "REGRESSES"
    assert any(r.startswith("R@1 (hybrid) drops") for r in result.regressions)
    hybrid = [r for r in result.metrics if r.mode == "hybrid"]
    assert hybrid[0].test.n == len(ANSWERABLE) - 1  # paired over the queries both sides answered


def test_a_failure_on_the_new_side_is_an_error_rate_regression_and_the_rest_is_still_compared() -> None:
    result = _compare(_side("lite"), _side("lite", failing={"dense": {ANSWERABLE[0].id}}))
    assert result.verdict == "REGRESSES"
    [line] = result.regressions
    assert line.startswith("error rate (dense) grows on lite: 1 of 137 lookups failed twice")
    assert {r.mode for r in result.metrics} == {"dense", "hybrid"}  # neither mode was thrown away
    [row] = [g for g in result.gates if g.gate == "error rate" and g.mode == "dense"]
    assert row.regressed
    assert (row.old_counts["failed"], row.new_counts["failed"]) == (0, 1)
    record = next(r for r in result.per_query["dense"]["new"] if r.query_id == ANSWERABLE[0].id)
    assert record.error == "RuntimeError: boom"
    assert record.seconds is None


def test_an_error_rate_tolerance_lets_a_stated_share_of_failures_through() -> None:
    result = _compare(
        _side("lite"),
        _side("lite", failing={"dense": {ANSWERABLE[0].id}}),
        settings=_settings(**{"max-error-rate-increase": 0.01}),
    )
    assert result.verdict == "SAFE"


def test_a_mode_errors_left_uncompared_is_not_judged_unless_the_user_allows_it() -> None:
    everything = {q.id for q in LABELLED.queries}
    old, new = _side("lite", failing={"hybrid": everything}), _side("lite", failing={"hybrid": everything})
    result = _compare(old, new)
    assert result.verdict == "NOT JUDGED"
    [line] = [n for n in result.not_compared if n.startswith("hybrid")]
    assert "only 0 of 137 queries were answered on both sides" in line
    assert "allow-uncompared-modes" in line
    allowed = _compare(old, new, settings=_settings(**{"allow-uncompared-modes": True}))
    assert allowed.verdict == "SAFE"  # dense was compared and did not move
    assert any(n.startswith("hybrid") for n in allowed.not_compared)  # and the reader is told


def test_the_new_engine_failing_everywhere_is_a_regression_not_a_blind_spot() -> None:
    everything = {q.id for q in LABELLED.queries}
    result = _compare(_side("lite"), _side("lite", failing={"hybrid": everything}))
    assert result.verdict == "REGRESSES"
    assert any(r.startswith("error rate (hybrid) grows") for r in result.regressions)


# -- latency -----------------------------------------------------------------------------------------


def _times(seed: int, slow_share: float = 0.0, extra: float = 0.0, scale: float = 1.0) -> Any:
    rng = random.Random(seed)
    draws = [(0.010 + rng.random() * 0.006) * scale for _ in LABELLED.queries]
    slow = {i for i in range(len(draws)) if rng.random() < slow_share}
    return lambda i: draws[i] + (extra if i in slow else 0.0)


def test_a_slower_tail_is_a_regression_though_the_median_holds() -> None:
    # +50 ms on 30% of lookups: the median moves little, p95 several times. At 9e88514: SAFE.
    result = _compare(_side("lite", seconds=_times(1)), _side("lite", seconds=_times(1, 0.3, 0.050)))
    assert result.verdict == "REGRESSES"
    [row] = [r for r in result.latency if r.mode == "dense"]
    assert row.regressed
    assert row.ratio_p50 is not None
    assert row.ratio_p50 < 2.0
    assert row.ratio_p95 is not None
    assert row.ratio_p95 > 2.0
    assert any("p95" in r and "lookup latency (dense)" in r for r in result.regressions)
    assert row.new_p99 is None  # 137 lookups: too few for a p99 (P99_MIN)


def test_an_engine_within_the_noise_of_its_own_instances_is_no_latency_regression() -> None:
    # Same engine on both sides, whose instances land 1.3x apart: the first old instance fast, the
    # first new one slow. A gate blind to the instance effect calls that a regression at 1.1; with
    # the twins, the faster new instance is no slower than the slower old one.
    settings = _settings(**{"max-latency-ratio": 1.1})
    old, old_twin = _side("a", seconds=_times(2)), _side("b", seconds=_times(3, scale=1.3))
    new, new_twin = _side("c", seconds=_times(4, scale=1.3)), _side("d", seconds=_times(5))
    without = _compare(old, new, settings=settings)
    assert without.verdict == "REGRESSES"  # what a gate blind to the instance effect says
    result = _compare(old, new, settings=settings, twins=(old_twin, new_twin))
    assert result.verdict == "SAFE", result.regressions
    [row] = [r for r in result.latency if r.mode == "dense"]
    assert row.noise is not None
    assert row.noise.startswith("two instances of the old engine on this machine differ by 1.")
    assert row.twin_old_p50 is not None
    assert row.twin_new_p50 is not None
    # A new engine whose both instances are slower than both old ones, beyond the tolerance, is found.
    slow, slow_twin = _side("e", seconds=_times(6, scale=1.6)), _side("f", seconds=_times(7, scale=1.6))
    found = _compare(old, slow, settings=settings, twins=(old_twin, slow_twin))
    assert found.verdict == "REGRESSES"
    assert any("both instances of the new engine" in r for r in found.regressions)


def test_latency_measured_one_after_the_other_is_reported_not_gated() -> None:
    result = compare(
        LABELLED,
        _side("x", seconds=_times(1)),
        _side("x", seconds=_times(1, 0.5, 0.2)),
        SuiteChanges(compared=False, why_not="skipped"),
        load_upgrade_settings(None),
        adapter="planted",
        interleaved=False,
        old_label="x",
        new_label="x",
    )
    assert result.verdict == "SAFE"
    assert any(
        n.startswith("latency (dense): the engines could not run at once") for n in result.not_compared
    )


# -- a set with nothing to answer, and what SAFE means ---------------------------------------------------


def test_a_set_without_an_answerable_query_is_not_judged_and_its_json_holds_no_nan() -> None:
    nothing = LABELLED.model_copy(
        update={"queries": tuple(q.model_copy(update={"relevant": {}}) for q in LABELLED.queries)}
    )
    result = _compare(_side("lite"), _side("lite"), labelled=nothing)
    assert result.verdict == "NOT JUDGED"
    assert result.answerable == 0
    assert result.metrics == []
    assert any("no query of the labelled set has a relevant document" in n for n in result.not_compared)

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    json.loads(upgrade_json(result), parse_constant=refuse)  # as JSON.parse reads it


def test_quality_is_asked_one_sided_and_safe_says_what_the_set_could_see() -> None:
    result = _compare(_side("lite"), _side("lite"))
    assert result.verdict == "SAFE"
    assert {r.test.alternative for r in result.metrics} == {"less"}  # a regression is a drop
    assert {g.test.alternative for g in result.gates if g.gate != "error rate"} == {"two-sided"}
    ndcg = next(r for r in result.metrics if r.metric == "nDCG@10" and r.mode == "dense")
    assert ndcg.detectable_drop is not None
    assert 0.02 < ndcg.detectable_drop < 0.2  # 112 queries cannot see the 0.02 the settings promise
    [line] = result.sensitivity
    assert line.startswith("within what 112 answerable queries can show: drops above 0.0")
    assert "nDCG@10 (dense)" in line
    assert "nDCG@10 (hybrid)" in line
    loose = _compare(_side("lite"), _side("lite"), settings=_settings(**{"max-metric-drop": 0.5}))
    assert loose.sensitivity == []  # a tolerance the set can see needs no caveat


def test_with_enough_lookups_the_p99_is_gated_and_several_latency_tests_are_adjusted_together() -> None:
    from conformance.upgrade._latency import P99_MIN, judge_latencies, latency_row

    rng = random.Random(9)
    old = [0.010 + rng.random() * 0.004 for _ in range(P99_MIN + 100)]
    new = [t + (0.200 if i % 50 == 0 else 0.0) for i, t in enumerate(old)]  # 2% of lookups 200 ms slower
    row = latency_row("dense", old, new, None, interleaved=True, seed=0)
    assert row.ratio_p99 is not None
    assert row.ratio_p99 > 5
    assert row.ratio_p95 is not None
    assert row.ratio_p95 < 1.1  # only the slowest one percent moved
    regressions: list[str] = []
    [judged] = judge_latencies([row], 0.05, 2.0, regressions, [], new_label="new")
    assert judged.regressed
    assert set(judged.q_values) == {"p50", "p95", "p99"}
    assert all(judged.q_values[k] >= p for k, p in judged.p_values().items())
    [line] = regressions
    assert "p99" in line
    assert "p95" not in line
