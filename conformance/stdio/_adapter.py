"""``StdioAdapter``: the :class:`~conformance.Implementation` Protocol spoken to a child process.

Every failure ends the one call it happened in and leaves the run going:

- a reply that is JSON with the right ``seq`` but not of the operation's reply shape, or carries
  ``NaN`` or ``Infinity`` (not JSON), errors that call, quoting the line; the program keeps serving
  (it answered, so it is alive and in step); so does a line that is not UTF-8, naming its first bad
  byte;
- a line on stdout that is not JSON (a log line, a banner) after the handshake is skipped while the
  kit waits for the reply, up to a bound, and reported once as a warning; with ``strict_stdout`` it
  errors the call instead;
- a crash, a hang past the timeout, or unreadable output (a reply to a later request, or more noise
  than the bound) errors the call with the tail of stderr, and the program is restarted before the
  next call (the handshake again, and the last ``prepare`` again before the next search or lookup).

Only that last kind counts toward the restart limit, per capability: after three in a row for one
capability, its remaining calls are answered at once with one shared reason, and the program still
serves the other capabilities. If it cannot be restarted at all, every later call gets that reason.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..boundary._decline import NotApplicable
from ..boundary._describe import describe_request
from ..boundary._errors import (
    AdapterCallError,
    AdapterLoadError,
    ConformanceError,
    ImplementationProcessError,
    InvalidReplyError,
)
from ..boundary._protocol import (
    Corpus,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    MilvusEndpoint,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
)
from ..boundary._tally import CAPABILITY_OF
from ._codec import Codec, RemoteError
from ._noise import NoiseReport
from ._process import (
    STDERR_LINE_BYTES,
    ChildProcess,
    CutLine,
    NotUtf8Line,
    Overflowed,
    ProcessGoneError,
    ReplyTimeoutError,
)

__all__ = ["NotApplicable", "StdioAdapter"]

_MAX_FAILURES_IN_A_ROW = 3
_STOP_GRACE = 5.0
_NOISE_PER_CALL = 200  # non-reply stdout lines skipped while waiting for one reply
_SEQS_KEPT = 64  # the last requests whose seq a message may name (seq_of)
# Which capability a call serves (the boundary's table): the restart limit counts per capability. prepare
# serves search and lookup, so when it is given up on, so are they.
_CAPABILITY = CAPABILITY_OF
_NEEDS_PREPARE = ("search", "lookup")
# A line that is readable but wrong (schema, missing seq) leaves the stream in step; these do not.
_UNREADABLE = ("ahead", "noisy")
_NOISE = ("not_json", "not_object")


class StdioAdapter:
    """Judge an implementation in any language that speaks the stdio protocol (see the README).

    ``command`` is split like a shell would (``shlex``) unless given as a sequence. ``timeout`` bounds
    every call, the start handshake included. ``validate`` also checks every line the kit writes
    against the protocol models. Replies are read by one rule whatever the mode: numbers may be any
    JSON number, text where a number belongs is a reply error. ``strict_stdout`` makes a stdout line
    that is not a reply an error of the call (default: skipped, and reported once through
    ``on_warning`` and :attr:`warnings`). The child gets the kit's environment with UTF-8 asked of
    its runtime (:func:`~conformance.stdio._process.utf8_environment`); ``env`` adds to it, and wins.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 30.0,
        validate: bool = False,
        strict_stdout: bool = False,
        on_warning: Callable[[str], None] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
        if not argv:
            raise AdapterLoadError(
                "empty implementation command: give the program to run, e.g. 'node impl.js'"
            )
        if not timeout > 0:
            raise AdapterLoadError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.argv = argv
        self.timeout = float(timeout)
        self.cwd = cwd
        self.env = dict(env or {})
        self.rqs_name = Path(argv[-1]).name if len(argv) > 1 else Path(argv[0]).name
        self._codec = Codec(validate=validate)
        self._lock = threading.RLock()
        self._child: ChildProcess | None = None
        self._info: ImplementationInfo | None = None
        self._seq = 0
        self.strict_stdout = strict_stdout
        self.warnings: list[str] = []
        self._on_warning = on_warning
        self._noise_report = NoiseReport()
        self._stderr_cut_said = False
        self._prepared: tuple[MilvusEndpoint, Corpus] | None = None
        self._sent: deque[tuple[Any, int]] = deque(maxlen=_SEQS_KEPT)  # (request object, its seq)
        self._child_prepared = False
        self._failures: dict[str, int] = {}
        self._given_up: dict[str, str] = {}  # capability -> the shared reason its calls now get
        self._gone: str | None = None  # the program cannot be (re)started: every call gets this
        self._closed = False

    def __repr__(self) -> str:
        return f"StdioAdapter({shlex.join(self.argv)!r}, timeout={self.timeout:g})"

    # -- the Protocol ------------------------------------------------------------------------------

    def describe(self) -> ImplementationInfo:
        with self._lock:
            if self._info is None:
                try:
                    self._spawn()
                except (ImplementationProcessError, InvalidReplyError, AdapterCallError) as exc:
                    error = AdapterLoadError(f"the start handshake failed: {exc}")
                    error.problem = getattr(exc, "problem", "remote_error")  # type: ignore[attr-defined]
                    raise error from None
            assert self._info is not None
            return self._info

    def canonicalize_label(self, label: str) -> str:
        return self._call("canonicalize_label", label=label)

    def quality_score(self, request: QualityRequest) -> float:
        return self._call("quality_score", request=request)

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        return self._call("post_process", request=request)

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        if endpoint.token is not None:
            self._codec.secrets.add(endpoint.token.get_secret_value())
        self._prepared = (endpoint, corpus)
        self._child_prepared = False
        self._call("prepare", endpoint=endpoint, corpus=corpus)
        self._child_prepared = True

    def search(self, request: SearchRequest) -> SearchReply:
        return self._call("search", request=request)

    def lookup(self, request: LookupRequest) -> LookupReply:
        return self._call("lookup", request=request)

    def close(self, *, strict: bool = False) -> None:
        """Send ``stop`` (the child drops what it created and exits), then make sure it is gone.

        A ``stop`` the program does not answer as the protocol says (``{"seq": n, "result": null}``,
        ``result`` included) is a warning (:attr:`warnings`, ``on_warning``): the run's verdict is
        about the spec, and stop comes after it. With ``strict`` it is raised instead, once the child
        is gone (``rag-conformance smoke`` does so).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            child, self._child = self._child, None
            if child is None:
                return
            problem: ConformanceError | None = None
            try:
                if child.alive():
                    self._exchange(child, "stop", {}, timeout=min(self.timeout, 30.0))
            except ConformanceError as exc:
                problem = exc
            except Exception as exc:  # closing must not raise over the run's real result
                problem = ImplementationProcessError(self.rqs_name, "stop", f"{type(exc).__name__}: {exc}")
            finally:
                child.finish(_STOP_GRACE)
            if problem is None:
                return
            if strict:
                raise problem
            self._warn(f"the stop request was not answered as the protocol says: {problem}")

    def abort(self) -> None:
        """Kill the program and everything it started, now, without asking it to stop: what an
        interrupted run does (a ``stop`` to a program stuck in a call would wait out the timeout)."""
        self._closed = True
        child, self._child = self._child, None
        if child is not None:
            child.kill()

    def take_notes(self) -> list[str]:
        """What the replies since the last call carried that the protocol allows but does not define
        (fields beside ``result`` or in an ``error``), each once: the judge files them as notes of the
        scenario that asked (fields inside a ``result`` it finds itself)."""
        return self._codec.take_notes()

    def seq_of(self, request: Any) -> int | None:
        """The ``seq`` this very request object (or label) was last sent with, among the last few: the
        judge names it in a FAILED message, so a team finds the line in its own trace."""
        for sent, seq in reversed(self._sent):
            if sent is request:
                return seq
        return None

    # -- machinery ---------------------------------------------------------------------------------

    def _call(self, operation: str, **fields: Any) -> Any:
        with self._lock:
            if self._closed:
                raise ImplementationProcessError(self.rqs_name, operation, "the adapter was closed")
            capability = _CAPABILITY[operation]
            reason = self._gone or self._given_up.get(capability)
            if reason is None and operation in _NEEDS_PREPARE:
                reason = self._given_up.get("prepare")
            if reason is not None:
                raise ImplementationProcessError(self.rqs_name, operation, reason)
            if self._child is None:
                self._restart(operation)
            if operation in _NEEDS_PREPARE and self._prepared is not None and not self._child_prepared:
                self._reprepare(operation)
            return self._counted(capability, operation, fields)

    def _counted(self, capability: str, operation: str, fields: dict[str, Any]) -> Any:
        """One exchange; a lost process counts toward ``capability``'s limit, any answer resets it."""
        child = self._child
        assert child is not None
        try:
            result = self._exchange(child, operation, fields, timeout=self.timeout)
        except BaseException:
            if self._child is child:  # answered, even if wrongly or by declining: alive and in step
                self._failures[capability] = 0
            else:
                self._count_failure(capability)
            raise
        self._failures[capability] = 0
        return result

    def _count_failure(self, capability: str) -> None:
        failures = self._failures.get(capability, 0) + 1
        self._failures[capability] = failures
        if failures >= _MAX_FAILURES_IN_A_ROW:
            asked = "prepare (so search and lookup)" if capability == "prepare" else capability
            self._given_up[capability] = (
                f"the implementation crashed, hung or wrote unreadable output on {failures} {capability} "
                f"calls in a row; the kit stopped asking it for {asked}. Fix the failure reported first; "
                "other capabilities are still judged"
            )

    def _reprepare(self, operation: str) -> None:
        """A restarted program gets the last corpus again before its first search or lookup."""
        assert self._prepared is not None
        endpoint, corpus = self._prepared
        try:
            self._counted("prepare", "prepare", {"endpoint": endpoint, "corpus": corpus})
        except (ImplementationProcessError, InvalidReplyError, AdapterCallError, NotApplicable) as exc:
            raise ImplementationProcessError(
                self.rqs_name, operation, f"after a restart, prepare had to be sent again and failed: {exc}"
            ) from None
        self._child_prepared = True

    def _exchange(
        self, child: ChildProcess, operation: str, fields: dict[str, Any], *, timeout: float
    ) -> Any:
        """Send one request and return its ``result``; every failure becomes the call's error."""
        self._seq += 1
        seq = self._seq
        line = self._codec.encode(operation, seq, fields)
        asked = describe_request(operation, seq, fields)
        if "request" in fields or "label" in fields:
            self._sent.append((fields.get("request", fields.get("label")), seq))
        try:
            child.send(line)
            reply = self._read_reply(child, operation, seq, timeout)
        except ProcessGoneError as gone:
            self._stderr_cut(child)
            self._lost(child)
            detail = f"the process exited (code {gone.returncode}) before replying: it crashed"
            raise self._process_error(child, operation, detail, "exited", asked) from None
        except ReplyTimeoutError:
            self._stderr_cut(child)
            self._lost(child)
            raise self._process_error(
                child,
                operation,
                f"no reply within {timeout:g} s; the process was "
                "killed (raise --adapter-timeout if it is just slow)",
                "timeout",
                asked,
            ) from None
        except InvalidReplyError as invalid:
            problem = getattr(invalid, "problem", None)
            detail = getattr(invalid, "detail", str(invalid))
            if problem in _UNREADABLE:
                self._lost(child)  # out of step with the kit: start afresh for the next call
                detail += "; the kit cannot read on from here: a crash, the program is restarted"
            numbers = invalid.numbers if problem == "invalid" else ()
            error = InvalidReplyError(self.rqs_name, operation, detail, request=asked, numbers=numbers)
            error.problem = problem  # type: ignore[attr-defined]  # read by `rag-conformance smoke`
            raise error from None
        self._stderr_cut(child)
        if isinstance(reply, RemoteError):
            raise AdapterCallError(self.rqs_name, operation, reply, request=asked, answered=True)
        return reply

    def _stderr_cut(self, child: ChildProcess) -> None:
        """Warn once per run that stderr lines were cut: what the kit shows of stderr is their head."""
        if child.stderr_cut and not self._stderr_cut_said:
            self._stderr_cut_said = True
            self._warn(
                f"implementation {self.rqs_name!r} wrote stderr lines longer than {STDERR_LINE_BYTES:,} "
                f"bytes (the longest {child.stderr_longest:,} bytes); the kit keeps the first "
                f"{STDERR_LINE_BYTES:,} bytes of each line and the last lines of stderr, and reads the rest "
                "without keeping it"
            )

    def _read_reply(self, child: ChildProcess, operation: str, seq: int, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        skipped = 0
        while True:
            line = child.receive(deadline - time.monotonic())
            try:
                decoded = self._codec.decode(self.rqs_name, operation, seq, line)
            except InvalidReplyError as invalid:
                self._codec_warnings()
                # Before the handshake is done, or with strict_stdout, noise is the call's error.
                if getattr(invalid, "problem", None) not in _NOISE or operation == "start":
                    raise
                if self.strict_stdout:
                    invalid.detail = f"{invalid.detail} (--strict-stdout)"
                    raise
                skipped += 1
                if skipped > _NOISE_PER_CALL:
                    error = InvalidReplyError(
                        self.rqs_name,
                        operation,
                        f"more than {_NOISE_PER_CALL} lines on stdout that are not replies while the kit "
                        "waited for this one; write only protocol lines on stdout, and logs to stderr",
                    )
                    error.problem = "noisy"  # type: ignore[attr-defined]
                    raise error from None
                self._noise(line)
                continue
            self._codec_warnings()
            if decoded is not Codec.STALE:
                return decoded

    def _codec_warnings(self) -> None:
        for text in self._codec.take_warnings():
            self._warn(text)

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        if self._on_warning is not None:
            self._on_warning(text)

    def _noise(self, raw: str | NotUtf8Line | CutLine | Overflowed) -> None:
        """Report a skipped stdout line once (the same log line printed per call is one warning)."""
        text = self._noise_report.warning(self.rqs_name, raw, self._codec.quote)
        if text is not None:
            self._warn(text)

    def _lost(self, child: ChildProcess) -> None:
        child.kill()
        if self._child is child:
            self._child = None
            self._child_prepared = False

    def _process_error(
        self, child: ChildProcess, operation: str, detail: str, problem: str, request: str | None = None
    ) -> ImplementationProcessError:
        tail = self._codec.scrub(child.stderr_tail())
        error = ImplementationProcessError(self.rqs_name, operation, detail, tail, request=request)
        error.problem = problem  # type: ignore[attr-defined]  # read by `rag-conformance smoke`
        return error

    def _spawn(self) -> None:
        """Start the child and do the handshake; on failure nothing is left running."""
        try:
            child = ChildProcess(self.argv, cwd=self.cwd, env=self.env)
        except OSError as exc:
            error = ImplementationProcessError(
                self.rqs_name,
                "start",
                f"cannot run {shlex.join(self.argv)!r}: {exc}; check the command and the working directory",
            )
            error.problem = "cannot_run"  # type: ignore[attr-defined]
            raise error from None
        try:
            info = self._exchange(child, "start", {"kit_version": _kit_version()}, timeout=self.timeout)
        except BaseException:
            child.kill()
            raise
        if self._info is not None and info.name != self._info.name:
            child.kill()
            raise ImplementationProcessError(
                self.rqs_name,
                "start",
                f"after a restart it calls itself {info.name!r}, not {self._info.name!r}",
            )
        self._child, self._info, self.rqs_name = child, info, info.name

    def _restart(self, operation: str) -> None:
        """A fresh child and the handshake; if that fails, the program is gone for the whole run."""
        try:
            self._spawn()
        except (ImplementationProcessError, InvalidReplyError, AdapterCallError) as exc:
            self._gone = f"it failed earlier and restarting it failed too: {exc}"
            raise ImplementationProcessError(self.rqs_name, operation, self._gone) from None
        self._child_prepared = False


def _kit_version() -> str:
    from .._version import kit_version

    return kit_version()
