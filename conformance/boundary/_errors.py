"""Errors of the conformance kit: one root, one subclass per phase.

Messages say what failed, where, and what to do. None of them ever carries a Milvus token.
"""

from __future__ import annotations

__all__ = [
    "AdapterCallError",
    "AdapterLoadError",
    "ConformanceError",
    "EngineAnswerError",
    "EngineError",
    "ImplementationProcessError",
    "InvalidReplyError",
]


class ConformanceError(Exception):
    """Root of every error raised by the kit."""


class AdapterLoadError(ConformanceError):
    """The adapter could not be imported, built, or does not satisfy the Implementation Protocol."""


class EngineError(ConformanceError):
    """A Milvus engine could not be started, reached or cleaned up."""


class EngineAnswerError(EngineError):
    """Milvus answered a call with an error (an error status or a gRPC failure), and again when the call
    was made a second time: the scenario cannot be judged, whoever made the call (the kit's oracle, or
    the implementation). Never a failure of the implementation."""


class AdapterCallError(ConformanceError):
    """The implementation raised while the kit asked it something. The scenario is ERRORED, not FAILED."""

    def __init__(self, adapter: str, operation: str, cause: BaseException) -> None:
        self.adapter = adapter
        self.operation = operation
        self.cause = cause
        super().__init__(
            f"adapter {adapter!r} raised {type(cause).__name__} in {operation}: {cause}; "
            "the implementation crashed instead of answering, fix it or declare fewer capabilities"
        )


class InvalidReplyError(ConformanceError):
    """The implementation answered with something that is not a valid reply for the operation."""

    def __init__(self, adapter: str, operation: str, detail: str) -> None:
        self.adapter = adapter
        self.operation = operation
        super().__init__(f"adapter {adapter!r} gave an invalid {operation} reply: {detail}")


class ImplementationProcessError(ConformanceError):
    """An out-of-process implementation died, hung or could not be (re)started during a call.

    Not an :class:`AdapterCallError`: steps may read a refusal to answer as a FAILED assertion, but a
    dead process says nothing about the spec, so the scenario must be ERRORED. ``stderr_tail`` is the
    end of what the process wrote to stderr, with any Milvus token already removed.
    """

    def __init__(self, adapter: str, operation: str, detail: str, stderr_tail: str = "") -> None:
        self.adapter = adapter
        self.operation = operation
        self.detail = detail
        self.stderr_tail = stderr_tail
        message = f"implementation {adapter!r} failed during {operation}: {detail}"
        if stderr_tail:
            message += f"\n--- last lines of its stderr ---\n{stderr_tail}"
        super().__init__(message)
