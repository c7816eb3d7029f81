"""When the world misbehaves, the verdict stays right: never DOES NOT CONFORM (exit 1) for an
implementation that conforms, never a secret in an output, nothing left running.

Each test reproduces one way a CI job meets the world: a cancelled job (SIGINT, SIGTERM; with a stdio
call hanging), a Milvus that is up but answers some or all searches with an error status (a proxy in
front of a real Lite engine), a password in the engine URI (planted in every run here and looked for
in every output), a report path that is a file, a stdio program that forks workers and exits at stop,
and two runs with one seed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.engines import Engine, start_engine
from conformance.stdio._process import CHILD_MARK, ChildProcess

from ..._signals import with_stop_signals_default
from ..engines._erring_engine import REASON, ErringEngine
from .test_cli_exit_codes import CLI, ROOT, rag_conformance

SECRET = "Pl4nted-s3cret"
USER = "alice"
EXAMPLE = ROOT / "examples" / "python-stdio" / "impl.py"
# Not a speed target: the bound that tells "stopped at once" from "waited out the 30 s call timeout".
STOPPED_AT_ONCE_SECONDS = 10.0


def _with_password(uri: str) -> str:
    return uri.replace("http://", f"http://{USER}:{SECRET}@", 1)


def _outputs(done: subprocess.CompletedProcess[str], *dirs: Path) -> str:
    """Everything a run wrote: its terminal and every file in its report directories."""
    texts = [done.stdout, done.stderr]
    for folder in dirs:
        texts += [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()]
    return "\n".join(texts)


def _assert_no_secret(text: str) -> None:
    assert SECRET not in text
    assert f"{USER}:" not in text  # neither the user info nor the token built from it


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with start_engine("lite") as started:
        yield started


def _signalled_run(
    args: list[str],
    signum: int,
    cwd: Path,
    *,
    when: Callable[[subprocess.Popen[str]], None],
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``rag-conformance run ...`` sent ``signum`` once ``when(process)`` returns; (the run, seconds it
    took after the signal). ``env`` adds to the environment it inherits."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")} | (env or {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    command = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "conformance.commands._cli"]
    proc = subprocess.Popen(
        with_stop_signals_default([*command, "run", *args]),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    when(proc)
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.monotonic() - sent


def _scenarios_running(proc: subprocess.Popen[str]) -> None:
    """Until the run has finished a few scenarios (pytest's progress dots), as a user's Ctrl-C comes."""
    assert proc.stdout is not None
    seen = ""
    while seen.count(".") < 5:
        char = proc.stdout.read(1)
        assert char, f"the run ended before its scenarios: {seen}"
        seen += char


def _started(state: Path) -> None:
    """Until the stdio program has answered the handshake, and a moment more: it hangs in the first call."""
    deadline = time.monotonic() + 60
    while "start" not in (state.read_text() if state.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_run_is_interrupted_not_a_failure(
    engine: Engine, tmp_path: Path, signum: int, code: int
) -> None:
    name = signal.Signals(signum).name
    args = ["--milvus", f"uri:{_with_password(engine.endpoint.uri)}", "--report", "out"]
    done, seconds = _signalled_run(args, signum, tmp_path, when=_scenarios_running)
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    assert seconds < STOPPED_AT_ONCE_SECONDS, f"{seconds:.1f} s after {name}"
    assert "Traceback" not in output
    assert "KeyboardInterrupt" not in output
    assert re.search(rf"^INTERRUPTED: interrupted by {name} \d+\.\d s into the run", done.stdout, re.M), (
        output
    )
    assert f"exit code {code}" in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "INTERRUPTED"
    assert report["interruption"]["signal"] == name
    assert report["interruption"]["exit_code"] == code
    assert report["verdict_text"].startswith(f"INTERRUPTED (not judged: stopped by {name} after ")
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert '<error message="INTERRUPTED">' in junit
    _assert_no_secret(_outputs(done, tmp_path / "out"))
    # The kit's own collections went with the run, though the signal cut it short.
    assert not [n for n in engine.client().list_collections() if n.startswith("rqs_")]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_during_a_hung_stdio_call_stops_the_run_at_once(
    tmp_path: Path, owner: str, signum: int, code: int
) -> None:
    # SIGHUP too: a closed terminal or a dropped SSH connection ends the run as itself, program killed.
    from ..stdio._stdio_miniatures import TEMPLATE, TOKEN

    script = tmp_path / "hangs.py"
    script.write_text(TEMPLATE.format(fault="hang", state=str(tmp_path / "state"), token=TOKEN))
    args = ["--adapter-cmd", f"{sys.executable} {script}", "-k", "dense-quality", "--report", "out"]
    done, seconds = _signalled_run(
        args, signum, tmp_path, when=lambda _: _started(tmp_path / "state"), env={OWNER: owner}
    )
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    assert seconds < STOPPED_AT_ONCE_SECONDS, f"{seconds:.1f} s: it waited for the hung call"
    assert "Traceback" not in output
    assert json.loads((tmp_path / "out" / "report.json").read_text())["verdict"] == "INTERRUPTED"
    assert not _marked_processes(owner), "the stdio program outlived the interrupted run"


def test_an_engine_that_answers_one_search_in_fifty_with_an_error_does_not_flip_the_verdict(
    engine: Engine, tmp_path: Path
) -> None:
    with ErringEngine(engine.endpoint.uri, every=50) as erring:
        done, _ = rag_conformance(
            "run", "--milvus", f"uri:{_with_password(erring.uri)}", "--report", "out", cwd=tmp_path
        )
    output = done.stdout + done.stderr
    assert erring.errors >= 2, "the proxy must have answered errors for this test to mean anything"
    assert done.returncode in (0, 2), output  # conforms, or not judged: never "does not conform"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert not report["summary"]["failed"], output
    assert not report["summary"]["errored"], output
    notes = [n for s in report["scenarios"] for n in s["notes"] if "the kit asked again" in n]
    assert notes, "a scenario whose call met an engine error says it was asked again"
    _assert_no_secret(_outputs(done, tmp_path / "out"))


def test_a_broken_implementation_does_not_hide_behind_a_flaky_engine(engine: Engine, tmp_path: Path) -> None:
    with ErringEngine(engine.endpoint.uri, every=50) as erring:
        done, _ = rag_conformance(
            "run",
            "--adapter",
            "tests.miniatures.broken_store:HybridScoreIsDenseL2",
            "--milvus",
            f"uri:{_with_password(erring.uri)}",
            "--report",
            "out",
            cwd=tmp_path,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    broken = {n for s in report["scenarios"] if s["status"] == "failed" for n in s["broken_numbers"]}
    assert "R2" in broken, output
    _assert_no_secret(_outputs(done, tmp_path / "out"))


def test_an_engine_that_answers_every_search_with_an_error_is_not_judged(
    engine: Engine, tmp_path: Path
) -> None:
    with ErringEngine(engine.endpoint.uri, every=1) as erring:
        done, _ = rag_conformance(
            "run", "--milvus", f"uri:{_with_password(erring.uri)}", "--report", "out", cwd=tmp_path
        )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "FAILED" not in output
    assert "ERRORED" not in output
    assert re.search(r"^NOT JUDGED: Milvus answered errors, twice in a row", done.stdout, re.M), output
    assert "not judged: the engine answered errors" in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "NOT JUDGED"
    not_judged = [s for s in report["scenarios"] if s["status"] == "not_judged"]
    assert not_judged
    assert all(REASON in s["message"] for s in not_judged), "each says what the engine answered"
    assert {
        s["status"] for s in report["scenarios"] if "search" not in s["needs"] and "lookup" not in s["needs"]
    } <= {"passed"}, "scenarios that need no engine are still judged"
    _assert_no_secret(_outputs(done, tmp_path / "out"))


def test_a_password_never_shows_when_the_engine_is_unreachable_or_lost(tmp_path: Path) -> None:
    from ..engines._dying_engine import DyingEngine

    unreachable, _ = rag_conformance(
        "run", "--milvus", f"uri:http://{USER}:{SECRET}@127.0.0.1:1", "--report", "gone", cwd=tmp_path
    )
    assert unreachable.returncode == 2
    _assert_no_secret(_outputs(unreachable, tmp_path / "gone"))
    with start_engine("lite") as own, DyingEngine(own.endpoint.uri, searches=10) as dying:
        lost, _ = rag_conformance(
            "run", "--milvus", f"uri:{_with_password(dying.uri)}", "--report", "lost", cwd=tmp_path
        )
    assert lost.returncode == 2, lost.stdout + lost.stderr
    _assert_no_secret(_outputs(lost, tmp_path / "lost"))
    site, _ = rag_conformance("docs", "--results", "lost", "--results", "gone", "--out", "site", cwd=tmp_path)
    assert site.returncode == 0, site.stderr
    _assert_no_secret(_outputs(site, tmp_path / "site"))


def test_a_report_path_that_is_a_file_is_refused_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "report").write_text("not a directory")
    done, seconds = rag_conformance("run", "--report", "report", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "rag-conformance: the report directory report is a file, not a directory; pass another --report "
        "(nothing was run). Exit code 2"
    ]
    assert seconds < STOPPED_AT_ONCE_SECONDS


# -- nothing outlives the run ------------------------------------------------------------------------

WORKER = "import time; time.sleep(600)"
# The tests here look only at what they started: each test's runs (and so every process their stdio
# programs start) inherit OWNER=<a value of that test's own>. Under `pytest -n auto`, or beside other
# kit runs, the machine also holds other runs' marked children, which are not these tests' business.
OWNER = "RQS_TEST_OWNER"


@pytest.fixture
def owner() -> str:
    return secrets.token_hex(8)


def _marked_processes(owner: str) -> list[int]:
    """This test's processes that still carry a stdio child's mark (none should be left)."""
    mark, own = f"{CHILD_MARK}=".encode(), f"{OWNER}={owner}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if own in environ and any(v.startswith(mark) for v in environ):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process checks read /proc (Linux)")
@pytest.mark.parametrize("leave_session", [False, True], ids=["forked worker", "setsid daemon"])
def test_a_childs_workers_are_killed_after_it_exited(leave_session: bool, owner: str) -> None:
    spawn = "os.setsid(); " if leave_session else ""
    program = (
        "import os, sys, time\n"
        f"if os.fork() == 0:\n    {spawn}time.sleep(600)\n"
        "print('ready', flush=True)\nsys.stdin.readline()\n"  # then exit, as a program does at stop
    )
    child = ChildProcess([sys.executable, "-c", program], cwd=None, env={OWNER: owner})
    assert child.receive(10) == "ready"
    child.send("stop")
    deadline = time.monotonic() + 10
    while child.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not child.alive()
    assert _marked_processes(owner), "the worker runs on after its parent exited"
    child.kill()
    time.sleep(0.2)
    assert not _marked_processes(owner)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the process checks read /proc (Linux)")
def test_a_shell_wrapper_that_forks_a_worker_leaves_nothing_behind(tmp_path: Path, owner: str) -> None:
    wrapper = tmp_path / "wrapper.sh"
    python = sys.executable
    wrapper.write_text(
        f'{python} -c "{WORKER}" &\nsetsid {python} -c "{WORKER}" &\nexec {python} {EXAMPLE}\n'
    )
    done, _ = rag_conformance(
        "run", "--adapter-cmd", f"sh {wrapper}", "--report", "out", cwd=tmp_path, env={OWNER: owner}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    time.sleep(0.2)
    assert not _marked_processes(owner), "a worker of the stdio program outlived the run"


# -- one seed, one report ------------------------------------------------------------------------------

_VARIES = {"duration_s"}  # and the engine's prefix and port, in environment.milvus


def _comparable(path: Path) -> object:
    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _VARIES}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    report = json.loads(path.read_text())
    report["environment"]["milvus"].pop("prefix")
    report["environment"]["milvus"].pop("uri")
    report["environment"]["options"].pop("report")  # the two runs write into two directories
    return strip(report)


def test_the_same_seed_gives_the_same_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for hash_seed, folder in (("1", "a"), ("2", "b")):  # the hash seed changes every set's order
        monkeypatch.setenv("PYTHONHASHSEED", hash_seed)
        done, _ = rag_conformance(
            "run", "--seed", "1234", "--profile", "selftest", "--report", folder, cwd=tmp_path
        )
        assert done.returncode == 0, done.stdout + done.stderr
    assert _comparable(tmp_path / "a" / "report.json") == _comparable(tmp_path / "b" / "report.json")
