"""Issue 45, case 7: another command's ``clean --yes`` must not make a live run blame the implementation.

A run holds a lease on its prefix while it lives; ``clean --yes`` leaves a live run's collections alone
(``--force`` drops them), a dead run's lease protects nothing, and a collection dropped from outside
the run mid-scenario makes the run NOT JUDGED (exit 2) naming it, never DOES NOT CONFORM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.engines import start_engine
from conformance.engines._lease import STALE_SECONDS, read_lease

from .test_cli_exit_codes import ROOT, rag_conformance

# A run in miniature: an engine opened as a run opens it (so it holds the run's lease), one collection
# of its prefix, then waiting until told to go.
_HOLDER = """
import sys
from conformance.engines import start_engine
engine = start_engine(sys.argv[1])
engine.client().create_collection(engine.collection_name("held"), dimension=2)
print(engine.prefix, flush=True)
sys.stdin.read()
engine.close()
"""


@pytest.fixture(scope="module")
def engine_uri() -> Iterator[str]:
    """One Lite engine the test's runs and cleans all reach by ``uri:``, as two shells on one would."""
    with start_engine("lite") as engine:
        yield engine.endpoint.uri


def _holder(uri: str, state: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "RQS_STATE_DIR": str(state), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, f"uri:{uri}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert child.stdout is not None
    return child, child.stdout.readline().strip()


def _names(uri: str) -> set[str]:
    from pymilvus import MilvusClient

    client = MilvusClient(uri=uri)
    try:
        return set(client.list_collections())
    finally:
        client.close()


def test_clean_yes_leaves_a_live_runs_collections_alone_unless_forced(
    engine_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = {"RQS_STATE_DIR": str(tmp_path / "state")}
    child, prefix = _holder(engine_uri, tmp_path / "state")
    try:
        held = f"{prefix}held"
        assert held in _names(engine_uri)
        monkeypatch.setenv("RQS_STATE_DIR", str(tmp_path / "state"))
        lease = read_lease(prefix)
        assert lease is not None
        assert lease.pid == child.pid
        assert lease.alive()
        cleaned, _ = rag_conformance(
            "clean", "--milvus", f"uri:{engine_uri}", "--yes", cwd=tmp_path, env=state
        )
        assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
        assert f"{prefix}: a run still going (pid {child.pid} on this host" in cleaned.stdout
        assert "--force" in cleaned.stdout
        assert "dropped 0 collections" in cleaned.stdout
        assert held in _names(engine_uri)  # the live run keeps its collection

        forced, _ = rag_conformance(
            "clean",
            "--milvus",
            f"uri:{engine_uri}",
            "--yes",
            "--force",
            "--prefix",
            prefix,
            cwd=tmp_path,
            env=state,
        )
        assert forced.returncode == 0, forced.stdout + forced.stderr
        assert "dropped anyway (--force)" in forced.stdout
        assert held not in _names(engine_uri)
    finally:
        child.communicate("", timeout=60)


def test_a_dead_runs_lease_protects_nothing(
    engine_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RQS_STATE_DIR", str(tmp_path / "state"))
    child, prefix = _holder(engine_uri, tmp_path / "state")
    child.send_signal(signal.SIGKILL)  # killed outright: its lease and collection stay behind
    child.wait(timeout=30)
    lease = read_lease(prefix)
    assert lease is not None
    assert lease.pid == child.pid
    assert not lease.alive()
    cleaned, _ = rag_conformance(
        "clean",
        "--milvus",
        f"uri:{engine_uri}",
        "--yes",
        "--prefix",
        prefix,
        cwd=tmp_path,
        env={"RQS_STATE_DIR": str(tmp_path / "state")},
    )
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert "still going" not in cleaned.stdout
    assert "dropped 1 collection" in cleaned.stdout
    assert f"{prefix}held" not in _names(engine_uri)
    assert read_lease(prefix) is None  # the dead run's lease goes with its collections


def test_another_hosts_lease_lives_while_its_heartbeat_is_young(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RQS_STATE_DIR", str(tmp_path))
    now = time.time()
    for prefix, age in (("rqs_0000aaaa_", 5.0), ("rqs_0000bbbb_", STALE_SECONDS + 5.0)):
        record = {
            "prefix": prefix,
            "engine": "x",
            "pid": 1,
            "host": "elsewhere.invalid",
            "heartbeat": now - age,
        }
        (tmp_path / f"{prefix}.json").write_text(json.dumps(record))
    young, old = read_lease("rqs_0000aaaa_"), read_lease("rqs_0000bbbb_")
    assert young is not None
    assert young.alive(now=now)
    assert old is not None
    assert not old.alive(now=now)
    assert "host elsewhere.invalid" in young.describe(now=now)


def test_a_collection_dropped_mid_run_is_not_judged_naming_it(engine_uri: str, tmp_path: Path) -> None:
    done, _ = rag_conformance(
        "run",
        "--adapter",
        "tests.integration.conformance.commands.dropping_adapter:DroppedFromOutside",
        "--milvus",
        f"uri:{engine_uri}",
        "-k",
        "mode-dense-still-callable or dense-mode-labels-hits-as-dense",
        "--report",
        "out",
        cwd=tmp_path,
        env={"RQS_TEST_DROP_URI": engine_uri, "RQS_STATE_DIR": str(tmp_path / "state")},
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "DOES NOT CONFORM" not in output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "NOT JUDGED", report["verdict"]
    prefix = report["environment"]["milvus"]["prefix"]
    assert report["reason"].startswith("A collection of this run was dropped from outside it")
    assert "dropped from outside it" in report["verdict_text"]
    assert f"'{prefix}reference_scenario_corpus'" in report["reason"]
    assert f"'{prefix}reference_scenario_corpus' of this run was dropped from outside the run" in output
    not_judged = [s for s in report["scenarios"] if s["status"] == "not_judged"]
    assert not_judged, report["scenarios"]
    assert all("dropped from outside the run" in s["message"] for s in not_judged)
    assert not [s for s in report["scenarios"] if s["status"] in ("failed", "errored")], report["scenarios"]
