"""A Milvus that stops answering (a Lite server frozen with SIGSTOP) during ``run``, ``engines`` and
``upgrade``: each ends NOT JUDGED (exit 2) with its report, within a bound; a signal sent while the engine is
frozen ends the command within seconds, named as itself. What is frozen is always thawed, even on failure.

The engine-call deadline is shortened here (``RQS_ENGINE_CALL_SECONDS``) and stretched with the load, as the
kit stretches it. The bound after the freeze: two deadlines (a late call, then a second one, or the short
probe that follows the first), the probe, the teardown, and room for a loaded machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.engines import Engine, start_engine
from conformance.engines._load import load_stretch

from ..._signals import with_stop_signals_default

ROOT = Path(__file__).resolve().parents[4]
CLI = Path(sys.executable).with_name("rag-conformance")
CALL_SECONDS = 3.0
# Scenarios that need the engine, one of them a property scenario that calls it a thousand times under the
# thorough profile (_env): the run is still midway when the test freezes it or signals it, however fast the
# engine (a sealed Lite store runs the three plain ones in under a second, between two polls).
SELECT = (
    "dense-quality-from-l2 or dense-mode-labels-hits-as-dense or hybrid-mode-labels-hits-as-hybrid"
    " or prop-lookup-on-a-real-knowledge-base"
)
SIGNAL_SECONDS = 5.0  # the bound for a signal sent while the engine is frozen, stretched below


def _bound_after_freeze() -> float:
    """Two deadlines, the 5 s probe, the teardown and a run's own remaining pure scenarios."""
    return 2 * CALL_SECONDS * load_stretch() + 5 + 60 * load_stretch()


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with start_engine("lite") as started:
        yield started


def _command(*args: str) -> list[str]:
    return [str(CLI), *args] if CLI.exists() else [sys.executable, "-m", "conformance.commands._cli", *args]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env["RQS_ENGINE_CALL_SECONDS"] = str(CALL_SECONDS)
    env["RQS_PROFILE"] = "thorough"  # long enough to be cut midway; no run here is meant to finish
    return env


def _has_run_collections(engine: Engine) -> Callable[[], bool]:
    """Whether a run has made its collections on ``engine`` (it is then midway: corpus prepared); those an
    earlier test's frozen run left (the kit gave up on the engine, so they stay) do not count."""
    before = set(engine.client().list_collections(timeout=5))

    def midway() -> bool:
        names = set(engine.client().list_collections(timeout=5)) - before
        return any(n.startswith("rqs_") for n in names)

    return midway


