"""A run stopped from outside (Ctrl-C, a cancelled CI job, a timeout's SIGTERM, a closed terminal's
SIGHUP) is no verdict.

SIGINT, SIGTERM and SIGHUP each end the run at once, wherever it is (a stdio call waiting for its reply
included): the signal raises :class:`RunInterrupted`, a ``KeyboardInterrupt``, which pytest treats as
an interrupt (it stops the session and tears down), never as a scenario's failure. The report collector
then writes an INTERRUPTED report with what finished before the signal, and the run's resources kill
the stdio program instead of asking it to stop (see :mod:`._resources`). A second signal while the run
tears down is ignored: the teardown is bounded, and interrupting it would leave collections behind.

:class:`InterruptGuard` also keeps an interrupted session's teardown from raising over the interrupt:
an error while closing after a signal is a warning in the report, not a traceback.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

from ..boundary._signals import (
    Interrupted,
    delivered,
    is_ours,
    keeping_swallowed_interrupts,
    note_received,
    raise_swallowed,
    take_swallowed,
)
from ..reporting._outcomes import OutcomeCollector
from ._resources import one_line

__all__ = ["InterruptGuard", "RunInterrupted"]

# SIGHUP too: a closed terminal or a dropped SSH connection stops a run as Ctrl-C does (exit 129).
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class RunInterrupted(Interrupted):
    """The run was stopped by ``signum`` (SIGINT, SIGTERM or SIGHUP)."""


class InterruptGuard:
    """A pytest plugin object: turns SIGINT, SIGTERM and SIGHUP into one interrupt, and guards the
    teardown."""

    def __init__(self, outcomes: OutcomeCollector) -> None:
        self._outcomes = outcomes
        self._previous: dict[int, Any] = {}
        self._signalled = False
        self._keeping = contextlib.ExitStack()

    def install(self) -> None:
        """Take the signals, where this is the main thread and nobody else has claimed them (the command
        line's own handler, :func:`~conformance.boundary._signals.interrupting_signals`, is ours)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in _SIGNALS:
            current = signal.getsignal(signum)
            if current not in (signal.SIG_DFL, signal.default_int_handler) and not is_ours(current):
                continue  # an embedding program's own handler (or an ignored signal) stays as it is
            self._previous[signum] = current
            signal.signal(signum, self._on_signal)
        self._keeping.enter_context(keeping_swallowed_interrupts())

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        self._keeping.close()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self._signalled:
            return  # already stopping: the bounded teardown finishes, then the run exits
        self._signalled = True
        note_received(signum)
        raise RunInterrupted(signum)

    # A handler runs wherever the main thread is: in a destructor or a gc callback, its interrupt is
    # swallowed (Python only hands it to sys.unraisablehook) and the run would carry on to a verdict.
    # Kept, it is raised again at the next scenario, step or call of the implementation (``ask``).

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        raise_swallowed()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        raise_swallowed()

    def pytest_bdd_before_step(self) -> None:
        raise_swallowed()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # pytest's terminal reporter renders the interrupt's whole traceback, with every frame's
        # arguments, the moment it lands: seconds on a loaded machine, for lines the kit then drops
        # (below). Its hook implementation is made a no-op, so a signal ends the run within seconds.
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        for impl in session.config.pluginmanager.hook.pytest_keyboard_interrupt.get_hookimpls():
            if terminal is not None and impl.plugin is terminal:
                impl.function = _no_traceback

    @pytest.hookimpl(trylast=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self._signalled = True  # a KeyboardInterrupt raised some other way: ignore later signals too
        delivered()  # the session stops: nothing to raise again at a later step
        # pytest would print where the interrupt landed (a file and line of the kit); the collector's
        # INTERRUPTED lines say what matters. The terminal reporter keeps it in a private attribute.
        terminal = self._outcomes.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None and hasattr(terminal, "_keyboardinterrupt_memo"):
            terminal._keyboardinterrupt_memo = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        signum = take_swallowed()
        if signum is not None and self._outcomes.interruption is None:
            # Swallowed after the last scenario (in a teardown): the run still ends as the signal says.
            self._outcomes.pytest_keyboard_interrupt(
                pytest.ExceptionInfo.from_exception(RunInterrupted(signum))
            )
        try:
            return (yield)
        except Exception as exc:
            if self._outcomes.interruption is None:
                raise
            # The interrupt is the run's story; a finalizer that failed after it is a footnote.
            self._outcomes.warn(f"after the interrupt, tearing down: {one_line(exc)}")
            self._outcomes.finish(session)
            return None
        finally:
            self.uninstall()


def _no_traceback(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """The terminal reporter's ``pytest_keyboard_interrupt``, minus the traceback it would render."""
