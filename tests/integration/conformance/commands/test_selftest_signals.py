"""A cancelled selftest (issue 45, case 4), sequential or in worker processes: SIGTERM stops it with its
own signal in the message and exit code 143, and a miniature it cut off is never reported as passing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ..._signals import with_stop_signals_default
from .test_cli_exit_codes import CLI, ROOT

# Not a speed target: "stopped, bounded" against "ran to the end or hung".
STOPPED_SECONDS = 60.0


@pytest.mark.parametrize("jobs", ["1", "2"], ids=["sequential", "two workers"])
def test_sigterm_stops_a_selftest_as_sigterm(jobs: str) -> None:
    command = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "conformance.commands._cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        with_stop_signals_default([*command, "selftest", "--jobs", jobs, "--seed", "1"]),  # the whole matrix
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("selftest: ")
    time.sleep(8)  # a few miniatures in, one of them running
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=STOPPED_SECONDS * 2)
    waited = time.monotonic() - sent
    assert proc.returncode == 143, out + err
    assert "interrupted by SIGTERM" in err
    assert "SIGINT" not in err
    assert "mutation score" not in out  # no matrix claimed: the cut-off miniature is not counted
    assert "Traceback" not in out + err
    assert waited < STOPPED_SECONDS, f"{waited:.1f} s"


def test_an_interrupted_selftest_that_cannot_exit_is_ended_within_its_grace() -> None:
    # What hung a sequential selftest for good: interpreter exit joining a thread that never ends (a
    # recording proxy's worker blocked on its engine). The bound ends it with the interrupt's code.
    program = textwrap.dedent(
        """
        import threading
        from conformance.commands._selftest import exit_within
        threading.Thread(target=threading.Event().wait).start()  # never ends, not a daemon
        exit_within(1.0, 143)
        """
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 143, done.stderr
    assert time.monotonic() - started < 30
    assert "still stopping after 1 s; exiting now (143)" in done.stderr
