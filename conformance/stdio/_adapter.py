"""``StdioAdapter``: the :class:`~conformance.Implementation` Protocol spoken to a child process.

Every failure ends the one call it happened in and leaves the run going: a crash or a hang is
reported with the tail of stderr and the child is restarted once before the next call (handshake and
the last ``prepare`` again, so search still works); an unreadable line is quoted; a ``skipped`` reply
makes the scenario NOT APPLICABLE. After three process failures in a row the adapter gives up and
answers every later call at once with the reason, so a broken implementation cannot stall a run.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import AdapterCallError, AdapterLoadError, ImplementationProcessError, InvalidReplyError
from .._protocol import (
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
from .._skip import NotApplicable
from ._codec import Codec, RemoteError
from ._process import ChildProcess, ProcessGoneError, ReplyTimeoutError

__all__ = ["NotApplicable", "StdioAdapter"]

_MAX_FAILURES_IN_A_ROW = 3
_STOP_GRACE = 5.0


class StdioAdapter:
    """Judge an implementation in any language that speaks the stdio protocol (see the README).

    ``command`` is split like a shell would (``shlex``) unless given as a sequence. ``timeout`` bounds
    every call, the start handshake included. ``validate`` also checks every line the kit writes and
    reads the implementation's replies strictly (no coercion, e.g. ``"1"`` is not a number).
    ``env`` adds to (not replaces) the kit's environment.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 30.0,
        validate: bool = False,
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
        self._prepared: tuple[MilvusEndpoint, Corpus] | None = None
        self._failures = 0
        self._dead: str | None = None
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
        self._call("prepare", endpoint=endpoint, corpus=corpus)

    def search(self, request: SearchRequest) -> SearchReply:
        return self._call("search", request=request)

    def lookup(self, request: LookupRequest) -> LookupReply:
        return self._call("lookup", request=request)

    def close(self) -> None:
        """Send ``stop`` (the child drops what it created and exits), then make sure it is gone."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            child, self._child = self._child, None
            if child is None:
                return
            try:
                if child.alive():
                    self._exchange(child, "stop", {}, timeout=min(self.timeout, 30.0))
            except Exception:
                pass  # closing must not raise over the run's real result
            finally:
                child.finish(_STOP_GRACE)

    # -- machinery ---------------------------------------------------------------------------------

    def _call(self, operation: str, **fields: Any) -> Any:
        with self._lock:
            if self._closed:
                raise ImplementationProcessError(self.rqs_name, operation, "the adapter was closed")
            if self._dead is not None:
                raise ImplementationProcessError(self.rqs_name, operation, self._dead)
            if self._child is None:
                self._restart(operation)
            assert self._child is not None
            try:
                result = self._exchange(self._child, operation, fields, timeout=self.timeout)
            except (NotApplicable, AdapterCallError):
                self._failures = 0  # a clear answer: the process is fine
                raise
            # Only an answered call counts as recovery; a restart's handshake alone does not.
            self._failures = 0
            return result

    def _exchange(
        self, child: ChildProcess, operation: str, fields: dict[str, Any], *, timeout: float
    ) -> Any:
        """Send one request and return its ``result``; every failure becomes the call's error."""
        self._seq += 1
        seq = self._seq
        line = self._codec.encode(operation, seq, fields)
        try:
            child.send(line)
            reply = self._read_reply(child, operation, seq, timeout)
        except ProcessGoneError as gone:
            self._lost(child)
            raise self._process_error(
                child, operation, f"the process exited (code {gone.returncode}) before replying", "exited"
            ) from None
        except ReplyTimeoutError:
            self._lost(child)
            raise self._process_error(
                child,
                operation,
                f"no reply within {timeout:g} s; the process was "
                "killed (raise --adapter-timeout if it is just slow)",
                "timeout",
            ) from None
        except InvalidReplyError:
            self._lost(child)  # the stream may be out of step now: start afresh for the next call
            raise
        if isinstance(reply, RemoteError):
            raise AdapterCallError(self.rqs_name, operation, reply)
        return reply

    def _read_reply(self, child: ChildProcess, operation: str, seq: int, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            line = child.receive(deadline - time.monotonic())
            decoded = self._codec.decode(self.rqs_name, operation, seq, line)
            if decoded is not Codec.STALE:
                return decoded

    def _lost(self, child: ChildProcess) -> None:
        child.kill()
        if self._child is child:
            self._child = None
        self._failures += 1
        if self._failures >= _MAX_FAILURES_IN_A_ROW:
            self._dead = (
                f"the implementation failed {self._failures} calls in a row (crash, hang or unreadable "
                "reply); the kit stopped restarting it. Fix the failure reported first"
            )

    def _process_error(
        self, child: ChildProcess, operation: str, detail: str, problem: str
    ) -> ImplementationProcessError:
        tail = self._codec.scrub(child.stderr_tail())
        error = ImplementationProcessError(self.rqs_name, operation, detail, tail)
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
        """Once per failure: a fresh child, the handshake and the last ``prepare`` again."""
        try:
            self._spawn()
            if self._prepared is not None:
                endpoint, corpus = self._prepared
                assert self._child is not None
                self._exchange(
                    self._child, "prepare", {"endpoint": endpoint, "corpus": corpus}, timeout=self.timeout
                )
        except (ImplementationProcessError, InvalidReplyError, AdapterCallError) as exc:
            self._dead = f"it failed earlier and restarting it failed too: {exc}"
            raise ImplementationProcessError(self.rqs_name, operation, self._dead) from None


def _kit_version() -> str:
    from .._recorder import kit_version

    return kit_version()
