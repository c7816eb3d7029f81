"""The store's engine errors: what the store was doing, on which collection, with no secret in them."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from .._errors import (
    EngineFeatureError,
    EngineTimeoutError,
    RetrievalQualityError,
    StoreError,
)

__all__ = ["describe", "engine_errors", "not_loaded", "redact_uri", "scrub", "uri_secrets"]

# Query parameters of a URI that hold a secret: their values are never shown.
_SECRET_PARAMS = r"token|password|passwd|secret|api_key|apikey"


class engine_errors:  # noqa: N801 - used as a context manager, named like one made by contextmanager
    """Turn engine failures into :class:`StoreError` saying what the store was doing, and where.

    An engine that does not implement the call at all (gRPC ``UNIMPLEMENTED``) raises
    :class:`EngineFeatureError` naming ``feature`` when one is given. A class rather than a generator:
    it wraps every search, and entering and leaving it costs a fraction of a generator's.
    """

    __slots__ = ("collection", "deadline", "engine_version", "feature", "secrets", "what")

    def __init__(
        self,
        what: str,
        *,
        collection: str,
        secrets: tuple[str, ...] = (),
        feature: str | None = None,
        engine_version: Callable[[], str | None] = lambda: None,
        deadline: float | None = None,
    ) -> None:
        self.what, self.collection, self.secrets = what, collection, secrets
        self.feature, self.engine_version, self.deadline = feature, engine_version, deadline

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, RetrievalQualityError) or not isinstance(exc, Exception):
            return  # nothing happened, or ours (already says what), or not an error at all
        import grpc
        from pymilvus.exceptions import MilvusException

        what, collection = self.what, self.collection
        if _timed_out(exc):
            waited = "its deadline" if self.deadline is None else f"{self.deadline:g} s"
            raise EngineTimeoutError(
                f"Milvus did not answer within {waited} when asked to {what} (collection {collection!r}); "
                "the engine may be frozen, overloaded or restarting: retry later (the store reconnects "
                "by itself), or raise milvus.deadline-seconds (env MILVUS_DEADLINE_SECONDS)",
                operation=what,
                deadline_seconds=self.deadline if self.deadline is not None else float("nan"),
            ) from None  # grpc's debug string adds nothing the caller can act on
        if self.feature is not None and isinstance(exc, grpc.RpcError) and _unimplemented(exc):
            raise EngineFeatureError(
                f"Milvus could not {what} (collection {collection!r}): the engine does not "
                f"implement {self.feature}; use search mode 'dense' here, or Milvus 2.5 or later",
                feature=self.feature,
                engine_version=self.engine_version(),
            ) from exc
        if not isinstance(exc, MilvusException | grpc.RpcError | ConnectionError | OSError):
            return  # a bug, not an engine failure: keep its type and traceback
        reason = scrub(describe(exc), self.secrets)
        if _disk_full(exc, reason):
            raise StoreError(
                f"Milvus could not {what} (collection {collection!r}): the disk where the engine keeps its "
                "data is full (no space left on device); free space there, then run the same ingest again "
                "(the documents it did not commit still answer from their old version)"
            ) from None  # the engine's traceback says nothing more
        raise StoreError(
            f"Milvus could not {what} (collection {collection!r}): "
            f"{reason}; check that the engine is up and the collection "
            "was created by this store"
        ) from exc


def _timed_out(exc: BaseException) -> bool:
    """A missed deadline, as grpc raises it or as pymilvus words it (its waits for a load)."""
    if isinstance(exc, TimeoutError):
        return True
    code = getattr(exc, "code", None)
    if callable(code) and getattr(code(), "name", None) == "DEADLINE_EXCEEDED":
        return True
    message = describe(exc).lower()
    return "deadline exceeded" in message or ("timeout" in message and "wait for" in message)


def _disk_full(exc: BaseException, reason: str) -> bool:
    return getattr(exc, "errno", None) == errno.ENOSPC or "no space left on device" in reason.lower()


def not_loaded(exc: BaseException | None) -> bool:
    """The engine has the collection but not loaded: what a restarted engine answers at first."""
    if exc is None:
        return False
    message = describe(exc).lower()
    return getattr(exc, "code", None) == 101 or "not loaded" in message or "state 'released'" in message


def _unimplemented(exc: Any) -> bool:
    code = getattr(exc, "code", None)
    return callable(code) and getattr(code(), "name", None) == "UNIMPLEMENTED"


def redact_uri(uri: str) -> str:
    """The URI with any ``user:password@`` part replaced by ``***@``, with or without a scheme, and the
    value of any secret query parameter (``?token=...``, ``password=``) by ``***``."""
    shown = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/@?#]*@", r"\1***@", uri)
    return re.sub(rf"([?&;](?:{_SECRET_PARAMS})=)[^&;#]*", r"\1***", shown, flags=re.IGNORECASE)


def uri_secrets(uri: str, token: str | None = None) -> tuple[str, ...]:
    """Every secret of a connection, to scrub from messages: the token, and the URI's password and
    secret query parameters, as written and percent-decoded; the longest first."""
    found = {token} if token else set()
    try:
        password = urlsplit(uri if "://" in uri else f"//{uri}").password
    except ValueError:  # a port that is no number: the URI is refused later, say nothing of it here
        password = None
    if password:
        found |= {password, unquote(password)}
    for match in re.finditer(rf"[?&;](?:{_SECRET_PARAMS})=([^&;#]*)", uri, flags=re.IGNORECASE):
        if match.group(1):
            found |= {match.group(1), unquote(match.group(1))}
    return tuple(sorted(found, key=len, reverse=True))


def describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(message)


def scrub(text: str, secrets: str | tuple[str, ...] | None) -> str:
    """``text`` with every secret replaced by ``***``."""
    for secret in (secrets,) if isinstance(secrets, str) else secrets or ():
        if secret:
            text = text.replace(secret, "***")
    return text
