"""A run stopped before its own handling (pytest says INTERRUPTED, no report) exits 128 + the signal."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from conformance.boundary import _signals
from conformance.commands._runner import RunOutcome


@pytest.fixture(autouse=True)
def _no_signal_kept() -> Iterator[None]:
    _signals._RECEIVED.clear()
    yield
    _signals._RECEIVED.clear()
    _signals._UNDELIVERED.clear()  # received here, never delivered: no later test may meet it


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGHUP, 129), (signal.SIGTERM, 143), (signal.SIGINT, 130)]
)
def test_an_interrupt_before_the_run_handled_it_exits_as_its_signal(signum: int, code: int) -> None:
    # A SIGHUP 0.8 s into `rag-conformance run` (while collecting) exited 130, as though it were Ctrl-C.
    _signals.note_received(signum)
    assert RunOutcome(pytest.ExitCode.INTERRUPTED, None).exit_code == code


def test_an_interrupt_no_handler_saw_is_a_ctrl_c() -> None:
    assert RunOutcome(pytest.ExitCode.INTERRUPTED, None).exit_code == 130
