"""The reference, with a Ctrl-C that lands where Python swallows exceptions: at its 50th normalizer call,
an object is dropped whose destructor raises SIGINT at the process, so the kit's handler runs inside that
destructor (as it does inside Hypothesis's gc callback, where a real Ctrl-C was seen to vanish) and its
interrupt only reaches ``sys.unraisablehook``. The implementation itself does nothing wrong."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from conformance.adapters.reference import ReferenceAdapter

__all__ = ["CtrlCInADestructor"]

SIGNAL_AT_CALL = 50
DIAGNOSIS = "ctrl-c-diagnosis.txt"  # in the working directory, when the Ctrl-C did not stop the run


class _Trap:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)
        _ = [n for n in range(10)]  # Python code after the signal: its handler runs here, in __del__


class CtrlCInADestructor(ReferenceAdapter):
    """The reference, Ctrl-C pressed (and swallowed) during its 50th ``quality_score`` call."""

    calls = 0

    def quality_score(self, *args: Any, **kwargs: Any) -> float:
        type(self).calls += 1
        if type(self).calls == SIGNAL_AT_CALL:
            trap = _Trap()
            del trap  # the destructor runs here, and with it the signal handler
        elif type(self).calls == SIGNAL_AT_CALL + 1:  # the run should have stopped: keep what the signal met
            blocked = sorted(s.name for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
            Path(DIAGNOSIS).write_text(
                f"call {SIGNAL_AT_CALL + 1} reached; SIGINT's handler {signal.getsignal(signal.SIGINT)!r}, "
                f"blocked signals {blocked}, unraisable hook {sys.unraisablehook!r}\n",
                encoding="utf-8",
            )
        return super().quality_score(*args, **kwargs)
