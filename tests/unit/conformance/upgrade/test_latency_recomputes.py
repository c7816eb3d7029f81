"""Every latency figure of the upgrade's page can be recomputed from its files (issue 55 item 1).

The result is the gate's own (:func:`conformance.upgrade.compare`) on planted evaluations of four
instances (old, old twin, new, new twin), each query timed four times as the bundled set is: 548
lookups per instance, so a p99 exists. The test reads ``upgrade.md``'s latency table, recomputes each
instance's percentile from ``latency.csv`` as the page says to (NumPy's percentile of the lines with
``in_sample`` 1), checks each ratio against the two cells marked (gated), and that those are the
slower old and the faster new instance.
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conformance.commands._upgrade import _summary
from conformance.upgrade import (
    EngineEvaluation,
    Outcome,
    SuiteChanges,
    compare,
    load_labelled_set,
    load_upgrade_settings,
)
from conformance.upgrade._latency import P99_MIN, timing_rounds
from conformance.upgrade._report import write_reports
from conformance.upgrade._sides import _time_again

LABELLED = load_labelled_set(None)
ROUNDS = timing_rounds(len(LABELLED.queries))
INSTANCES = {
    "old (lite-2.5.1) ms": "old",
    "old twin ms": "old twin",
    "new (lite) ms": "new",
    "new twin ms": "new twin",
}


def _instance(name: str, scale: float, seed: int, failing: str | None = None) -> EngineEvaluation:
    rng = random.Random(seed)
    e = EngineEvaluation(name, version=name)
    for mode in ("dense", "hybrid"):
        outcomes = []
        for q in LABELLED.queries:
            times = [scale * rng.lognormvariate(0, 0.6) for _ in range(ROUNDS)]
            if q.id == failing:
                outcomes.append(Outcome.failed(q.id, "RuntimeError: boom"))
                continue
            repeats = tuple(
                None if q.id == LABELLED.queries[5].id and k == 1 else t for k, t in enumerate(times[1:])
            )
            outcomes.append(
                Outcome(
                    q.id,
                    tuple(q.relevant)[:1],
                    0.6,
                    False,
                    "RELEVANT",
                    "unfiltered",
                    times[0],
                    repeats=repeats,
                )
            )
        e.outcomes[mode] = outcomes
    return e


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("upgrade")
    result = compare(
        LABELLED,
        _instance("lite-2.5.1", 0.010, 1),
        _instance("lite", 0.016, 2, failing=LABELLED.queries[3].id),  # a lookup that failed leaves the sample
        SuiteChanges(compared=False, why_not="skipped (--no-suite)"),
        load_upgrade_settings(None),
        adapter="reference",
        interleaved=True,
        old_label="lite-2.5.1",
        new_label="lite",
        twins=(_instance("lite-2.5.1", 0.012, 3), _instance("lite", 0.015, 4)),
    )
    write_reports(result, out, plots=False)
    return out, result


def _table(page: str) -> list[dict[str, str]]:
    lines = page[page.index("## Lookup latency") :].splitlines()
    table = [line for line in lines if line.startswith("| ")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    return [
        dict(zip(header, (c.strip() for c in row.strip("|").split("|")), strict=True)) for row in table[1:]
    ]


def _sample(path: Path) -> dict[tuple[str, str], list[float]]:
    sample: dict[tuple[str, str], list[float]] = {}
    for row in csv.DictReader(io.StringIO(path.read_text())):
        if row["in_sample"] == "1":
            sample.setdefault((row["mode"], row["side"]), []).append(float(row["seconds"]))
    return sample


def test_the_bundled_set_is_timed_often_enough_for_a_p99() -> None:
    assert len(LABELLED.queries) * ROUNDS >= P99_MIN
    assert timing_rounds(63) == 8
    assert timing_rounds(62) == 1  # a small set is timed once: repeats would not make its tail


def test_every_latency_figure_and_ratio_recomputes_from_latency_csv(written: tuple[Path, object]) -> None:
    out, _ = written
    sample = _sample(out / "latency.csv")
    rows = _table((out / "upgrade.md").read_text())
    assert {r["percentile"] for r in rows} == {"p50", "p95", "p99"}
    assert len(rows) == 6
    for row in rows:
        mode, q = row["mode"], int(row["percentile"][1:])
        values = {}
        for column, side in INSTANCES.items():
            cell = row[column]
            expected = float(np.percentile(sample[mode, side], q)) * 1000
            assert float(cell.removesuffix(" (gated)")) == pytest.approx(expected, abs=0.006), (mode, q, side)
            values[side] = (expected, cell.endswith("(gated)"))
        [new] = [s for s in ("new", "new twin") if values[s][1]]
        [old] = [s for s in ("old", "old twin") if values[s][1]]
        assert values[new][0] == min(values["new"][0], values["new twin"][0])  # the faster new instance
        assert values[old][0] == max(values["old"][0], values["old twin"][0])  # the slower old instance
        assert float(row["ratio (gated new / gated old)"]) == pytest.approx(
            values[new][0] / values[old][0], abs=0.006
        )
        assert int(row["lookups per instance"]) == len(sample[mode, "old"]) >= P99_MIN


def test_the_csv_holds_every_instances_every_lookup_and_json_the_same_percentiles(
    written: tuple[Path, object],
) -> None:
    out, _ = written
    rows = list(csv.DictReader(io.StringIO((out / "latency.csv").read_text())))
    assert {r["side"] for r in rows} == set(INSTANCES.values())
    assert len(rows) == 2 * 4 * len(LABELLED.queries) * ROUNDS - 2 * (ROUNDS - 1)  # the failed query: once
    failed = LABELLED.queries[3].id
    assert {r["in_sample"] for r in rows if r["query_id"] == failed} == {"0"}  # on every instance
    repeat_failed = LABELLED.queries[5].id
    assert {r["in_sample"] for r in rows if r["query_id"] == repeat_failed and r["round"] == "2"} == {"0"}
    sample = _sample(out / "latency.csv")
    data = json.loads((out / "upgrade.json").read_text())
    for lat in data["latency"]:
        for key, side in (("old", "old"), ("twin_old", "old twin"), ("new", "new"), ("twin_new", "new twin")):
            assert lat[f"{key}_p99"] == pytest.approx(
                float(np.percentile(sample[lat["mode"], side], 99)),
                abs=1e-6,  # the CSV's microseconds
            )
        assert set(data["per_query"][lat["mode"]][LABELLED.queries[0].id]) == set(INSTANCES.values())


def test_the_terminal_line_puts_each_ratio_beside_the_two_numbers_it_divides(
    written: tuple[Path, object],
) -> None:
    _, result = written
    [dense] = [line for line in _summary(result, []) if "dense latency" in line]  # type: ignore[arg-type]
    for part in dense.split("latency ", 1)[1].split(", "):
        name, text = part.split(" ", 1)
        a, b, ratio = (
            float(x)
            for x in (
                text.split(" ms")[0],
                text.split("/ ")[1].split(" ms")[0],
                text.split("= ")[1].rstrip("x"),
            )
        )
        assert name in ("p50", "p95", "p99")
        assert ratio == pytest.approx(a / b, abs=0.006)


class _FakeSide:
    """A side as :func:`_time_again` sees it: its evaluation, and a lookup that only times."""

    def __init__(self, name: str, fails_at: int | None = None) -> None:
        self.evaluation = EngineEvaluation(name)
        self.calls = 0
        self.fails_at = fails_at

    def time(self, request: object) -> float | None:
        self.calls += 1
        return None if self.calls == self.fails_at else 0.001 * self.calls


def test_each_answered_query_is_timed_again_on_every_instance_a_failed_one_is_not() -> None:
    ids = [f"q{i}" for i in range(100)]  # 100 queries: 5 rounds for 500 lookups
    sides = [_FakeSide("a"), _FakeSide("b", fails_at=3)]
    for side in sides:
        side.evaluation.outcomes["dense"] = [Outcome(i, (), None, False, "NONE", "", 0.002) for i in ids]
    sides[0].evaluation.outcomes["dense"][7] = Outcome.failed("q7", "boom")
    _time_again(sides, "dense", [(i, object()) for i in ids], random.Random(0), None)  # type: ignore[arg-type]
    a, b = (s.evaluation.outcomes["dense"] for s in sides)
    assert len(a[0].timings) == len(b[0].timings) == 5
    assert a[7].repeats == ()  # the failed lookup is not timed again
    assert b[7].repeats != ()  # its query failed elsewhere only: this instance's times are still kept
    assert sum(t is None for o in b for t in o.repeats) == 1  # the repeat that failed is kept as None
    assert replace(a[0], repeats=()) == Outcome("q0", (), None, False, "NONE", "", 0.002)
