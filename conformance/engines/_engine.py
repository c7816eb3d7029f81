"""The :class:`Engine` handle every backend returns: endpoint, per-run prefix, raw client, cleanup.

pymilvus is imported lazily (inside :meth:`Engine.client`) so that importing the kit stays cheap.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import re
import secrets
import signal
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from ..boundary._errors import EngineError
from ..boundary._protocol import MilvusEndpoint
from ..boundary._redact import redact_uri, scrub
from ._deadline import abandon, abandoned, bounded_client, forgive
from ._lease import Lease

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = [
    "PROBE_SECONDS",
    "DockerUnavailableError",
    "Engine",
    "EngineUnavailableError",
    "make_prefix",
    "open_client",
]

PREFIX_ROOT = "rqs_"
# A health probe waits this long for the engine's answer: a live engine lists its collections in
# milliseconds, and a run that lost its engine should say so in seconds.
PROBE_SECONDS = 5.0
# After a signal, how long the engine has to answer before the way out gives up on it: not stretched, as
# a signal must end a command within seconds (what a silent engine holds is left for `clean`).
PROBE_AFTER_SIGNAL = 1.0
MAX_NAME = 255  # Milvus collection-name limit
_RUN_ID = re.compile(r"[A-Za-z0-9]{1,32}")
_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")


class EngineUnavailableError(EngineError):
    """The engine could not be started or reached (process died, timeout, nothing listening)."""


class PortTakenError(EngineUnavailableError):
    """Another process listens on the port the kit found free, before the kit's server could bind it: a
    start on a port of its own choosing tries another (``_ports``)."""


class DockerUnavailableError(EngineUnavailableError):
    """The ``container`` backend was asked for but no Docker engine is reachable."""


def make_prefix(run_id: str | None = None) -> str:
    """``rqs_<run id>_``; a random 8-hex run id when none is given.

    Run ids are letters and digits only: with no ``_`` inside, no run's prefix can be a prefix of
    another run's, so one run's cleanup can never match another run's collections.
    """
    if run_id is None:
        run_id = secrets.token_hex(4)
    if not _RUN_ID.fullmatch(run_id):
        raise EngineError(
            f"invalid run_id {run_id!r}: use 1 to 32 letters or digits (no '_' or '-'), "
            "or pass none to get a random one"
        )
    return f"{PREFIX_ROOT}{run_id}_"


def open_client(endpoint: MilvusEndpoint, timeout: float) -> MilvusClient:
    """Connect a pymilvus client to ``endpoint``; :class:`EngineUnavailableError` if that fails.

    ``timeout`` bounds the connection; every call of the client is then bounded by the kit's engine-call
    deadline (:mod:`._deadline`) unless its caller passes a ``timeout`` of its own.
    """
    from pymilvus import MilvusClient  # lazy: keep `import conformance.engines` cheap

    # pymilvus logs every failed call at ERROR with its traceback, on the terminal: a frozen engine put
    # twenty of them above the verdict. The kit says what an engine did in its own words (one line each).
    # grpc's server logs a handler's exception the same way (the recording proxy's, on a frozen engine).
    for name in ("pymilvus", "grpc._server"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    token = endpoint.token.get_secret_value() if endpoint.token else ""
    try:
        client = MilvusClient(uri=endpoint.uri, token=token, db_name=endpoint.db_name or "", timeout=timeout)
        return cast("MilvusClient", bounded_client(client, endpoint.uri))
    except Exception as exc:  # pymilvus raises MilvusException or grpc errors; all mean "not reachable"
        raise EngineUnavailableError(
            scrub(
                f"cannot connect to Milvus at {redact_uri(endpoint.uri)} within {timeout:g} s "
                f"({type(exc).__name__}: {exc}); check that the server is running and reachable "
                "from this machine, and that MILVUS_TOKEN and MILVUS_DB are right for it",
                token,
            )
        ) from None  # the cause may carry connection params; the message already says what failed


class Engine:
    """A Milvus engine the kit started or reached, with a per-run collection prefix.

    Use it as a context manager, or call :meth:`close`. Every collection the run creates must be named
    with :meth:`collection_name`; :meth:`cleanup` drops exactly those and nothing else.
    """

    def __init__(
        self,
        *,
        backend: str,
        endpoint: MilvusEndpoint,
        version: str,
        client: MilvusClient | None = None,
        stop: Callable[[], None] | None = None,
        disposable: bool = False,
        timeout: float = 10.0,
        pid: int | None = None,
        startup_seconds: float = 0.0,
        fixed_version: bool = False,
        log_tail: Callable[[], str] | None = None,
    ) -> None:
        self.backend = backend
        self.endpoint = endpoint
        self.prefix = endpoint.collection_prefix
        self.pid = pid  # the server process this engine started, if any (lite)
        self.startup_seconds = startup_seconds  # from start_engine() to the first successful call
        self._version = version
        self._fixed_version = fixed_version  # the engine has no GetVersion: keep the one given
        self._client = client
        self._stop = stop
        self._disposable = disposable
        self._log_tail = log_tail  # the last lines of the server's log, while the kit keeps it
        self._timeout = timeout
        self._closed = False
        self._closing = False
        self._lock = threading.Lock()
        # Marks this run's collections as a live run's, so another command's clean leaves them alone.
        self._lease = Lease(self.prefix, self.redacted_uri)
        _register(self)

    def __repr__(self) -> str:
        return f"Engine(backend={self.backend!r}, uri={self.redacted_uri!r}, prefix={self.prefix!r})"

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, KeyboardInterrupt):
            self.after_interrupt()
        try:
            self.close()
        except EngineError as cleanup:
            if exc is None:
                raise
            exc.add_note(str(cleanup))  # what the cleanup could not do never hides why the command ends

    def after_interrupt(self, seconds: float = PROBE_AFTER_SIGNAL) -> None:
        """After a signal: one brief probe, and an engine that does not answer it is given up on, so that
        the way out (closing clients, dropping collections) fails at once instead of waiting each call's
        deadline; its collections stay for ``rag-conformance clean``."""
        if self._closed or self.abandoned:
            return
        try:
            self.check_reachable(timeout=seconds)
        except EngineError:
            self.abandon(f"it did not answer a {seconds:g} s probe after the signal")

    @property
    def redacted_uri(self) -> str:
        """The endpoint URI with credentials hidden: safe to print."""
        return redact_uri(self.endpoint.uri)

    @property
    def disposable(self) -> bool:
        """Whether stopping this engine loses all its data (a lite server on a temporary dir, a
        container): nothing a run leaves on it can outlive it."""
        return self._disposable

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._closed

    def server_log_tail(self) -> str | None:
        """The last lines of the log of the server the kit started for this engine (Lite, a local
        server), read before :meth:`close` removes it with the server's work dir; None for an engine
        reached by URI or run in a container (its log is the operator's, or Docker's)."""
        return self._log_tail() if self._log_tail is not None else None

    def collection_name(self, suffix: str) -> str:
        """``prefix + suffix`` with every character Milvus rejects replaced by ``_``.

        Different suffixes can map to one name ("a-b", "a_b"): pick suffixes from letters, digits, "_".
        """
        clean = _NOT_NAME_CHAR.sub("_", suffix)
        if not clean:
            raise EngineError("collection_name() needs a non-empty suffix")
        name = self.prefix + clean
        if len(name) > MAX_NAME:
            raise EngineError(
                f"collection name {name[:40]}... is {len(name)} characters; Milvus allows {MAX_NAME}: "
                "use a shorter suffix"
            )
        return name

    def client(self) -> MilvusClient:
        """The kit's own raw pymilvus client for this engine (created once, then reused)."""
        if self._closed:
            raise EngineError(f"engine {self!r} is closed; start a new one with start_engine()")
        with self._lock:
            if self._client is None:
                self._client = open_client(self.endpoint, self._timeout)
            return self._client

    def server_version(self) -> str:
        """The server's version string, e.g. ``milvus_lite-3.2.2`` or ``v2.5.16``."""
        if not self._closed and not self._fixed_version:
            self._version = str(self.client().get_server_version())
        return self._version

    def check_reachable(self, *, timeout: float = PROBE_SECONDS) -> None:
        """One short call (list collections) through the kit's own client, bounded by ``timeout``.

        :class:`EngineUnavailableError` when the engine does not answer it: the kit cannot reach it.
        """
        try:
            self.client().list_collections(timeout=timeout)
        except Exception as exc:  # grpc, pymilvus or our own closed-engine error: no answer either way
            raise EngineUnavailableError(
                self._scrub(
                    f"Milvus at {self.redacted_uri} did not answer the kit's own client (list "
                    f"collections, timeout {timeout:g} s): {_error_text(exc)}"
                )
            ) from None

    def abandon(self, why: str = "it stopped answering") -> None:
        """Give up on this engine (it stopped answering): every later call of the kit's clients to it fails
        at once, and :meth:`close` leaves its collections (``rag-conformance clean`` lists them) instead of
        waiting on an engine that will not answer."""
        abandon(self.endpoint.uri, why)

    @property
    def abandoned(self) -> bool:
        """Whether :meth:`abandon` was called (by this run or another engine handle on the same address)."""
        return abandoned(self.endpoint.uri)

    def describe(self) -> dict[str, Any]:
        """Backend, redacted URI, server version and prefix, for reports. Never the token."""
        return {
            "backend": self.backend,
            "uri": self.redacted_uri,
            "version": self._version,
            "prefix": self.prefix,
        }

    def cleanup(self, *, timeout: float | None = None) -> list[str]:
        """Drop every collection whose name starts with :attr:`prefix`; return the names dropped.

        ``timeout`` bounds each call (seconds); by default, the client's own timeout.
        """
        client = self.client()
        bound = {} if timeout is None else {"timeout": timeout}
        try:
            names = sorted(n for n in client.list_collections(**bound) if n.startswith(self.prefix))
        except Exception as exc:
            raise self._cleanup_error("list collections", exc) from None
        dropped: list[str] = []
        failures: list[str] = []
        for name in names:
            try:
                _drop(client, name, bound)
                dropped.append(name)
            except Exception as exc:
                failures.append(f"{name} ({_error_text(exc)})")
        if failures:
            raise EngineError(
                self._scrub(
                    f"cleanup on {self.redacted_uri} dropped {len(dropped)} collection(s) but could not "
                    f"drop: {'; '.join(failures)}; drop them by hand (they start with {self.prefix!r})"
                )
            )
        return dropped

    def close(self, *, timeout: float | None = None) -> None:
        """:meth:`cleanup`, then stop whatever this engine started. Safe to call more than once.

        ``timeout`` bounds each call of the cleanup, e.g. when the engine may be gone.

        A disposable engine (a lite server on a temporary dir, a container) loses all its data when
        stopped, so its separate cleanup is skipped: the outcome is the same, and a server that has
        already crashed does not turn ``close()`` into a second, misleading error.
        """
        with self._lock:
            if self._closed or self._closing:
                return
            self._closing = True
        try:
            if not self._disposable and not self.abandoned:
                self.cleanup(timeout=timeout)
        finally:
            self._closed = True
            self._lease.release()
            _unregister(self)
            client, self._client = self._client, None
            if client is not None:
                with contextlib.suppress(Exception):  # closing a client to a dead server must not mask
                    client.close()
            try:
                if self._stop is not None:
                    self._stop()
            finally:
                forgive(self.endpoint.uri)  # this run is over: a later one asks the engine afresh

    def shut_down(self) -> None:
        """Stop the engine and keep every collection, this run's too: the first half of an in-place
        upgrade, where the next engine opens what this one wrote. The data stays wherever the engine
        keeps it (a data dir the caller gave); an engine on a temporary dir loses it all the same."""
        with self._lock:
            if self._closed or self._closing:
                return
            self._closing = True
        self._closed = True
        self._lease.release()
        _unregister(self)
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        if self._stop is not None:
            self._stop()

    def _scrub(self, message: str) -> str:
        return scrub(message, self.endpoint.token.get_secret_value() if self.endpoint.token else None)

    def _cleanup_error(self, what: str, exc: BaseException) -> EngineError:
        return EngineError(
            self._scrub(
                f"cleanup could not {what} on {self.redacted_uri} ({_error_text(exc)}); "
                f"collections starting with {self.prefix!r} may remain: drop them by hand"
            )
        )


