"""How every command ends: one line and exit 2 for an output that cannot be written, 128 + the signal
(named as itself) for SIGINT, SIGTERM and SIGHUP, and no wait on a frozen engine's threads after a
signal. The whole rule, command by command, is docs/exit-codes.md."""

from __future__ import annotations

import errno
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["run_command"]

# The errors only writing meets (a full disk or quota, a read-only file system, a file too large): an
# output a command wrote in place; the kit's own writers raise OutputNotWrittenError for the rest.
_OUTPUT_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG") if hasattr(errno, name)
)


def run_command(command: str, call: Callable[[], int]) -> int:
    """``call()`` (the command ``command``), its output redacted and the stop signals turned into
    interrupts; what it returns, or the exit code of how it ended."""
    from ..boundary._atomic import OutputNotWrittenError
    from ..boundary._redact import redacting_output
    from ..boundary._signals import delivered, interrupting_signals, received, signal_of, take_swallowed

    with redacting_output(), interrupting_signals():
        try:
            code = call()
        except OutputNotWrittenError as exc:  # nowhere to put a verdict is no verdict: NOT JUDGED
            print(f"rag-conformance {command}: NOT JUDGED: {exc}. Exit code 2", file=sys.stderr)
            code = 2
        except OSError as exc:
            if exc.errno not in _OUTPUT_ERRNOS or exc.filename is None:
                raise
            # A file a command wrote in place (full disk, read-only, a directory in the way): the same one
            # line, never a traceback, never the 1 that reads as a verdict.
            written = OutputNotWrittenError(exc.filename, exc.errno, exc.strerror or str(exc))
            print(f"rag-conformance {command}: NOT JUDGED: {written}. Exit code 2", file=sys.stderr)
            code = 2
        except KeyboardInterrupt as exc:  # outside a run's own handling (loading, parsing): say so, briefly
            delivered()
            signum = signal_of(exc)
            print(
                f"rag-conformance {command}: interrupted ({signal.Signals(signum).name}). "
                f"Exit code {128 + signum}",
                file=sys.stderr,
            )
            code = 128 + signum
        swallowed = take_swallowed()  # a signal whose interrupt was swallowed after the last safe point
        if swallowed is not None and code < 128:
            code = 128 + swallowed
            name = signal.Signals(swallowed).name
            print(f"rag-conformance {command}: interrupted ({name}). Exit code {code}", file=sys.stderr)
    if received() is not None:
        # Stopped by a signal, with everything said, written and stopped: interpreter exit must not then
        # wait on what a frozen engine holds (gRPC's threads and its shutdown took seconds more).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
