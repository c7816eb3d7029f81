"""One implementation child process: lines in, lines out, stderr kept as a tail, killable at once.

Reader threads drain stdout and stderr continuously, so a chatty stderr can never fill its pipe and
block the child, and a read can wait with a timeout (a plain ``readline`` cannot). What they keep is
bounded in bytes (:mod:`._streams`): each line to :data:`STDOUT_LINE_BYTES` (stdout) or
:data:`STDERR_LINE_BYTES` (stderr), the unread stdout lines to :data:`STDOUT_BUDGET_BYTES` (past it,
lines are dropped and the reader says so: the call errors, the program is restarted), the stderr tail
to its last 40 lines. A flood of any size costs the kit a few tens of megabytes at most.

The wire is UTF-8 both ways, whatever the kit's locale: the child's environment asks its runtime for
UTF-8 streams (:func:`utf8_environment`), and a stdout line that is not UTF-8 is never guessed at: it
is handed on as :class:`NotUtf8Line`, naming the first byte that is not, for the codec to refuse.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import IO

from ..boundary._credentials import CREDENTIAL_ENV
from ..boundary._redact import holds_secret
from ..boundary._signals import for_the_main_thread
from ._streams import ByteBudgetQueue, CutLine, Overflowed, bounded_lines

__all__ = [
    "CHILD_MARK",
    "STDERR_LINE_BYTES",
    "STDOUT_BUDGET_BYTES",
    "STDOUT_LINE_BYTES",
    "ChildProcess",
    "CutLine",
    "NotUtf8Line",
    "Overflowed",
    "ProcessGoneError",
    "ReplyTimeoutError",
    "kill_tree",
    "utf8_environment",
    "without_credentials",
]

CHILD_MARK = "RQS_STDIO_CHILD"
"""The environment variable that marks every process a stdio child starts (its value is per child)."""
_PROC = "/proc"

_EOF = object()
_STDERR_LINES = 40
_STDERR_CHARS = 1200  # the report keeps 2,000 characters per scenario; leave room for the message
# What the kit keeps of a child's output, in bytes (issue 53: lines are no bound; a 200 MB line is one).
# A reply is a few kilobytes (the largest, a post-process of the largest k, well under 1 MB): a stdout
# line longer than this is no reply the kit reads, and errors the call.
STDOUT_LINE_BYTES = 8 * 1024 * 1024
# Lines read from stdout and not yet asked for (noise between calls): past this they are dropped.
STDOUT_BUDGET_BYTES = 16 * 1024 * 1024
# Each stderr line is kept up to this many bytes: the tail shows 1,200 characters in all.
STDERR_LINE_BYTES = 4096


class ProcessGoneError(Exception):
    """The child closed stdout or exited; ``returncode`` is its exit status when known."""

    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode
        super().__init__(f"exit code {returncode}")


class ReplyTimeoutError(Exception):
    """No line arrived in time."""


# What the kit adds to a child's JVM options: Java 17 takes stdout's charset from file.encoding, later
# JVMs from stdout.encoding (sun.* are the older spellings); under a C locale both default to ASCII and
# write every other character as '?'.
JAVA_UTF8_OPTIONS = (
    "-Dfile.encoding=UTF-8",
    "-Dstdout.encoding=UTF-8",
    "-Dstderr.encoding=UTF-8",
    "-Dsun.stdout.encoding=UTF-8",
    "-Dsun.stderr.encoding=UTF-8",
)
_UTF8_LOCALE = "C.UTF-8"


def utf8_environment(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with what makes a child's runtime read and write UTF-8, whatever the kit's locale.

    - ``PYTHONIOENCODING=utf-8`` and ``PYTHONUTF8=1`` for Python children;
    - ``LC_ALL=C.UTF-8`` when the locale in effect (``LC_ALL``, else ``LC_CTYPE``, else ``LANG``) does
      not name UTF-8 already (a C or POSIX locale, say), for C, Go, Ruby and every runtime that follows
      the locale; a UTF-8 locale is left as it is;
    - ``JAVA_TOOL_OPTIONS`` gains the JVM's encoding properties (:data:`JAVA_UTF8_OPTIONS`) it lacks.

    Node.js and .NET write UTF-8 whatever the locale.
    """
    env = dict(base)
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONUTF8"] = "1"
    ctype = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or ""
    if "utf-8" not in ctype.lower() and "utf8" not in ctype.lower():
        env["LC_ALL"] = _UTF8_LOCALE
    java = env.get("JAVA_TOOL_OPTIONS", "").split()
    have = {option.partition("=")[0] for option in java}
    java += [option for option in JAVA_UTF8_OPTIONS if option.partition("=")[0] not in have]
    env["JAVA_TOOL_OPTIONS"] = " ".join(java)
    return env


