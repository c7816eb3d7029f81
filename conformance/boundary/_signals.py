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
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = [
    "STOP_SIGNALS",
    "Interrupted",
    "interrupting_signals",
    "is_ours",
    "note_received",
    "received",
    "signal_of",
]

STOP_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


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
    """Keep ``signum`` as received (a run's own handler, which takes the signals over, calls it too)."""
    _RECEIVED.append(signum)


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    note_received(signum)
    raise Interrupted(signum)


_raise_interrupted.rqs_stop_handler = True  # type: ignore[attr-defined]


def is_ours(handler: Callable[..., Any] | int | None) -> bool:
    """Whether ``handler`` is the one :func:`interrupting_signals` installs (a run may take it over)."""
    return bool(getattr(handler, "rqs_stop_handler", False))


@contextmanager
def interrupting_signals() -> Iterator[None]:
    """Inside, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (on the main thread, where nobody
    else has claimed them: an ignored SIGHUP under ``nohup`` stays ignored); the handlers are restored
    after."""
    previous: dict[int, Any] = {}
    _RECEIVED.clear()  # a signal an earlier command of this process got is not this one's
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            current = signal.getsignal(signum)
            if current in (signal.SIG_DFL, signal.default_int_handler):
                previous[signum] = current
                signal.signal(signum, _raise_interrupted)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
