"""Every error the reference raises derives from :class:`RetrievalQualityError`.

The classes deliberately do not derive from :class:`ValueError`: pydantic would wrap a ``ValueError``
raised in a validator into its own ``ValidationError`` and the caller would lose the type.
"""

from __future__ import annotations

__all__ = [
    "EmptyIngestError",
    "EngineFeatureError",
    "EngineTimeoutError",
    "IngestError",
    "InvalidCandidateError",
    "InvalidEvidenceIdError",
    "InvalidLimitError",
    "InvalidMaxL2DistanceError",
    "InvalidQueryError",
    "InvalidRankError",
    "InvalidScoreError",
    "InvalidSettingError",
    "InvalidThresholdError",
    "MilvusUnavailableError",
    "RetrievalQualityError",
    "StoreError",
    "UnknownScoreLabelError",
    "VectorDimensionError",
]


class RetrievalQualityError(Exception):
    """Root of every error raised by the reference implementation."""


class UnknownScoreLabelError(RetrievalQualityError):
    """A ``scoreLabel`` that is neither canonical nor a known legacy alias."""

    def __init__(self, label: object, accepted: tuple[str, ...], *, candidate: str | None = None) -> None:
        self.label = label
        self.accepted = accepted
        self.candidate = candidate
        where = f"candidate {candidate}: " if candidate else ""
        super().__init__(
            f"{where}unknown scoreLabel {label!r}: accepted labels are {', '.join(accepted)}; "
            "fix the emitter or map the label before post-processing"
        )


class InvalidCandidateError(RetrievalQualityError):
    """A retrieval candidate that the normalizer or post-processor cannot accept."""

    def __init__(self, message: str, *, candidate: str | None = None) -> None:
        self.candidate = candidate
        where = f"candidate {candidate}: " if candidate else ""
        super().__init__(where + message)


class InvalidScoreError(InvalidCandidateError):
    """NaN or infinite score, or a distance that is negative beyond float rounding."""


class InvalidRankError(InvalidCandidateError):
    """``originalRank`` below 1, or a batch size below 1."""


class InvalidEvidenceIdError(InvalidCandidateError):
    """Empty ``docId`` or negative ``chunkIndex``: the evidence key would be meaningless."""


class InvalidSettingError(RetrievalQualityError):
    """A setting whose value the reference cannot work with."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"setting {key}: {message}")


class InvalidMaxL2DistanceError(InvalidSettingError):
    """``maxL2Distance`` that is not a finite number above 0."""


class InvalidThresholdError(InvalidSettingError):
    """A threshold outside [0, 1], or highly-relevant below the reference threshold."""


class InvalidLimitError(InvalidSettingError):
    """``rag.return-n``, ``rag.max-chunks-per-document`` or ``rag.retrieve-k`` below 1."""


class StoreError(RetrievalQualityError):
    """The Milvus store could not do what was asked."""


class InvalidQueryError(StoreError):
    """A query the store cannot run: wrong vector dimension, non-finite vector or unknown mode."""


class EngineFeatureError(StoreError):
    """The connected engine lacks a feature the request needs (e.g. BM25 for hybrid mode on Milvus 2.3).

    ``feature`` names it (``"bm25"``, ``"hybrid_search"``); ``engine_version`` is the server's version
    where the engine reports one.
    """

    def __init__(self, message: str, *, feature: str, engine_version: str | None = None) -> None:
        self.feature = feature
        self.engine_version = engine_version
        super().__init__(message)


class EngineTimeoutError(StoreError):
    """The engine did not answer one call within the store's deadline (``milvus.deadline-seconds``).

    ``operation`` says what the store was doing, ``deadline_seconds`` how long it waited. The engine may
    be frozen, overloaded or restarting; the store is still usable, and its next call tries again.
    """

    def __init__(self, message: str, *, operation: str, deadline_seconds: float) -> None:
        self.operation = operation
        self.deadline_seconds = deadline_seconds
        super().__init__(message)


class MilvusUnavailableError(StoreError):
    """Milvus could not be reached (the message names the URI, never the token)."""


class IngestError(StoreError):
    """A chunk that cannot be ingested; the message names the source line when there is one."""

    def __init__(self, message: str, *, line: int | None = None, source: str | None = None) -> None:
        self.line = line
        self.source = source
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)


class VectorDimensionError(IngestError):
    """A vector whose dimension differs from the collection's."""


class EmptyIngestError(IngestError):
    """An ingest source with no chunks in it."""