def _error_text(exc: BaseException) -> str:
    """``Type: message``, the message's first line; pymilvus's own str() wraps its message in its repr."""
    text = str(getattr(exc, "message", None) or exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no detail'}"


def _drop(client: MilvusClient, name: str, bound: dict[str, float]) -> None:
    try:
        client.drop_collection(name, **bound)
    except Exception:
        # The server refuses to drop a collection that still has aliases; they point at our own
        # collection, so removing them is part of dropping it.
        for alias in client.list_aliases(collection_name=name, **bound).get("aliases", []):
            client.drop_alias(alias, **bound)
        client.drop_collection(name, **bound)


# -- safety net: close engines left open by a crash, an interrupt or a forgotten close() ------------

_live: set[Engine] = set()
_live_lock = threading.Lock()
_hooks_installed = False


def _register(engine: Engine) -> None:
    global _hooks_installed
    with _live_lock:
        _live.add(engine)
        if not _hooks_installed:
            _hooks_installed = True
            atexit.register(_close_all)
            _convert_sigterm()


def _unregister(engine: Engine) -> None:
    with _live_lock:
        _live.discard(engine)


def _close_all() -> None:
    with _live_lock:
        engines = list(_live)
    for engine in engines:
        with contextlib.suppress(Exception):  # at exit, do the best possible for every engine
            engine.close()


def _convert_sigterm() -> None:
    # SIGTERM's default action skips atexit, finally blocks and context managers, which would leave
    # prefixed collections on a shared server. Turn it into KeyboardInterrupt, but only if nobody else
    # has claimed the signal and we are on the main thread (the only place handlers can be set).
    # KeyboardInterrupt rather than SystemExit: pytest records a SystemExit raised inside a scenario as
    # that scenario's failure and carries on, while an interrupt stops the session and runs teardown.
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def _interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, _interrupt)
