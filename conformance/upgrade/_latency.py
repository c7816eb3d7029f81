"""The latency rows of the upgrade gate: p50, p95 and (with enough lookups) p99, new against old.

The times are paired by query (every query was asked on each side in turn, in a random order per
query, while all sides were up), so machine load falls on all alike. What pairing cannot remove is
the instance effect: two processes of the same engine on one machine differ persistently (memory
layout, caches, cores), by 1.2x at p50 and 1.5x at p95 on a busy machine here. Where a second
instance of each engine ran beside the first two (the twins, :func:`._sides.calibrates`), each
percentile of the faster new instance is compared with the slower old one, and the row says how far
apart the two instances of each engine were: a latency regression is called only when both
instances of the new engine are slower than both of the old, beyond the tolerance. Same engine on
both sides, that takes two independent instances both landing slow, and by the tolerance.

A percentile is gated when the new engine is slower than that base by more than
``max-latency-ratio`` and a one-sided paired test says the difference is not chance: for p50 the
sign-flip test of the log-time differences (the typical query slower), for p95 and p99 the sign-flip
test of the percentile difference itself (the tail slower while the median does not move). Up to six
such tests run at once (three percentiles, two modes), so their p-values are adjusted together
(Benjamini-Hochberg) before they meet alpha, as the quality tests are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from evaluation import PairedTest, adjust_p, paired_quantile_test, paired_test, percentile

__all__ = [
    "INSTANCES",
    "P99_MIN",
    "LatencyRow",
    "judge_latencies",
    "latency_row",
    "sampled_row",
    "timing_rounds",
]

P99_MIN = 500
"""Lookups needed before a p99 is reported and gated: five lookups above it. Below that a p99 is the
slowest one or two lookups, and measured: two instances of one engine then differ by 1.35x at p99
often enough (on 137 lookups) to pass a 1.1 tolerance by chance."""
MAX_ROUNDS = 8
"""At most this many timed lookups per query, engine and mode: enough for a p99 on a set of 63 queries
or more (the bundled set's 137 queries are each timed 4 times, 548 lookups); a smaller set would need
so many repeats of so few queries that its p99 would be those few queries', so it is timed once."""
PERCENTILES = ("p50", "p95", "p99")
INSTANCES = ("old", "old twin", "new", "new twin")
"""The instances a latency row measures, as the page, ``latency.csv`` and ``upgrade.json`` name them."""


def timing_rounds(queries: int) -> int:
    """How many times each query is timed on each instance: enough for :data:`P99_MIN` lookups where at
    most :data:`MAX_ROUNDS` repeats reach it, else once (repeats do not make a small set's tail)."""
    if queries <= 0:
        return 1
    needed = math.ceil(P99_MIN / queries)
    return needed if needed <= MAX_ROUNDS else 1


class LatencyRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: str
    old_p50: float | None
    old_p95: float | None
    new_p50: float | None
    new_p95: float | None
    ratio_p50: float | None  # new against the base: the slower of the old engine's instances
    ratio_p95: float | None
    interleaved: bool
    log_ratio_test: PairedTest  # log(new seconds) - log(base seconds) per query, one-sided
    regressed: bool = False
    regressed_at: list[str] = []  # the percentiles beyond the tolerance ("p95")
    old_p99: float | None = None
    new_p99: float | None = None
    ratio_p99: float | None = None  # None where the sample is too small (fewer than P99_MIN lookups)
    noise: str | None = None  # what the twins measured, said in words
    twin_old_p50: float | None = None  # the engines' second instances, where they ran
    twin_old_p95: float | None = None
    twin_old_p99: float | None = None
    twin_new_p50: float | None = None
    twin_new_p95: float | None = None
    twin_new_p99: float | None = None
    p95_p_value: float | None = None  # one-sided: is the new tail slower than the base's?
    p99_p_value: float | None = None
    q_values: dict[str, float] = {}  # "p50"/"p95"/"p99" -> adjusted over every latency test
    lookups: int = 0  # timed lookups per instance in the sample (queries answered on every side x rounds)
    rounds: int = 1  # times each query was timed on each instance
    # percentile -> the instance the gated ratio divides by (the slower old) and the one divided (the
    # faster new): "old"/"old twin" and "new"/"new twin" (INSTANCES)
    base: dict[str, str] = {}
    candidate: dict[str, str] = {}

    def value(self, instance: str, name: str) -> float | None:
        """The ``name`` percentile ("p50") of ``instance`` ("old twin"), in seconds; None where absent."""
        prefix = {"old": "old", "new": "new", "old twin": "twin_old", "new twin": "twin_new"}[instance]
        return getattr(self, f"{prefix}_{name}")

    def pair(self, name: str) -> tuple[str, float | None, str, float | None]:
        """The gated pair at percentile ``name``: (candidate instance, its seconds, base instance, its
        seconds); the ratio of the row is the first value over the second."""
        new, old = self.candidate.get(name, "new"), self.base.get(name, "old")
        return new, self.value(new, name), old, self.value(old, name)

    def pair_text(self, name: str) -> str:
        """``7.52 ms (new twin) / 4.10 ms (old) = 1.83x``: the ratio beside the two numbers it divides."""
        new, a, old, b = self.pair(name)
        ratio = getattr(self, f"ratio_{name}")
        if a is None or b is None or ratio is None:
            return "-"
        return f"{a * 1000:.2f} ms ({new}) / {b * 1000:.2f} ms ({old}) = {ratio:.2f}x"

    def p_values(self) -> dict[str, float]:
        """The one-sided p-value of each percentile this row has."""
        found = {"p50": self.log_ratio_test.p_value, "p95": self.p95_p_value, "p99": self.p99_p_value}
        return {k: v for k, v in found.items() if v is not None}


def _ratio(new: float | None, base: float | None) -> float | None:
    if new is None or base is None:
        return None
    return new / base if base > 0 else math.inf


def latency_row(
    mode: str,
    old: Sequence[float],
    new: Sequence[float],
    twins: tuple[Sequence[float], Sequence[float]] | None,
    *,
    interleaved: bool,
    seed: int,
    rounds: int = 1,
    queries: Sequence[str] | None = None,
) -> LatencyRow:
    """One mode's row from per-lookup seconds (same queries and rounds, same order on every side);
    ``twins`` are the second instances of the old and of the new engine; ``queries`` names the query of
    each lookup (its repeats share it), None when each lookup is a query of its own."""
    n = len(old)
    quantiles = (50, 95, 99) if n >= P99_MIN else (50, 95)
    olds = [old, *(twins[:1] if twins else ())]
    news = [new, *(twins[1:] if twins else ())]

    def pick(values: Sequence[float] | None, q: int) -> float | None:
        return percentile(values, q) if values and q in quantiles else None

    # At each percentile: the slower old instance is the base, the faster new one the candidate.
    slower = {q: max(range(len(olds)), key=lambda i: percentile(olds[i], q)) for q in quantiles}
    faster = {q: min(range(len(news)), key=lambda i: percentile(news[i], q)) for q in quantiles}
    base = {q: olds[i] for q, i in slower.items()}
    candidate = {q: news[i] for q, i in faster.items()}
    # The median's test pairs queries, not lookups: a query's repeats share its cost, so each query's
    # mean log time is one value (548 lookups of 137 queries are 137 pairs, not 548).
    logs = paired_test(
        _per_query([math.log(max(s, 1e-9)) for s in base[50]], queries) if n else [],
        _per_query([math.log(max(s, 1e-9)) for s in candidate[50]], queries) if n else [],
        seed=seed,
        alternative="greater",
    )
    tail = {q: paired_quantile_test(base[q], candidate[q], q, seed=seed) for q in quantiles if q != 50}
    noise = None
    if twins is not None and n:

        def spread(pair: Sequence[Sequence[float]]) -> str:
            parts = []
            for q in quantiles:
                a, b = (percentile(v, q) for v in pair)
                parts.append(f"{max(a, b) / min(a, b):.2f}x at p{q}" if min(a, b) > 0 else f"- at p{q}")
            return ", ".join(parts)

        noise = (
            f"two instances of the old engine on this machine differ by {spread(olds)}, two of the new "
            f"by {spread(news)} ({n} lookups each); the faster new instance is measured against the "
            "slower old one"
        )
    twin_old, twin_new = twins if twins else (None, None)
    return LatencyRow(
        mode=mode,
        old_p50=pick(old, 50),
        old_p95=pick(old, 95),
        old_p99=pick(old, 99),
        new_p50=pick(new, 50),
        new_p95=pick(new, 95),
        new_p99=pick(new, 99),
        twin_old_p50=pick(twin_old, 50),
        twin_old_p95=pick(twin_old, 95),
        twin_old_p99=pick(twin_old, 99),
        twin_new_p50=pick(twin_new, 50),
        twin_new_p95=pick(twin_new, 95),
        twin_new_p99=pick(twin_new, 99),
        ratio_p50=_ratio(pick(candidate.get(50), 50), pick(base.get(50), 50)),
        ratio_p95=_ratio(pick(candidate.get(95), 95), pick(base.get(95), 95)),
        ratio_p99=_ratio(pick(candidate.get(99), 99), pick(base.get(99), 99)),
        interleaved=interleaved,
        log_ratio_test=logs,
        p95_p_value=tail.get(95),
        p99_p_value=tail.get(99),
        noise=noise,
        lookups=n,
        rounds=rounds,
        base={f"p{q}": ("old", "old twin")[i] for q, i in slower.items()},
        candidate={f"p{q}": ("new", "new twin")[i] for q, i in faster.items()},
    )


class _Timed(Protocol):
    @property
    def timings(self) -> tuple[float | None, ...]: ...


def sampled_row(
    mode: str, instances: Sequence[Mapping[str, _Timed]], timed: Sequence[str], *, seed: int
) -> LatencyRow:
    """The row of ``instances`` (old, new, then the twins where they ran; query id -> outcome) over
    the ``timed`` queries: every round of each timed on every instance, paired by (query, round)."""

    def rounds(query_id: str) -> int:
        return min(len(side[query_id].timings) for side in instances)

    pairs = [
        (i, k)
        for i in timed
        for k in range(rounds(i))
        if all(side[i].timings[k] is not None for side in instances)
    ]
    times = [[side[i].timings[k] or 0.0 for i, k in pairs] for side in instances]
    return latency_row(
        mode,
        times[0],
        times[1],
        (times[2], times[3]) if len(times) == 4 else None,
        interleaved=True,
        seed=seed,
        rounds=max((rounds(i) for i in timed), default=1),
        queries=[i for i, _ in pairs],
    )


def _per_query(values: Sequence[float], queries: Sequence[str] | None) -> list[float]:
    """The mean of each query's values, in the order the queries first appear; ``values`` as they are
    when each is a query of its own."""
    if queries is None:
        return list(values)
    grouped: dict[str, list[float]] = {}
    for query, value in zip(queries, values, strict=True):
        grouped.setdefault(query, []).append(value)
    return [sum(v) / len(v) for v in grouped.values()]


def judge_latencies(
    rows: list[LatencyRow],
    alpha: float,
    limit: float,
    regressions: list[str],
    not_compared: list[str],
    *,
    new_label: str,
) -> list[LatencyRow]:
    """The rows with their adjusted q-values, each marked regressed (and said why) where a
    percentile is beyond ``limit`` and its q below ``alpha``."""
    gated = [r for r in rows if r.interleaved and r.lookups >= 2]
    keys = [(i, k, p) for i, r in enumerate(gated) for k, p in r.p_values().items()]
    q = adjust_p([p for _, _, p in keys])
    by_row: dict[int, dict[str, float]] = {}
    for (i, k, _), v in zip(keys, q, strict=True):
        by_row.setdefault(i, {})[k] = v
    adjusted = {id(r): r.model_copy(update={"q_values": by_row.get(i, {})}) for i, r in enumerate(gated)}
    judged = []
    for row in rows:
        if not row.interleaved:
            not_compared.append(
                f"latency ({row.mode}): the engines could not run at once, so the median ratio "
                f"{row.ratio_p50 or 0:.2f} was measured one after the other and is reported, not gated"
            )
        elif row.lookups < 2:
            not_compared.append(f"latency ({row.mode}): fewer than 2 lookups answered on every side")
        else:
            row = _judge(adjusted[id(row)], alpha, limit, regressions, new_label)
        judged.append(row)
    return judged


def _judge(row: LatencyRow, alpha: float, limit: float, regressions: list[str], new_label: str) -> LatencyRow:
    found, names = [], []
    for name in PERCENTILES:
        ratio, q = getattr(row, f"ratio_{name}"), row.q_values.get(name)
        olds = [v for v in (getattr(row, f"old_{name}"), getattr(row, f"twin_old_{name}")) if v is not None]
        news = [v for v in (getattr(row, f"new_{name}"), getattr(row, f"twin_new_{name}")) if v is not None]
        if olds and news and ratio is not None and q is not None and ratio > limit and q < alpha:
            found.append(f"{name} {row.pair_text(name)} (q {q:.4f})")
            names.append(name)
    if not found:
        return row
    who = "both instances of the new engine against the slower of the old" if row.noise else "new against old"
    regressions.append(
        f"lookup latency ({row.mode}) on {new_label}: {'; '.join(found)}, {who}, beyond {limit:g}"
    )
    return row.model_copy(update={"regressed": True, "regressed_at": names})
