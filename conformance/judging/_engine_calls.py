"""The kit's own calls to Milvus, asked once more when the engine answers an error.

A flaky engine (one search in fifty answered with an error status, a dropped connection) must not turn
into a verdict about the implementation: the kit's oracle makes each search through :func:`engine_call`,
which asks a second time after an error (not after a deadline: see
:class:`~conformance.boundary.EngineDeadlineError`), and raises
:class:`~conformance.boundary.EngineAnswerError` (the scenario is then NOT JUDGED, with the engine's words)
when the engine errs twice in a row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..boundary._errors import EngineAnswerError, EngineDeadlineError
from ..boundary._redact import redact

__all__ = ["engine_call", "engine_message"]

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
