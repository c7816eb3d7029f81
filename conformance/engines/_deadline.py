"""A deadline on every call the kit makes to Milvus, and giving up on an engine that stopped answering.

pymilvus waits for ever by default (and retries an unavailable engine for minutes): a Milvus that stops
answering (frozen, swapped out, cut off by a firewall that drops packets) would hang a run with no
report. So every method of the kit's own client (:func:`bounded_client`, made by
:func:`~conformance.engines._engine.open_client`) gets ``timeout=`` :func:`call_deadline` unless the
caller gave one, and the recording proxy forwards an implementation's call with the same deadline. A
call past it raises :class:`~conformance.boundary.EngineDeadlineError`, naming the engine, the call and
the deadline.

The deadline is :data:`ENGINE_CALL_SECONDS` (or ``RQS_ENGINE_CALL_SECONDS``), stretched with the
machine's load as the kit's other waits are (:mod:`._load`): an engine that is merely slow on a busy CI
runner is not taken for a frozen one.

Once a run knows its engine is gone (lost midway, or not answering a short probe after a signal), it
*abandons* the engine's address (:func:`abandon`): from then on every call of the kit's clients to it
fails at once, so closing the run (dropping its collections, closing the implementation) never waits on
an engine that will not answer. What the run made there is left for ``rag-conformance clean``.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..boundary._errors import EngineDeadlineError, EngineError
from ..boundary._redact import redact_uri
from ._load import load_stretch

__all__ = [
    "CALL_SECONDS_ENV",
    "ENGINE_CALL_SECONDS",
    "PROBE_SECONDS",
    "abandon",
    "abandoned",
    "abandoned_why",
    "bounded_client",
    "call_deadline",
    "call_seconds",
    "forgive",
]

ENGINE_CALL_SECONDS = 30.0
"""The base deadline of one engine call: a corpus insert or a collection load on a loaded server takes
seconds; thirty without an answer is an engine that stopped answering."""
CALL_SECONDS_ENV = "RQS_ENGINE_CALL_SECONDS"
PROBE_SECONDS = 5.0
"""After a call past its deadline, how long the engine has to answer one short question (list its
collections) before the kit gives up on it."""
# A timed-out call returns at its deadline; one that took at least this share of it is taken for one.
_NEAR_DEADLINE = 0.95

_abandoned: dict[str, str] = {}  # address -> why the kit gave up on it
_abandoned_lock = threading.Lock()


def call_seconds() -> float:
    """The base deadline: ``RQS_ENGINE_CALL_SECONDS`` if set, else :data:`ENGINE_CALL_SECONDS`."""
    raw = os.environ.get(CALL_SECONDS_ENV, "").strip()
    if not raw:
        return ENGINE_CALL_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise EngineError(
            f"{CALL_SECONDS_ENV}={raw!r} is not a number of seconds above 0; unset it for the default "
            f"({ENGINE_CALL_SECONDS:g} s) or give e.g. {CALL_SECONDS_ENV}=60"
        )
    return seconds


def call_deadline() -> float:
    """How long one engine call may take now: the base deadline, stretched with the machine's load."""
    return call_seconds() * load_stretch()


def abandon(uri: str, why: str = "it stopped answering") -> None:
    """Stop waiting on the engine at ``uri`` (``why``: what it did not answer): every later call of the
    kit's clients to it fails at once, saying why."""
    with _abandoned_lock:
        _abandoned.setdefault(uri, why)


def abandoned_why(uri: str) -> str | None:
    """Why the engine at ``uri`` was given up on, or None if it was not."""
    with _abandoned_lock:
        return _abandoned.get(uri)


def forgive(uri: str) -> None:
    """Forget that the engine at ``uri`` was given up on: the run that gave up has closed it, and a later
    run in this process (the mutation matrix runs a hundred on one engine) asks it afresh."""
    with _abandoned_lock:
        _abandoned.pop(uri, None)


def abandoned(uri: str) -> bool:
    """Whether the engine at ``uri`` was given up on (see :func:`abandon`)."""
    with _abandoned_lock:
        return uri in _abandoned


def bounded_client(client: Any, uri: str) -> Any:
    """``client`` (a pymilvus ``MilvusClient``) with a deadline on every call that takes ``timeout``."""
    return _BoundedClient(client, uri)


class _BoundedClient:
    """Every method of the wrapped client, with ``timeout=call_deadline()`` when the caller gave none."""

    def __init__(self, client: Any, uri: str) -> None:
        self._client = client
        self._uri = uri

    def __repr__(self) -> str:
        return f"bounded_client({self._client!r}, {redact_uri(self._uri)!r})"

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name.startswith("_") or not callable(attr) or not _takes_timeout(type(self._client), name):
            return attr
        return functools.partial(self._call, name, attr)

    def _call(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        where = redact_uri(self._uri)
        why = abandoned_why(self._uri)
        if why is not None:
            raise EngineDeadlineError(
                f"Milvus at {where} was given up on ({why}): the kit's {name} was not sent",
                engine=where,
                call=name,
            )
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = call_deadline()
        timeout = float(kwargs["timeout"])
        started = time.monotonic()
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            waited = time.monotonic() - started
            if waited < timeout * _NEAR_DEADLINE and "DEADLINE_EXCEEDED" not in repr(exc):
                raise  # the engine answered (an error): the caller's business
            if name != "list_collections" or timeout > PROBE_SECONDS:  # else it was the probe itself
                self._probe(f"the kit's {name} got no answer within {timeout:.0f} s")
            raise EngineDeadlineError(
                f"Milvus at {where} did not answer the kit's {name} within its deadline of {timeout:.0f} s "
                f"(the engine is frozen, overloaded or cut off; {CALL_SECONDS_ENV} sets the base deadline, "
                f"{call_seconds():g} s, stretched with the machine's load)",
                engine=where,
                call=name,
            ) from None

    def _probe(self, late: str) -> None:
        """After a late call: one short question; an engine that does not answer it either is given up
        on, so that what asks again (a property's replays, a teardown) fails at once, not one deadline
        each."""
        try:
            self._client.list_collections(timeout=PROBE_SECONDS)
        except Exception:
            abandon(self._uri, f"{late}, nor its collection list within {PROBE_SECONDS:g} s")


# Methods that take ``timeout`` through ``**kwargs`` only (pymilvus passes it on to the call).
_KWARGS_TIMEOUT = frozenset({"list_collections", "list_indexes", "describe_database"})


@functools.cache
def _takes_timeout(cls: type, name: str) -> bool:
    if name in _KWARGS_TIMEOUT:
        return True
    try:
        parameters = inspect.signature(getattr(cls, name)).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return "timeout" in parameters
