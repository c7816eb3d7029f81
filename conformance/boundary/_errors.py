"""Errors of the conformance kit: one root, one subclass per phase.

Messages say what failed, where, and what to do. None of them ever carries a Milvus token.
"""

from __future__ import annotations

__all__ = [
    "AdapterCallError",
    "AdapterLoadError",
    "ConformanceError",
    "EngineAnswerError",
    "EngineDeadlineError",
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


class EngineDeadlineError(EngineError):
    """Milvus did not answer one of the kit's calls (``call``) within its deadline: the engine is frozen,
    overloaded or cut off. The scenario cannot be judged; never a failure of the implementation, and
    never asked again (a second wait would double the time a frozen engine costs)."""

    def __init__(self, message: str, *, engine: str = "", call: str = "") -> None:
        super().__init__(message)
        self.engine = engine
        self.call = call


class AdapterCallError(ConformanceError):
    """The implementation raised (in process) or replied with an error (over stdio) while the kit asked
    it something. The scenario is ERRORED, not FAILED.

    ``answered``: the program sent an error reply and kept serving (a stdio ``{"error": ...}``), which
    is no crash; the message says "answered an error". ``request`` names the call (its operation, seq
    and deciding fields) where the adapter knows it.
    """

    def __init__(
        self,
        adapter: str,
        operation: str,
        cause: BaseException,
        *,
        request: str | None = None,
        answered: bool = False,
    ) -> None:
        self.adapter = adapter
        self.operation = operation
        self.cause = cause
        self.request = request
        self.answered = answered
        asked = request or operation
        if answered:
            text = (
                f"implementation {adapter!r} answered an error to {asked}: {cause}; the request is valid, "
                "so answer it (or decline it with skipped, or declare fewer capabilities)"
            )
        else:
            text = (
                f"adapter {adapter!r} raised {type(cause).__name__} in {asked}: {cause}; "
                "the implementation raised instead of answering, fix it or declare fewer capabilities"
            )
        super().__init__(text)

    def what_happened(self) -> str:
        """The refusal in a few words, for a FAILED message: ``answered an error to search seq 4 (...):
        its message`` over stdio, ``raised ValueError: its message`` in process."""
        if self.answered:
            return f"answered an error to {self.request or self.operation}: {self.cause}"
        return f"raised {type(self.cause).__name__}: {self.cause}"


class InvalidReplyError(ConformanceError):
    """The implementation answered with something that is not a valid reply for the operation."""

    def __init__(
        self,
        adapter: str,
        operation: str,
        detail: str,
        *,
        request: str | None = None,
        numbers: tuple[tuple[str, object], ...] = (),
    ) -> None:
        self.adapter = adapter
        self.operation = operation
        self.detail = detail
        self.request = request
        # Fields holding text where the protocol has a number (path, value): the reply's only fault, so
        # the judge can fail it under the requirement whose value it is (wrong_number_types).
        self.numbers = numbers
        super().__init__(f"adapter {adapter!r} gave an invalid {request or operation} reply: {detail}")


class ImplementationProcessError(ConformanceError):
    """An out-of-process implementation died, hung or could not be (re)started during a call.

    Not an :class:`AdapterCallError`: steps may read a refusal to answer as a FAILED assertion, but a
    dead process says nothing about the spec, so the scenario must be ERRORED. ``stderr_tail`` is the
    end of what the process wrote to stderr, with any Milvus token already removed.
    """

    def __init__(
        self, adapter: str, operation: str, detail: str, stderr_tail: str = "", *, request: str | None = None
    ) -> None:
        self.adapter = adapter
        self.operation = operation
        self.detail = detail
        self.stderr_tail = stderr_tail
        self.request = request
        message = f"implementation {adapter!r} failed during {request or operation}: {detail}"
        if stderr_tail:
            message += f"\n--- last lines of its stderr ---\n{stderr_tail}"
        super().__init__(message)