def _frozen_run(
    engine: Engine, args: list[str], cwd: Path, *, signum: int | None = None, limit: float = 600
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``rag-conformance <args>`` with ``engine`` frozen once the run is midway; ``signum`` sent to the
    command a second after the freeze. (the command, seconds from the freeze or the signal to its end)."""
    midway = _has_run_collections(engine)
    proc = subprocess.Popen(
        with_stop_signals_default(_command(*args)),
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    frozen = False
    try:
        started = time.monotonic()
        while not midway():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - started < limit, "the run never got midway"
            time.sleep(0.3)
        os.killpg(engine.pid, signal.SIGSTOP)  # type: ignore[arg-type]
        frozen = True
        since = time.monotonic()
        if signum is not None:
            time.sleep(1.0)
            since = time.monotonic()
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=limit)
        seconds = time.monotonic() - since
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), seconds
    finally:
        if frozen:
            os.killpg(engine.pid, signal.SIGCONT)  # type: ignore[arg-type]
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _no_library_traceback(done: subprocess.CompletedProcess[str]) -> None:
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    assert "_InactiveRpcError" not in done.stderr, done.stderr[-3000:]


def test_run_on_an_engine_that_freezes_ends_not_judged_naming_the_engine(
    engine: Engine, tmp_path: Path
) -> None:
    uri = f"uri:{engine.endpoint.uri}"
    done, seconds = _frozen_run(engine, ["run", "--milvus", uri, "--report", "out", "-k", SELECT], tmp_path)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert seconds < _bound_after_freeze(), f"{seconds:.0f} s after the freeze"
    _no_library_traceback(done)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "NOT JUDGED"
    reasons = " ".join([report["reason"] or "", *(s.get("message") or "" for s in report["scenarios"])])
    assert engine.endpoint.uri.split("//")[1] in reasons  # the engine, named
    assert "deadline" in reasons or "did not answer" in reasons
    assert (report["summary"]["failed"], report["summary"]["errored"]) == (0, 0)


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_while_the_engine_is_frozen_ends_the_run_within_seconds_as_itself(
    engine: Engine, tmp_path: Path, name: str, code: int
) -> None:
    uri = f"uri:{engine.endpoint.uri}"
    args = ["run", "--milvus", uri, "--report", "out", "-k", SELECT]
    done, seconds = _frozen_run(engine, args, tmp_path, signum=getattr(signal, name))
    assert done.returncode == code, done.stdout[-3000:] + done.stderr[-3000:]
    assert seconds < SIGNAL_SECONDS * load_stretch(), f"{seconds:.1f} s after {name}"
    _no_library_traceback(done)
    assert f"stopped by {name}" in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "INTERRUPTED"
    assert report["interruption"]["signal"] == name
    assert report["interruption"]["exit_code"] == code


def _processes_naming(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
    return found


def test_sigterm_to_engines_while_frozen_passes_it_on_and_leaves_no_process(
    engine: Engine, tmp_path: Path
) -> None:
    out = tmp_path / "matrix-out"
    args = ["engines", "--engine", f"uri:{engine.endpoint.uri}", "--report-dir", str(out), "-k", SELECT]
    done, seconds = _frozen_run(engine, args, tmp_path, signum=signal.SIGTERM)
    assert done.returncode == 143, done.stdout[-3000:] + done.stderr[-3000:]
    # The child run gets the signal and writes its report; then the parent writes the matrix.
    assert seconds < SIGNAL_SECONDS * load_stretch(), f"{seconds:.1f} s after SIGTERM"
    assert "interrupted (SIGTERM)" in done.stderr
    _no_library_traceback(done)
    matrix = json.loads((out / "matrix.json").read_text())
    assert matrix[0]["verdict"] == "INTERRUPTED"
    assert matrix[0]["not_run"] == "interrupted (SIGTERM)"
    assert _processes_naming(str(out)) == []  # the child run is gone too


def test_engines_on_an_engine_that_freezes_ends_2_with_its_matrix(engine: Engine, tmp_path: Path) -> None:
    out = tmp_path / "matrix-out"
    args = ["engines", "--engine", f"uri:{engine.endpoint.uri}", "--report-dir", str(out), "-k", SELECT]
    done, seconds = _frozen_run(engine, args, tmp_path)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert seconds < _bound_after_freeze() + 60 * load_stretch(), f"{seconds:.0f} s after the freeze"
    matrix = json.loads((out / "matrix.json").read_text())
    assert matrix[0]["verdict"] == "NOT JUDGED"
    assert _processes_naming(str(out)) == []


def test_upgrade_on_an_engine_that_freezes_ends_2_naming_the_engine(engine: Engine, tmp_path: Path) -> None:
    uri = f"uri:{engine.endpoint.uri}"
    args = [
        "upgrade",
        "--from",
        uri,
        "--to",
        uri,
        "--no-suite",
        "--no-plots",
        "--no-progress",
        "--limit",
        "6",
        "--out",
        "up",
    ]
    done, seconds = _frozen_run(engine, args, tmp_path)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert seconds < _bound_after_freeze(), f"{seconds:.0f} s after the freeze"
    _no_library_traceback(done)
    assert engine.endpoint.uri.split("//")[1] in done.stdout + done.stderr


def test_sigterm_to_upgrade_while_frozen_ends_it_within_seconds_as_itself(
    engine: Engine, tmp_path: Path
) -> None:
    uri = f"uri:{engine.endpoint.uri}"
    args = ["upgrade", "--from", uri, "--to", uri, "--no-suite", "--no-plots", "--no-progress"]
    done, seconds = _frozen_run(
        engine, [*args, "--limit", "6", "--out", "up"], tmp_path, signum=signal.SIGTERM
    )
    assert done.returncode == 143, done.stdout[-3000:] + done.stderr[-3000:]
    assert seconds < SIGNAL_SECONDS * load_stretch(), f"{seconds:.1f} s after SIGTERM"
    _no_library_traceback(done)


def test_run_with_an_unreachable_engine_is_2_whatever_k_selected(tmp_path: Path) -> None:
    done = subprocess.run(
        _command("run", "--milvus", "uri:http://127.0.0.1:1", "-k", "dense-quality-from-l2", "--report", "o"),
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["verdict"] == "NOT JUDGED"
    assert (report["summary"]["failed"], report["summary"]["errored"]) == (0, 0)


def test_sigterm_to_engines_on_a_live_engine_leaves_no_collection_and_no_process(
    engine: Engine, tmp_path: Path
) -> None:
    out = tmp_path / "matrix-out"
    before = set(engine.client().list_collections(timeout=5))
    midway = _has_run_collections(engine)
    args = ["engines", "--engine", f"uri:{engine.endpoint.uri}", "--report-dir", str(out), "-k", SELECT]
    proc = subprocess.Popen(
        _command(*args),
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    frozen = False
    try:
        started = time.monotonic()
        while not midway():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - started < 600, "the run never got midway"
            time.sleep(0.1)
        # Held for a second while the signal lands, so the run cannot end first (on a loaded machine a
        # poll may come late); thawed well within a call's deadline: the engine is never lost.
        os.killpg(engine.pid, signal.SIGSTOP)  # type: ignore[arg-type]
        frozen = True
        proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        os.killpg(engine.pid, signal.SIGCONT)  # type: ignore[arg-type]
        frozen = False
        _, err = proc.communicate(timeout=120)
    finally:
        if frozen:
            os.killpg(engine.pid, signal.SIGCONT)  # type: ignore[arg-type]
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 143, err[-3000:]
    assert "interrupted (SIGTERM)" in err
    assert set(engine.client().list_collections(timeout=5)) <= before  # the child dropped what it made
    assert _processes_naming(str(out)) == []
    run = next(out.glob("*/report.json"), None)
    seen = [(s["id"], s["status"]) for s in json.loads(run.read_text())["scenarios"]] if run else None
    assert json.loads((out / "matrix.json").read_text())[0]["verdict"] == "INTERRUPTED", (seen, err[-2000:])
