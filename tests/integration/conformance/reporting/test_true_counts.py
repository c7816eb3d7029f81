"""report.json counts what a run really asked: a property scenario's examples, and every scenario's calls
per capability, the same numbers a program tracing its own stdin counts."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from conformance.boundary._tally import CAPABILITY_OF
from conformance.commands._runner import run_conformance

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "examples" / "python-stdio" / "impl.py"

# The Python stdio example, writing the type of every request it reads to a file first.
TRACER = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("impl", sys.argv[1])
impl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(impl)
original = impl.answer
def answer(message):
    with open(sys.argv[2], "a") as trace:
        trace.write(message["type"] + "\\n")
    return original(message)
impl.answer = answer
impl.main()
"""


def test_a_default_run_reports_the_examples_and_calls_a_tracing_program_counts(tmp_path: Path) -> None:
    tracer, trace = tmp_path / "tracer.py", tmp_path / "trace.txt"
    tracer.write_text(TRACER)
    outcome = run_conformance(
        f"cmd:{sys.executable} {tracer} {EXAMPLE} {trace}",
        report_dir=tmp_path / "out",
        pytest_args=["-m", "not rqs_engine_check"],
    )
    assert outcome.exit_code == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    traced = Counter(CAPABILITY_OF[t] for t in trace.read_text().split() if t in CAPABILITY_OF)
    reported: Counter[str] = Counter()
    for scenario in report["scenarios"]:
        reported.update(scenario["calls"])
    assert reported == traced  # every call the program received, under the scenario that made it
    properties = [s for s in report["scenarios"] if s["id"].startswith("prop-") and s["status"] == "passed"]
    assert len(properties) >= 8
    for scenario in properties:
        assert scenario["examples"] > 1, scenario  # the default profile's examples, not one
        assert sum(scenario["calls"].values()) >= scenario["examples"], scenario
    # An outline still counts its examples, one call or more each.
    outlines = [s for s in report["scenarios"] if not s["id"].startswith("prop-") and s["examples"] > 1]
    assert outlines


def test_the_kits_counts_answer_hypothesis_show_statistics(capfd: pytest.CaptureFixture[str]) -> None:
    outcome = run_conformance(
        f"cmd:{sys.executable} {EXAMPLE}",
        select="prop-quality-within-0-and-1-for-any-input",
        pytest_args=["--hypothesis-show-statistics"],
    )
    assert outcome.report is not None
    (scenario,) = outcome.report.scenarios
    out = capfd.readouterr().out
    assert "these replace --hypothesis-show-statistics" in out
    line = f"  {scenario.id}: {scenario.examples} examples; quality {scenario.calls['quality']}"
    assert line in out
    assert scenario.examples > 1