def without_credentials(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` without the Milvus credentials a program under test must not inherit: every
    ``MILVUS_*`` variable (``MILVUS_TOKEN``, ``MILVUS_URI``, ``MILVUS_DB``, ...), the kit's own
    (:data:`CREDENTIAL_ENV`), and any other whose value holds a secret the kit was given
    (``MY_TOKEN=$MILVUS_TOKEN``). The program gets its endpoint, token and database included, over
    stdin with ``prepare``, and only if it declares search or lookup."""
    return {
        name: value
        for name, value in base.items()
        if not name.startswith("MILVUS_") and name not in CREDENTIAL_ENV and not holds_secret(value)
    }


class NotUtf8Line:
    """A stdout line that is not UTF-8: its bytes, and the first offending byte and where it is."""

    def __init__(self, raw: bytes, error: UnicodeDecodeError) -> None:
        self.raw = raw
        self.offset = error.start
        self.byte = raw[error.start]

    def describe(self) -> str:
        """``byte 0xe9 at offset 12 (b'...context...')``: the offending byte, where, and around it."""
        around = self.raw[max(0, self.offset - 24) : self.offset + 24]
        return f"byte 0x{self.byte:02x} at offset {self.offset} (near {around!r})"


class ChildProcess:
    """A started child with a line-oriented stdin/stdout and a bounded stderr tail."""

    def __init__(
        self, argv: Sequence[str], *, cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None
    ) -> None:
        child_env = utf8_environment(without_credentials(os.environ))
        # Python children block-buffer a piped stdout; a reply stuck in a buffer reads as a hang.
        child_env.setdefault("PYTHONUNBUFFERED", "1")
        child_env.update(env or {})  # what the caller sets explicitly wins
        # Every process the child starts inherits this mark, also one that leaves the session: the kill
        # finds them by it after the child itself has exited (see kill_tree).
        self._mark = secrets.token_hex(8)
        child_env[CHILD_MARK] = self._mark
        self._lines = ByteBudgetQueue(STDOUT_BUDGET_BYTES)
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self.stderr_cut = 0  # stderr lines longer than STDERR_LINE_BYTES, cut
        self.stderr_longest = 0  # the longest of them, in bytes
        # A session of its own, so a kill also reaches grandchildren (a shell wrapper, npm, ...).
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=child_env,
            start_new_session=True,
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr  # noqa: PT018 - PIPEs above
        self._stdin: IO[bytes] = self.proc.stdin
        self._out = threading.Thread(target=self._pump_stdout, args=(self.proc.stdout,), daemon=True)
        self._err = threading.Thread(target=self._pump_stderr, args=(self.proc.stderr,), daemon=True)
        self._out.start()
        self._err.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _pump_stdout(self, stream: IO[bytes]) -> None:
        for_the_main_thread()
        with contextlib.suppress(ValueError, OSError):
            for line in bounded_lines(stream, STDOUT_LINE_BYTES):
                item: object
                if isinstance(line, CutLine):  # no reply: the codec says so, with its size
                    item, weight = line, len(line.head)
                else:
                    weight = len(line)
                    try:
                        item = line.decode("utf-8")  # strict: the wire is UTF-8
                    except UnicodeDecodeError as exc:
                        item = NotUtf8Line(line, exc)
                if not self._lines.put(item, weight):
                    return  # killed: nobody reads on (what is left of the pipe is closed)
        self._lines.put_last(_EOF)

    def _pump_stderr(self, stream: IO[bytes]) -> None:
        for_the_main_thread()
        with contextlib.suppress(ValueError, OSError):
            for line in bounded_lines(stream, STDERR_LINE_BYTES):
                if isinstance(line, CutLine):
                    self.stderr_cut += 1
                    self.stderr_longest = max(self.stderr_longest, line.size)
                    text = line.head.decode("utf-8", errors="replace")
                    self._stderr.append(f"{text}… (line of {line.size:,} bytes, cut)")
                else:
                    self._stderr.append(line.decode("utf-8", errors="replace"))

    def send(self, line: str) -> None:
        """Write one line; :class:`ProcessGoneError` if the child no longer reads."""
        try:
            self._stdin.write(line.encode("utf-8") + b"\n")
            self._stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise ProcessGoneError(self._returncode_soon()) from None

    def receive(self, timeout: float) -> str | NotUtf8Line | CutLine | Overflowed:
        """The next stdout line (the bytes of one that is not UTF-8, the head of one too long to be a
        reply, or where lines were dropped); :class:`ReplyTimeoutError` or :class:`ProcessGoneError`
        otherwise."""
        try:
            item = self._lines.get(timeout=max(timeout, 0.0))
        except TimeoutError:
            raise ReplyTimeoutError from None
        if item is _EOF:
            self._lines.push_back(_EOF)  # stay at EOF for later reads
            raise ProcessGoneError(self._returncode_soon())
        return item if isinstance(item, NotUtf8Line | CutLine | Overflowed) else str(item)

    def stderr_tail(self) -> str:
        """The last lines the child wrote to stderr (bounded), once the stderr pipe is drained."""
        if self.proc.poll() is not None:
            self._err.join(timeout=1.0)
        text = "\n".join(self._stderr).strip()
        return text if len(text) <= _STDERR_CHARS else "…" + text[-_STDERR_CHARS:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _returncode_soon(self, wait: float = 1.0) -> int | None:
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL everything this child started (only that) and reap it: see :func:`kill_tree`."""
        kill_tree(self.proc.pid, self._mark, leader_alive=self.proc.returncode is None)
        self._lines.close()  # what the queue held is freed; the reader stops at its next line
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)
        self._close_pipes()

    def finish(self, grace: float) -> None:
        """Close stdin (EOF tells a well-behaved child to exit), wait ``grace`` seconds, then kill."""
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()
        deadline = time.monotonic() + grace
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        self.kill()

    def _close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()


def kill_tree(pgid: int, mark: str, *, leader_alive: bool) -> list[int]:
    """SIGKILL a stdio child's whole tree; return the pids signalled (besides the group as a whole).

    The child runs in a session of its own, so its process group holds what it forked (a shell
    wrapper's program, npm's node). The group is killed whether or not its leader still runs: a program
    that exits at ``stop`` leaves its workers behind, in the group, under PID 1. On Linux, every process
    whose environment carries the child's :data:`CHILD_MARK` is killed too, which reaches a daemon that
    left the session with ``setsid``. Out of reach: a process that left the session *and* dropped its
    environment (``setsid env -i ...``); and on systems without ``/proc``, anything outside the group.
    """
    marked, in_group = _marked_processes(mark, pgid)
    # The group is this child's while its leader is unreaped, or while a process carrying the mark is in
    # it (a group id is never reused while the group has members).
    if leader_alive or in_group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for pid in marked:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return marked


def _marked_processes(mark: str, pgid: int) -> tuple[list[int], bool]:
    """The pids whose environment carries ``CHILD_MARK=mark``, and whether one of them is in ``pgid``."""
    if not os.path.isdir(_PROC):
        return [], False
    needle = f"{CHILD_MARK}={mark}".encode()
    found, in_group = [], False
    for entry in os.listdir(_PROC):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"{_PROC}/{entry}/environ", "rb") as environ:
                if needle not in environ.read().split(b"\0"):
                    continue
            with open(f"{_PROC}/{entry}/stat", "rb") as stat:
                fields = (
                    stat.read().rpartition(b")")[2].split()
                )  # after the command name, which may hold spaces
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found.append(int(entry))
        in_group |= len(fields) > 2 and int(fields[2]) == pgid  # state, ppid, pgrp
    return found, in_group
