"""The store's engine errors: what the store was doing, on which collection, with no secret in them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._errors import EngineFeatureError, RetrievalQualityError, StoreError

__all__ = ["describe", "engine_errors", "redact_uri", "scrub"]


class engine_errors:  # noqa: N801 - used as a context manager, named like one made by contextmanager
    """Turn engine failures into :class:`StoreError` saying what the store was doing, and where.

    An engine that does not implement the call at all (gRPC ``UNIMPLEMENTED``) raises
    :class:`EngineFeatureError` naming ``feature`` when one is given. A class rather than a generator:
    it wraps every search, and entering and leaving it costs a fraction of a generator's.
    """

    __slots__ = ("collection", "engine_version", "feature", "secret", "what")

    def __init__(
        self,
        what: str,
        *,
        collection: str,
        secret: str | None,
        feature: str | None = None,
        engine_version: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.what, self.collection, self.secret = what, collection, secret
        self.feature, self.engine_version = feature, engine_version

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, RetrievalQualityError) or not isinstance(exc, Exception):
            return  # nothing happened, or ours (already says what), or not an error at all
        import grpc
        from pymilvus.exceptions import MilvusException

        what, collection = self.what, self.collection
        if self.feature is not None and isinstance(exc, grpc.RpcError) and _unimplemented(exc):
            raise EngineFeatureError(
                f"Milvus could not {what} (collection {collection!r}): the engine does not "
                f"implement {self.feature}; use search mode 'dense' here, or Milvus 2.5 or later",
                feature=self.feature,
                engine_version=self.engine_version(),
            ) from exc
        if not isinstance(exc, MilvusException | grpc.RpcError | ConnectionError | OSError):
            return  # a bug, not an engine failure: keep its type and traceback
        raise StoreError(
            f"Milvus could not {what} (collection {collection!r}): "
            f"{scrub(describe(exc), self.secret)}; check that the engine is up and the collection "
            "was created by this store"
        ) from exc


def _unimplemented(exc: Any) -> bool:
    code = getattr(exc, "code", None)
    return callable(code) and getattr(code(), "name", None) == "UNIMPLEMENTED"


def redact_uri(uri: str) -> str:
    """The URI with any ``user:password@`` part replaced by ``***@``, with or without a scheme."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/@]*@", r"\1***@", uri)


def describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(message)


def scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text
