"""Start a command as a terminal or a CI runner would: SIGINT, SIGTERM and SIGHUP at their defaults, so
a Ctrl-C, a cancelled job or a closed terminal reaches it.

A process inherits an ignored signal, and the kit rightly leaves an ignored signal alone (a run under
``nohup`` keeps its SIGHUP ignored). The tests are not always started from a terminal: a shell without
job control ignores SIGINT in what it starts in the background, ``nohup`` ignores SIGHUP, and an xdist
worker may ignore SIGINT. A test that signals the kit then saw a run carry on (exit 0, or exit 1 after a
hung call's 30 s timeout): every run, when pytest was started that way. The usual cure, ``preexec_fn=``
resetting the signals, makes Python fork with its at-fork hooks, and gRPC's hooks abort the child
(SIGABRT, "epoll_wait error: Bad file descriptor") when another thread of the worker is in a Milvus call
at that moment. So the reset happens in a tiny Python that then becomes the command.
"""

from __future__ import annotations

import sys

__all__ = ["with_stop_signals_default"]

_RESET_AND_EXEC = (
    "import os, signal, sys; "
    "[signal.signal(getattr(signal, n), signal.SIG_DFL) for n in ('SIGINT', 'SIGTERM', 'SIGHUP')]; "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def with_stop_signals_default(command: list[str]) -> list[str]:
    """``command``, started with SIGINT, SIGTERM and SIGHUP at their default dispositions (pass it to
    ``subprocess.Popen`` or ``subprocess.run``)."""
    return [sys.executable, "-c", _RESET_AND_EXEC, *command]
