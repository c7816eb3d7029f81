"""Child-process entry point: ``milvus-lite server`` plus a parent-death watchdog.

Run by path as ``python -P _lite_child.py --data-dir D --port P [--remove-on-orphan W]``; it needs
only the stdlib and milvus_lite, so it works whether or not the kit is importable in the child.

The parent keeps the write end of this process's stdin open and never writes to it. When the parent
exits for any reason, including SIGKILL, the OS closes that pipe, the watchdog reads EOF and shuts
the server down, so a crashed test run leaves no orphan server. A pipe works on every POSIX system
and does not depend on which parent thread started us (``PR_SET_PDEATHSIG`` fires when that
*thread* exits).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time

GRACE_SECONDS = 5.0  # how long a graceful stop may take before the watchdog exits hard
_orphaned = threading.Event()


def _watch_parent(remove_on_orphan: str | None) -> None:
    # os.read on the raw fd: a daemon thread parked inside sys.stdin's buffered reader holds its lock
    # and makes interpreter shutdown abort ("could not acquire lock ... at interpreter shutdown").
    while os.read(0, 4096):  # the parent never writes; anything read is ignored
        pass
    _orphaned.set()
    # Parent gone: stop the server the way Ctrl-C would (drains requests, releases the dir lock).
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE_SECONDS)
    _remove(remove_on_orphan)
    os._exit(3)


def _remove(path: str | None) -> None:
    if path:  # nobody else will remove the temporary dir once the parent is gone
        shutil.rmtree(path, ignore_errors=True)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt  # milvus-lite's server stops gracefully on KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Start the watchdog, then run the milvus-lite server until interrupted."""
    parser = argparse.ArgumentParser(prog="_lite_child.py")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--remove-on-orphan", help="temporary dir to remove if the parent dies")
    args = parser.parse_args(argv)

    # A process started from a background shell job inherits SIGINT as *ignored*, and then Python
    # installs no KeyboardInterrupt handler: the server would ignore every stop request. Install the
    # handlers explicitly; SIGTERM (what the parent and the watchdog send) stops it the same way.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    threading.Thread(target=_watch_parent, args=(args.remove_on_orphan,), daemon=True).start()
    try:
        from milvus_lite.cmdline import main as milvus_lite_main  # the public `milvus-lite` CLI

        server_args = ["server", "--data-dir", args.data_dir, "--host", args.host, "--port", str(args.port)]
        return int(milvus_lite_main(server_args))
    except KeyboardInterrupt:  # interrupted before the server installed its own handling
        return 0
    finally:
        if _orphaned.is_set():
            _remove(args.remove_on_orphan)


if __name__ == "__main__":
    sys.exit(main())
