"""The signals that stop a command, each named as itself: SIGINT 130, SIGTERM 143, SIGHUP 129.

Every command of ``rag-conformance`` runs inside :func:`interrupting_signals`: SIGINT (Ctrl-C), SIGTERM (a
cancelled CI job, a timeout) and SIGHUP (a closed terminal, a dropped SSH connection) each raise
:class:`Interrupted`, a ``KeyboardInterrupt`` that carries the signal, so ``finally`` blocks and context
managers run (children are stopped, collections dropped, reports written) and the command exits
``128 + signal`` naming the signal it got. Python's default for SIGTERM and SIGHUP is to die at once,
with none of that.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = [
    "SIGNAL_SLICE_SECONDS",
    "STOP_SIGNALS",
    "Interrupted",
    "delivered",
    "for_the_main_thread",
    "interrupt_behind",
    "interrupting_signals",
    "is_ours",
    "join_in_slices",
    "keeping_swallowed_interrupts",
    "note_received",
    "raise_swallowed",
    "received",
    "signal_of",
    "take_swallowed",
]

STOP_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

SIGNAL_SLICE_SECONDS = 0.2
"""The longest a wait of the kit on the main thread goes without looking for a stop signal. The kernel
hands a process's signal to any of its threads that does not block it; when that is not the main thread
(a stdio reader blocked on its pipe, a gRPC poller), a lock or condition wait on the main thread is not
interrupted, and the Python handler runs only once that wait returns: a Ctrl-C would wait out a 30 s
stdio reply timeout. So long waits wait in slices of this length."""


def for_the_main_thread() -> None:
    """Called first in a thread the kit starts: the stop signals are blocked there, so the kernel hands
    them to the main thread, whose wait they interrupt at once. Only in a thread that starts no process
    (a stdio reader, the lease heartbeat): a child inherits the blocked signals, and would ignore them."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The interrupt ``exc`` stands in for, if any: ``exc`` itself, or one down its context and cause (and
    a group's members). A library may raise its own error while an interrupt passes through it: Hypothesis
    6.170, interrupted before its runner was set, raised ``assert state._runner is not None`` in its
    handler, and a Ctrl-C became a falsified property."""
    todo, seen = [exc], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt):
            return current
        todo += [e for e in (current.__context__, current.__cause__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            todo += current.exceptions
    return None


def join_in_slices(thread: threading.Thread, timeout: float) -> None:
    """``thread.join(timeout)``, in slices of :data:`SIGNAL_SLICE_SECONDS`: a stop signal ends it then."""
    deadline = time.monotonic() + timeout
    while thread.is_alive() and (left := deadline - time.monotonic()) > 0:
        thread.join(min(left, SIGNAL_SLICE_SECONDS))


class Interrupted(KeyboardInterrupt):
    """A command was stopped by ``signum``."""

    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        super().__init__(signal.Signals(signum).name)


def signal_of(exc: BaseException) -> int:
    """The signal an interrupt stands for: its ``signum``, a signal's name as its text, else SIGINT."""
    signum = getattr(exc, "signum", None)
    if isinstance(signum, int) and signum > 0:
        return signum
    named = getattr(signal, str(exc), None) if str(exc).startswith("SIG") else None
    return int(named) if isinstance(named, signal.Signals) else int(signal.SIGINT)


_RECEIVED: list[int] = []
"""The stop signals this process received through :func:`interrupting_signals`' handler, in order."""


def received() -> int | None:
    """The first stop signal this process received through :func:`interrupting_signals`, if any."""
    return _RECEIVED[0] if _RECEIVED else None


def note_received(signum: int) -> None:
    """Keep ``signum`` as received (a run's own handler, which takes the signals over, calls it too), and
    as not yet delivered until :func:`delivered` is called."""
    _RECEIVED.append(signum)
    _UNDELIVERED.append(signum)


def delivered() -> None:
    """The interrupt has reached the command's own handling (pytest stopped the session, or the command
    line caught it): nothing is left to raise again."""
    _UNDELIVERED.clear()


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    note_received(signum)
    raise Interrupted(signum)


_raise_interrupted.rqs_stop_handler = True  # type: ignore[attr-defined]


def is_ours(handler: Callable[..., Any] | int | None) -> bool:
    """Whether ``handler`` is the one :func:`interrupting_signals` installs (a run may take it over)."""
    return bool(getattr(handler, "rqs_stop_handler", False))


_UNDELIVERED: list[int] = []
"""Stop signals received whose interrupt has not reached the command (:func:`delivered`): it may have
been swallowed. A handler runs wherever the main thread is: an exception raised in a destructor or a gc
callback (Hypothesis keeps one) only reaches ``sys.unraisablehook``, and a library may catch the
interrupt and raise something else in its place. The command then carried on as though no signal had
come."""


def take_swallowed() -> int | None:
    """The signal of an interrupt not delivered (see :data:`_UNDELIVERED`), if any; forgotten once taken."""
    signum = _UNDELIVERED[0] if _UNDELIVERED else None
    _UNDELIVERED.clear()
    return signum


def raise_swallowed() -> None:
    """Raise again, here, where it can reach the command, the interrupt of a signal not delivered."""
    signum = take_swallowed()
    if signum is not None:
        raise Interrupted(signum)


@contextmanager
def keeping_swallowed_interrupts() -> Iterator[None]:
    """Inside, an interrupt Python swallows is kept for :func:`raise_swallowed` instead of printed."""

    def keep(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _UNDELIVERED.append(signal_of(unraisable.exc_value))
        else:
            previous(unraisable)

    previous = sys.unraisablehook
    sys.unraisablehook = keep
    try:
        yield
    finally:
        if sys.unraisablehook is keep:  # another hook put on top since stays (it chains to ours)
            sys.unraisablehook = previous


@contextmanager
def interrupting_signals() -> Iterator[None]:
    """Inside, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (on the main thread, where nobody
    else has claimed them: an ignored SIGHUP under ``nohup`` stays ignored); the handlers are restored
    after."""
    previous: dict[int, Any] = {}
    _RECEIVED.clear()  # a signal an earlier command of this process got is not this one's
    _UNDELIVERED.clear()
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            current = signal.getsignal(signum)
            if current in (signal.SIG_DFL, signal.default_int_handler):
                previous[signum] = current
                signal.signal(signum, _raise_interrupted)
    try:
        with keeping_swallowed_interrupts():
            yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
