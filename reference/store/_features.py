"""What the connected Milvus engine supports, as the store found out from the engine itself.

Engines differ in what the reference's schema asks of them:

==================  ===============  =====================  ==========================================
engine              nullable fields  BM25 Function, hybrid  what the store does
==================  ===============  =====================  ==========================================
Milvus 2.5+, Lite   yes              yes                    the full schema (:mod:`reference.store._schema`)
3.x
Milvus Lite 2.5.1   no               yes                    absent ``category``/``sourceType`` stored as
                                                            :data:`~reference.store._schema.ABSENT`
Milvus 2.3          no               no                     dense mode only; hybrid raises
                                                            :class:`EngineFeatureError`
==================  ===============  =====================  ==========================================

The store learns this once, when it creates its collection: it offers the full schema and, where the
engine refuses it (or accepts it but drops a part of it, as Milvus 2.3 drops ``nullable``), the next
smaller one, keeping the engine's own words as the reason. A collection that already exists tells
by its schema. Nothing is inferred from version strings (Milvus Lite 2.5.1 has no ``GetVersion`` at
all); the version, where there is one, only names the engine in messages.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from .._errors import EngineFeatureError

__all__ = ["FEATURES", "EngineFeature", "EngineFeatures", "quiet_refusals"]

EngineFeature = Literal["nullable", "bm25"]
FEATURES: tuple[EngineFeature, ...] = ("nullable", "bm25")
# What each feature is, in words a user reads in an error.
_WHAT: dict[str, str] = {
    "nullable": "nullable fields",
    "bm25": "BM25 full-text search (a BM25 Function on the text field, searched in a hybrid_search)",
}


@dataclass(frozen=True)
class EngineFeatures:
    """The engine features the store's collection has, and why the missing ones are missing.

    ``version`` is the server's version string where the engine answers ``GetVersion``, else ``None``.
    ``missing`` maps each missing feature (``"nullable"``, ``"bm25"``) to what the engine said.
    """

    version: str | None
    missing: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def nullable(self) -> bool:
        """Whether ``category``/``sourceType`` are nullable (otherwise absent is stored as a sentinel)."""
        return "nullable" not in self.missing

    @property
    def bm25(self) -> bool:
        """Whether the collection has the BM25 Function, and so hybrid mode (dense + BM25, RRF)."""
        return "bm25" not in self.missing

    @property
    def keeps_writes_in_memory(self) -> bool:
        """Whether written rows stay unsealed in memory until asked: Milvus Lite (its version says so).

        Milvus Lite 3 keeps rows in memory up to 128 MB and rebuilds their BM25 index on every search:
        a hybrid search of 400 rows took 29 ms there, and 3 ms once the rows were sealed (a flush).
        The store seals after each ingest on Lite only: a Milvus server seals growing segments by
        itself, and limits flush calls (one per 10 s per collection from Milvus 2.4 on).
        """
        return (self.version or "").startswith("milvus_lite")

    @property
    def engine(self) -> str:
        """The engine as named in messages: its version, or that it gave none."""
        return f"engine {self.version}" if self.version else "the engine (it reports no version)"

    def require(self, feature: EngineFeature, purpose: str) -> None:
        """Raise :class:`EngineFeatureError` when ``feature`` is missing; ``purpose`` says who needs it."""
        reason = self.missing.get(feature)
        if reason is not None:
            raise EngineFeatureError(
                f"{purpose} needs {_WHAT[feature]}, which {self.engine} does not offer ({reason}); "
                "use search mode 'dense' here, or Milvus 2.5 or later (Milvus Lite 2.5+) for hybrid",
                feature=feature,
                engine_version=self.version,
            )


def server_version(client: Any, deadline: float | None = None) -> str | None:
    """``GetVersion``'s answer, or ``None`` where the engine does not implement it (Lite 2.5.1)."""
    with quiet_refusals():
        try:
            return str(client.get_server_version(timeout=deadline)) or None
        except Exception:  # UNIMPLEMENTED, or an engine that answers nothing useful: no version
            return None


class _DropRefusals(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


@contextmanager
def quiet_refusals() -> Iterator[None]:
    """Silence pymilvus's ERROR tracebacks while the store asks what the engine refuses.

    A refused schema is an answer here, not a failure; the store reports what it concluded instead.
    """
    logger = logging.getLogger("pymilvus.decorators")
    muted = _DropRefusals()
    logger.addFilter(muted)
    try:
        yield
    finally:
        logger.removeFilter(muted)
