"""An engine lost midway is not a failure of the implementation: the run ends NOT JUDGED, exit 2.

Two runs: miniature features in pytester whose engine process is killed by a step (every rule, seen
from pytest), and the reference judged by ``rag-conformance run`` through a proxy that dies after a
number of searches, the way a CI gate sees a Milvus that crashes midway.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.commands._cli import main
from conformance.engines import Engine, start_engine
from conformance.spec._paths import features_dir

from ..commands.test_cli_exit_codes import rag_conformance
from ..engines._dying_engine import DyingEngine

pytest_plugins = ["pytester"]

BEFORE = """\
@req:mini
Feature: Miniature requirement SHALL hold
  @id:engine-answers @needs:search
  Scenario: The engine answers
    Then the engine lists its collections

  @id:wrong-with-the-engine-up @needs:search
  Scenario: A wrong answer while the engine is up is a failure
    Then the engine lists its collections
    And the answer is wrong

  @id:engine-dies @needs:search
  Scenario: The engine dies
    When the engine process is killed
    Then the engine lists its collections

  @id:labels-after @needs:labels
  Scenario: Labels need no engine
    Then the label rrf_fused is hybrid

  @id:lookup-undeclared @needs:lookup
  Scenario: A capability not declared
    Then the engine lists its collections
"""

# pytest-bdd runs features in the order of their names: "The later..." after "Miniature...".
AFTER = """\
@req:later
Feature: The later requirement SHALL hold
  @id:search-after @needs:search
  Scenario: A search after the loss
    Then the engine lists its collections

  @id:engine-check-after @engine
  Scenario: An engine check after the loss
    Then the engine lists its collections
"""

STEPS = """\
import os
import signal
from pathlib import Path

from pytest_bdd import scenarios, then, when

scenarios("first.feature", "later.feature")


@when("the engine process is killed")
def _(rqs_engine):
    os.killpg(rqs_engine.pid, signal.SIGKILL)  # the lite server the kit started for this run


@then("the engine lists its collections")
def _(request, rqs_engine):
    with Path("asked.txt").open("a") as asked:
        asked.write(request.node.name + "\\n")
    rqs_engine.client().list_collections(timeout=3)


@then("the answer is wrong")
def _():
    assert False, "a wrong answer"


@then("the label rrf_fused is hybrid")
def _(rqs_implementation):
    assert rqs_implementation.canonicalize_label("rrf_fused") == "hybrid"
"""

ADAPTER = """\
class Searcher:
    def describe(self):
        return {"name": "searcher", "version": "1", "capabilities": ["labels", "search"]}

    def canonicalize_label(self, label):
        return "hybrid"

    def prepare(self, endpoint, corpus):
        pass

    def search(self, request):
        raise AssertionError("these scenarios never ask")

    def close(self):
        pass
"""


def test_the_scenarios_after_a_lost_engine_are_not_judged_and_the_rest_still_are(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".feature", first=BEFORE, later=AFTER)
    pytester.makepyfile(test_mini=STEPS, searcher=ADAPTER)
    pytester.syspathinsert()
    args = (
        "test_mini.py",
        "--rqs-adapter",
        "searcher:Searcher",
        "--rqs-report",
        "out",
        "--rqs-checks",
        "all",
    )
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # pytest's code for NOT JUDGED, as at preflight
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    message = {s["id"]: s["message"] for s in report["scenarios"]}
    assert status == {
        "engine-answers": "passed",
        "wrong-with-the-engine-up": "failed",  # the kit reached the engine: the failure stands
        "engine-dies": "not_judged",
        "labels-after": "passed",  # needs no engine: still judged
        "lookup-undeclared": "not_applicable",  # NOT APPLICABLE says more than NOT JUDGED
        "search-after": "not_judged",
        "engine-check-after": "not_judged",
    }
    lost = message["engine-dies"]
    assert re.match(r"Milvus was lost \d+\.\d s into the run \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\), ", lost)
    assert "during scenario engine-dies (engine: lite, milvus_lite-" in lost
    assert "did not answer the kit's own client (list collections, timeout 5 s)" in lost
    assert "the scenario stopped at: MilvusException" in lost
    reason = report["reason"]
    assert message["search-after"] == reason.partition("; 3 scenarios")[0]
    assert reason.endswith(
        "; 3 scenarios that need Milvus could not be judged: check the engine (its log, "
        "memory, disk, the network to it) and run again"
    )
    assert report["verdict"] == "NOT JUDGED"
    # The server the kit started goes with its work dir at the end: what its log last said is kept.
    [log] = [w for w in report["warnings"] if w.startswith("the engine's server log ended")]
    assert len(log.splitlines()) > 1, log
    verdicts = {row["requirement_id"]: row["verdict"] for row in report["requirements"]}
    assert verdicts == {"mini": "DOES NOT CONFORM", "later": "NOT JUDGED"}
    asked = (pytester.path / "asked.txt").read_text().split()
    assert not [name for name in asked if "after" in name]  # cut off without asking anything
    result.stdout.fnmatch_lines(["TOTAL * 2 * 1 * 0 * 3 * 1 * NOT JUDGED", "NOT JUDGED: Milvus was lost *"])


TEARDOWN_FEATURE = """\
@req:mini
Feature: Miniature requirement SHALL hold
  @id:engine-dies-in-teardown @needs:search
  Scenario: The engine dies while a scenario tears down
    Given a resource given back to the engine when its scope ends
    Then the engine lists its collections

  @id:search-after @needs:search
  Scenario: A search after the first scenario
    Then the engine lists its collections
