"""``benchmarks.instruments.affinity.separate_cores``: client and engine on their own cores, undone after."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from benchmarks.instruments.affinity import separate_cores

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux affinity calls and at least 2 usable cores",
)

# A stand-in engine: a process with a child, each with a second thread.
ENGINE = """
import subprocess, sys, threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
child = subprocess.Popen([sys.executable, "-c", "import threading, time; "
    "threading.Thread(target=time.sleep, args=(60,), daemon=True).start(); time.sleep(60)"])
print(child.pid, flush=True)
time.sleep(60)
"""


def _affinities(pid: int) -> set[frozenset[int]]:
    return {frozenset(os.sched_getaffinity(int(tid))) for tid in os.listdir(f"/proc/{pid}/task")}


@pytest.fixture
def engine():
    process = subprocess.Popen([sys.executable, "-c", ENGINE], stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    deadline = time.monotonic() + 30
    while min(len(os.listdir(f"/proc/{p}/task")) for p in (process.pid, child)) < 2:
        assert time.monotonic() < deadline, "the stand-in engine did not start its threads"
        time.sleep(0.01)
    yield process.pid, child
    process.kill()
    os.kill(child, 9)
    process.wait()


def test_pins_this_process_and_every_engine_thread_then_undoes_it(engine) -> None:
    pid, child = engine
    usable = frozenset(os.sched_getaffinity(0))
    first = min(usable)
    with separate_cores(pid) as info:
        assert info["pinned"]
        assert info["client_cores"] == [first]
        assert set(info["engine_cores"]) == usable - {first}
        assert info["engine_threads"] >= 4  # two processes, two threads each
        assert _affinities(os.getpid()) == {frozenset({first})}
        assert _affinities(pid) == _affinities(child) == {usable - {first}}
    assert _affinities(os.getpid()) == _affinities(pid) == _affinities(child) == {usable}


def test_says_why_when_it_pins_nothing() -> None:
    with separate_cores(None) as info:
        assert info == {"pinned": False, "why": info["why"]}
        assert "no engine process" in info["why"]
    with separate_cores(os.getpid(), enabled=False) as info:
        assert info == {"pinned": False, "why": "--no-pin"}
