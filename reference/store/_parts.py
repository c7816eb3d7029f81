"""What the store's halves (``_writes``: ingest and delete; ``_collection``: create and check) read of the
store they serve: a Protocol, so that neither imports :mod:`._store`, which imports them both."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from ._features import EngineFeatures

__all__ = ["StoreParts"]

_T = TypeVar("_T")


class StoreParts(Protocol):
    """The store's client, collection and settings, and its guarded engine calls."""

    client: Any
    collection: str
    dim: int
    index_type: str
    _features: EngineFeatures | None
    _absent: str | None
    _secrets: tuple[str, ...]

    @property
    def deadline_seconds(self) -> float: ...

    def _call(self, what: str, call: Callable[[], _T], *, feature: str | None = None) -> _T: ...

    def _engine(self, what: str, *, feature: str | None = None) -> AbstractContextManager[None]: ...

    def _collection_exists(self) -> bool: ...

    def _open_for_writes(self) -> bool: ...
