"""Asking the implementation: every step goes through :func:`ask` so a crash reads as ERRORED, and every
reply is checked against the type the Protocol gives its question (``REPLY_TYPES``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from ._describe import describe_call
from ._errors import AdapterCallError, ConformanceError, InvalidReplyError
from ._protocol import REPLY_TYPES, Implementation, Real, _real, wrong_number_types
from ._signals import raise_swallowed
from ._tally import count_call

__all__ = ["ask"]


def ask(implementation: Implementation, operation: str, *args: Any) -> Any:
    """Call ``implementation.<operation>(*args)``; wrap crashes and check the reply's type.

    The reply type is the Protocol's for ``operation`` (a pydantic model class, a real number or ``str``;
    ``prepare`` answers nothing). A reply of the right shape as a plain dict is accepted and validated,
    so adapters may return JSON-like data.
    """
    if operation not in REPLY_TYPES:
        raise ConformanceError(
            f"kit bug: {operation!r} is not a question of the Protocol ({sorted(REPLY_TYPES)})"
        )
    raise_swallowed()  # a Ctrl-C lost in a destructor or gc callback stops the run here, before the call
    expect = REPLY_TYPES[operation]
    name = _name(implementation)
    count_call(operation)  # the scenario's true count of calls, for the report
    try:
        reply = getattr(implementation, operation)(*args)
    except ConformanceError:
        raise
    except Exception as exc:
        raise AdapterCallError(name, operation, exc, request=describe_call(operation, args)) from exc
    if expect is None:
        return reply
    if isinstance(expect, type) and issubclass(expect, BaseModel):
        if isinstance(reply, expect):
            return reply
        try:
            return expect.model_validate(reply if isinstance(reply, dict) else _dump(reply))
        except ValidationError as exc:
            numbers = wrong_number_types(exc.errors(include_url=False))
            raise InvalidReplyError(name, operation, str(exc), numbers=numbers) from None
    if expect is Real:
        try:
            number = _real(reply)
        except ValueError as exc:
            numbers = (("", reply),) if isinstance(reply, str | bool) else ()
            raise InvalidReplyError(name, operation, str(exc), numbers=numbers) from None
        if number is None:
            raise InvalidReplyError(name, operation, "expected a number, got None")
        return number
    if not isinstance(reply, expect):
        raise InvalidReplyError(name, operation, f"expected {expect.__name__}, got {reply!r}")
    return reply


def _dump(reply: Any) -> Any:
    if isinstance(reply, BaseModel):
        return reply.model_dump(by_alias=True)
    return reply


def _name(implementation: Implementation) -> str:
    return getattr(implementation, "rqs_name", None) or type(implementation).__name__