"""

TEARDOWN_STEPS = """\
import os
import signal

import pytest
from pytest_bdd import given, scenarios, then

scenarios("teardown.feature")


@pytest.fixture(scope="{scope}")
def given_back(rqs_engine):
    yield
    os.killpg(rqs_engine.pid, signal.{signal})  # the engine goes while this scope tears down
    rqs_engine.client().list_collections(timeout=3)


@given("a resource given back to the engine when its scope ends")
def _(given_back):
    pass


@then("the engine lists its collections")
def _(rqs_engine):
    rqs_engine.client().list_collections(timeout=3)
"""


@pytest.mark.parametrize(
    ("scope", "signal", "after", "verdict"),
    [
        # killed in the first scenario's teardown: the next scenario is cut off
        ("function", "SIGKILL", "not_judged", "NOT JUDGED"),
        # frozen in the session's teardown, after every scenario was judged: the verdict stands
        ("session", "SIGSTOP", "passed", "CONFORMS"),
    ],
)
def test_an_engine_lost_while_tearing_down_is_the_runs_loss_not_a_scenarios_error(
    pytester: pytest.Pytester, scope: str, signal: str, after: str, verdict: str
) -> None:
    steps = TEARDOWN_STEPS.replace("{scope}", scope).replace("{signal}", signal)
    pytester.makefile(".feature", teardown=TEARDOWN_FEATURE)
    pytester.makepyfile(test_mini=steps, searcher=ADAPTER)
    pytester.syspathinsert()
    result = pytester.runpytest("test_mini.py", "--rqs-adapter", "searcher:Searcher", "--rqs-report", "out")
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {"engine-dies-in-teardown": "passed", "search-after": after}
    assert report["verdict"] == verdict
    assert result.ret == (pytest.ExitCode.USAGE_ERROR if after == "not_judged" else pytest.ExitCode.OK)
    if after == "not_judged":
        assert "while tearing down" in report["reason"]
    assert any(w.startswith("after the engine was lost, tearing down: ") for w in report["warnings"])


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with start_engine("lite") as started:
        yield started


def _needs_milvus() -> set[str]:
    """The ids of the kit's scenarios tagged with a search or lookup capability, read from the features."""
    found = set()
    for path in features_dir().glob("*.feature"):
        for line in path.read_text(encoding="utf-8").splitlines():
            ids = re.findall(r"@id:(\S+)", line)
            if ids and re.search(r"@needs:(search|lookup)\b", line):
                found.update(ids)
    return found


def test_a_milvus_that_dies_midway_is_exit_2_not_judged_naming_the_engine(
    engine: Engine, tmp_path: Path
) -> None:
    with DyingEngine(engine.endpoint.uri, searches=10) as dying:
        started = time.monotonic()
        done, _ = rag_conformance("run", "--milvus", f"uri:{dying.uri}", "--report", "out", cwd=tmp_path)
        seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    assert dying.died.is_set()
    assert done.returncode == 2, output
    assert seconds < 120, f"{seconds:.0f} s: the end of a run without its engine must not hang"
    assert "ERRORED" not in output
    assert "FAILED" not in output
    assert "Traceback" not in output
    assert re.search(r"^NOT JUDGED: Milvus was lost .* during scenario ", done.stdout, re.M), output
    assert re.search(r"^verdict: NOT JUDGED \(every capability: .*\) \[reference\]: ", done.stdout, re.M), (
        output
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "NOT JUDGED"
    assert f"Milvus at {dying.uri} did not answer the kit's own client" in report["reason"]
    assert (report["summary"]["failed"], report["summary"]["errored"]) == (0, 0)
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    milvus = _needs_milvus()
    cut_off = {sid for sid, s in status.items() if s == "not_judged"}
    assert cut_off
    assert cut_off <= milvus  # never a scenario that needs no engine
    assert re.search(r"during scenario (\S+) ", report["reason"])[1] in cut_off  # type: ignore[index]
    assert {sid for sid in milvus & set(status) if status[sid] == "passed"}  # judged before the loss, kept
    assert {s for sid, s in status.items() if sid not in milvus} == {"passed"}  # judged after it too
    assert any("may remain: drop them by hand" in w for w in report["warnings"])  # the cleanup said so
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert junit.count('message="NOT JUDGED"') == 1
    assert junit.count('<skipped message="NOT_JUDGED: Milvus was lost') == len(cut_off)
    # A CI gate on the diff against a run that conformed cannot pass this one either.
    old = tmp_path / "old.json"
    passed = [s | {"status": "passed", "message": None} for s in report["scenarios"]]
    old.write_text(json.dumps(report | {"verdict": "CONFORMS", "reason": None, "scenarios": passed}))
    assert main(["diff", str(old), str(tmp_path / "out" / "report.json")]) == 2
