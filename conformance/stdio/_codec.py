"""Lines to messages and back: encoding, the checks on every reply, and keeping the token out of text."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..boundary._errors import ConformanceError, InvalidReplyError
from ._messages import MESSAGE_TYPES, REVEAL_TOKEN, ErrorReply, SkippedReply, kit_messages, reply_adapter

__all__ = ["Codec", "RemoteError"]

_QUOTE_CHARS = 300
_CONTEXT_CHARS = 600
_RECEIVED_CHARS = 80
_ADVICE = "write exactly one JSON object per line on stdout, and send logs and banners to stderr"


class RemoteError(Exception):
    """The implementation's own ``{"error": ...}`` reply, as the cause of an AdapterCallError."""

    def __init__(self, message: str, kind: str | None, context: str | None) -> None:
        self.kind = kind
        self.message = message
        self.context = context
        text = f"{kind}: {message}" if kind else message
        if context:
            shown = context.strip()
            if len(shown) > _CONTEXT_CHARS:
                shown = "…" + shown[-_CONTEXT_CHARS:]
            text += f"\n{shown}"
        super().__init__(text)


class Codec:
    """Encodes the kit's requests and decodes replies; every text it produces is scrubbed of secrets."""

    STALE = object()  # a reply to an earlier request that already ended; skipped silently

    def __init__(self, *, validate: bool) -> None:
        self.validate = validate
        self.secrets: set[str] = set()

    def scrub(self, text: str) -> str:
        """``text`` with every token the kit has handed out replaced by ``***``."""
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def quote(self, line: str) -> str:
        shown = self.scrub(line)
        if len(shown) > _QUOTE_CHARS:
            shown = shown[:_QUOTE_CHARS] + f"… ({len(line)} characters)"
        return repr(shown)

    def encode(self, operation: str, seq: int, fields: dict[str, Any]) -> str:
        """One request line; with ``validate``, the line is checked against the models first."""
        try:
            message = MESSAGE_TYPES[operation](type=operation, seq=seq, **fields)
        except ValidationError as exc:
            raise ConformanceError(
                f"kit bug: {operation} was called with values that do not fit the protocol: "
                f"{self.scrub(_errors(exc))}"
            ) from None
        line = message.model_dump_json(by_alias=True, context={REVEAL_TOKEN: True})
        if self.validate:
            try:
                kit_messages().validate_json(line, strict=True)
            except ValidationError as exc:
                raise ConformanceError(
                    f"kit bug: the kit's own {operation} message does not match the protocol models: "
                    f"{self.scrub(_errors(exc))}; please report it"
                ) from None
        return line

    def decode(self, name: str, operation: str, seq: int, line: str) -> Any:
        """The ``result`` of a good reply, a :class:`RemoteError`, :attr:`STALE`, or an exception.

        Raises :class:`InvalidReplyError` quoting the line when it is not JSON, not a reply to this
        request, or not of the operation's reply shape; its ``problem`` says which (``not_json``,
        ``not_object``, ``ahead``, ``wrong_seq``, ``invalid``). Raises ``NotApplicable`` for ``skipped``.
        """
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise self._invalid(
                name, operation, f"the line {self.quote(line)} is not JSON ({exc}); {_ADVICE}", "not_json"
            ) from None
        if not isinstance(data, dict):
            raise self._invalid(
                name, operation, f"the line {self.quote(line)} is not a JSON object; {_ADVICE}", "not_object"
            )
        got = data.get("seq")
        whole = isinstance(got, int) and not isinstance(got, bool)
        if isinstance(got, int) and whole and got < seq:
            return Codec.STALE
        if got != seq:
            # A later seq means the program is out of step with the kit; a missing or mistyped one is
            # a readable reply to this request with a wrong field.
            raise self._invalid(
                name,
                operation,
                f"the line {self.quote(line)} answers seq {got!r}, the request was seq {seq}",
                "ahead" if whole else "wrong_seq",
            )
        try:
            # One reading in every mode, the same as in process: numbers may be any JSON number, text
            # where a number belongs is an error (the protocol models' Real and WholeNumber fields).
            reply = reply_adapter(operation).validate_json(line)
        except ValidationError as exc:
            raise self._invalid(
                name,
                operation,
                f"the line {self.quote(line)} is not a valid {operation} reply: {self.scrub(_errors(exc))}",
                "invalid",
            ) from None
        if isinstance(reply, SkippedReply):
            if operation in ("start", "stop"):
                detail = f"{operation} cannot be skipped ({reply.skipped!r})"
                raise self._invalid(name, operation, detail, "invalid")
            from ._adapter import NotApplicable

            raise NotApplicable(self.scrub(reply.skipped))
        if isinstance(reply, ErrorReply):
            error = reply.error
            return RemoteError(
                self.scrub(error.message), error.kind, self.scrub(error.context) if error.context else None
            )
        return reply.result

    def _invalid(self, name: str, operation: str, detail: str, problem: str) -> InvalidReplyError:
        error = InvalidReplyError(name, operation, detail)
        error.problem = problem  # type: ignore[attr-defined]  # read by `rag-conformance smoke`
        return error


def _errors(exc: ValidationError) -> str:
    """Pydantic's errors on one line each: ``where: what``; the union's tag is left out of ``where``."""
    parts = []
    for error in exc.errors(include_url=False):
        loc = [str(p) for p in error["loc"]]
        if loc and loc[0] in ("result", "skipped", "error"):
            loc = loc[1:]
        part = f"{'.'.join(loc) or '(line)'}: {error['msg']}"
        received = error.get("input")
        # The value that was refused, when it is short and plain: a long line is quoted shortened.
        shown = repr(received)
        if isinstance(received, str | int | float | bool) and len(shown) <= _RECEIVED_CHARS:
            part += "" if shown in part else f" (received {shown})"
        parts.append(part)
    shown = "; ".join(parts[:5])
    return shown + (f"; and {len(parts) - 5} more" if len(parts) > 5 else "")
