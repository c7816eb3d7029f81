"""Start a command as a terminal or a CI runner would: SIGINT at its default, so Ctrl-C reaches it.

An xdist worker (or any job a shell without job control starts in the background) ignores SIGINT,
and a child inherits an ignored signal; the kit rightly leaves an ignored signal alone. The usual cure,
``preexec_fn=`` resetting the signal, makes Python fork with its at-fork hooks, and gRPC's hooks abort
the child (SIGABRT, "epoll_wait error: Bad file descriptor") when another thread of the worker is in a
Milvus call at that moment. So the reset happens in a tiny Python that then becomes the command.
"""

from __future__ import annotations

import sys

__all__ = ["with_sigint_default"]

_RESET_AND_EXEC = (
    "import os, signal, sys; "
    "signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def with_sigint_default(command: list[str]) -> list[str]:
    """``command``, started with SIGINT at its default disposition (pass to ``subprocess.Popen``)."""
    return [sys.executable, "-c", _RESET_AND_EXEC, *command]
