"""Calls to Milvus, asked once more when the engine answers an error.

A flaky engine (one search in fifty answered with an error status, a dropped connection) must not turn
into a verdict about the implementation: the kit's oracle makes each search through :func:`engine_call`,
which asks a second time after an error (not after a deadline: see
:class:`~conformance.boundary.EngineDeadlineError`), and the judge asks the implementation's searches
and lookups through :func:`ask_through_engine`, which asks the implementation again when the engine
answered one of its calls with an error. Either raises :class:`~conformance.boundary.EngineAnswerError`
(the scenario is then NOT JUDGED, with the engine's words) when the engine errs twice in a row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..boundary._asking import ask
from ..boundary._errors import ConformanceError, EngineAnswerError, EngineDeadlineError
from ..boundary._redact import redact

__all__ = ["Recording", "ask_through_engine", "engine_call", "engine_message"]

T = TypeVar("T")


def engine_message(exc: BaseException) -> str:
    """What the engine said, on one line: pymilvus's exceptions keep it in ``message`` (their str() is
    their repr), gRPC's in ``details()``."""
    details = getattr(exc, "details", None)
    text = str(getattr(exc, "message", None) or (details() if callable(details) else None) or exc)
    code = getattr(exc, "code", None)
    code = code() if callable(code) else code
    first = (text.strip().splitlines() or [type(exc).__name__])[0]
    shown = f"{type(exc).__name__} (code {getattr(code, 'name', code)}): {first}" if code else first
    return redact(shown)


def engine_call(what: str, call: Callable[[], T]) -> T:
    """``call()``, made again once if the engine answers it with an error; ``what`` names it for the
    message (``"the oracle's dense search"``). A call past its deadline is not asked again: the engine
    did not answer, and a second wait would double what a frozen engine costs the run."""
    try:
        return call()
    except EngineDeadlineError as late:
        raise EngineDeadlineError(
            f"{late} (during {what})", engine=late.engine, call=f"{late.call}, {what}"
        ) from None
    except Exception as first:
        try:
            return call()
        except Exception as second:
            raise EngineAnswerError(
                f"Milvus answered {what} with an error twice in a row: {engine_message(first)}; asked "
                f"again: {engine_message(second)}"
            ) from second


class Recording:
    """``with`` block collecting what the recording proxy saw during one call (nothing without a proxy)."""

    def __init__(self, proxy: Any) -> None:
        self._proxy = proxy
        self._calls: list[Any] = []

    def __enter__(self) -> list[Any]:
        self._mark = self._proxy.mark() if self._proxy is not None else 0
        return self._calls

    def __exit__(self, *exc: object) -> None:
        if self._proxy is not None:
            self._calls.extend(self._proxy.calls_since(self._mark))


def ask_through_engine(
    implementation: Any,
    operation: str,
    request: Any,
    recording: Callable[[], Recording],
    note: Callable[[str], None],
) -> tuple[Any, list[Any]]:
    """Ask the implementation a Milvus-backed question, seeing its engine calls; when the engine answered
    one of them with an error, ask once more and judge the second answer (a flaky engine is not the
    implementation's fault, and a broken implementation still shows on the retry), saying so through
    ``note``. Two disturbed asks in a row: :class:`~conformance.boundary.EngineAnswerError`."""
    disturbed: list[str] = []
    for _ in range(2):
        error: ConformanceError | None = None
        with recording() as calls:
            try:
                reply = ask(implementation, operation, request)
            except ConformanceError as exc:
                error = exc
        errors = [f"{c.method}: {c.engine_error}" for c in calls if getattr(c, "engine_error", None)]
        if not errors:
            if error is not None:
                raise error
            if disturbed:
                note(
                    f"Milvus answered the implementation's {operation} with an error ({disturbed[0]}); "
                    "the kit asked again and judged the second answer"
                )
            return reply, calls
        answer = "answered" if error is None else f"failed: {error}"
        disturbed.append(f"{errors[0]}; the implementation then {answer}")
    raise EngineAnswerError(
        f"Milvus answered the implementation's {operation} calls with errors twice in a row "
        f"({disturbed[0]}; asked again: {disturbed[1]}): not judged, as the engine failed"
    )
