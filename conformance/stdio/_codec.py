"""Lines to messages and back: encoding, the checks on every reply, and keeping the token out of text.

A reply line is read by one rule, the protocol's (``docs/stdio-protocol.md``): UTF-8 (the process
layer hands on a line that is not as :class:`~conformance.stdio._process.NotUtf8Line`), strict JSON
(``NaN``, ``Infinity`` and numbers too large for a double are not JSON numbers), an integer ``seq``
equal to the request's, then the operation's reply shape, the one its JSON Schema states.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import ValidationError

from ..boundary._decline import NotApplicable
from ..boundary._errors import ConformanceError, InvalidReplyError
from ..boundary._protocol import wrong_number_types
from ..boundary._redact import scrub
from ._messages import (
    MESSAGE_TYPES,
    REPLY_SHAPES,
    REVEAL_TOKEN,
    UNSKIPPABLE,
    ErrorReply,
    SkippedReply,
    kit_messages,
    reply_adapter,
)
from ._process import STDOUT_LINE_BYTES, CutLine, NotUtf8Line, Overflowed

__all__ = ["Codec", "RemoteError"]

_QUOTE_CHARS = 300
_CONTEXT_CHARS = 600
_RECEIVED_CHARS = 80
_ADVICE = "write exactly one JSON object per line on stdout, and send logs and banners to stderr"
_UTF8_ADVICE = (
    "the protocol is UTF-8 both ways: write stdout as UTF-8 (a JVM: wrap System.out in a PrintStream "
    "with StandardCharsets.UTF_8; the kit also sets LC_ALL=C.UTF-8 and JAVA_TOOL_OPTIONS for the child)"
)
_BOM = "\ufeff"
_BOM_WARNING = (
    "the implementation wrote a UTF-8 byte-order mark before its {operation} reply; the kit ignores "
    "it (RFC 8259 lets a parser do so), but other readers may not: write UTF-8 without a BOM (.NET: new "
    "UTF8Encoding(false); PowerShell: [Console]::OutputEncoding = [Text.UTF8Encoding]::new($false))"
)
_NON_FINITE_ADVICE = (
    "JSON has no NaN or Infinity: send a finite number, or null where the field allows it (Gson writes "
    "a bare NaN for a NaN double; check for NaN and Infinity before replying)"
)


class _NonFinite:
    """Where a reply had ``NaN``, ``Infinity``, ``-Infinity`` or a number beyond a double's range."""

    def __init__(self, token: str) -> None:
        self.token = token


def _number(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _non_finite_at(data: Any, where: str = "") -> tuple[str, str] | None:
    """(path, token) of the first non-finite number in parsed JSON, or None."""
    if isinstance(data, _NonFinite):
        return where or "(line)", data.token
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in children:
        found = _non_finite_at(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def _looks_like_a_reply(raw: bytes) -> bool:
    """Whether a line that is not UTF-8 would be a JSON object if it were: a reply, badly encoded."""
    try:
        return isinstance(json.loads(raw.decode("utf-8", errors="replace")), dict)
    except ValueError:
        return False


def whole_seq(value: Any) -> int | None:
    """A ``seq`` as the schema reads it (an integer; ``3.0`` is one): the int, or None (``true``,
    ``"3"``, ``3.5`` and a missing seq are not)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


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
        # What replies carried that the protocol allows but does not define (notes), and what it
        # tolerates but advises against (warnings); each text once, taken by the adapter.
        self._notes: dict[str, None] = {}
        self._warnings: dict[str, None] = {}
        self._said: set[str] = set()

    def take_notes(self) -> list[str]:
        """The notes gathered since the last call (fields the protocol does not define), each once."""
        notes, self._notes = list(self._notes), {}
        return notes

    def take_warnings(self) -> list[str]:
        """The warnings gathered since the last call (a byte-order mark), each once per run."""
        warnings, self._warnings = list(self._warnings), {}
        return warnings

    def _once(self, text: str, into: dict[str, None]) -> None:
        if text not in self._said:
            self._said.add(text)
            into[text] = None

    def scrub(self, text: str) -> str:
        """``text`` with every token the kit has handed out, and every credential :func:`redact` knows
        (an endpoint's user info or password), replaced by ``***``."""
        return scrub(text, *self.secrets)

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

    def decode(
        self, name: str, operation: str, seq: int, line: str | NotUtf8Line | CutLine | Overflowed
    ) -> Any:
        """The ``result`` of a good reply, a :class:`RemoteError`, :attr:`STALE`, or an exception.

        Raises :class:`InvalidReplyError` quoting the line when it is not UTF-8, not JSON, not a reply
        to this request, or not of the operation's reply shape; its ``problem`` says which
        (``not_utf8``, ``not_json``, ``not_object``, ``ahead``, ``wrong_seq``, ``non_finite``,
        ``invalid``, ``too_long``, ``noisy``). Raises ``NotApplicable`` for ``skipped``.
        """
        if isinstance(line, Overflowed):
            detail = (
                f"the program wrote more on stdout than the kit reads ahead ({line.describe()}); "
                "write only protocol lines on stdout, and logs to stderr"
            )
            raise self._invalid(name, operation, detail, "noisy")
        if isinstance(line, CutLine):
            detail = (
                f"a line on stdout is longer than the kit reads ({line.describe()}; the kit keeps "
                f"{STDOUT_LINE_BYTES:,} bytes of a line): no reply is that long. Write one JSON object "
                "per line on stdout, and logs to stderr"
            )
            raise self._invalid(name, operation, self.scrub(detail), "too_long")
        if isinstance(line, NotUtf8Line):
            detail = f"a line on stdout is not UTF-8: {line.describe()}; {_UTF8_ADVICE}"
            if _looks_like_a_reply(line.raw):
                raise self._invalid(name, operation, self.scrub(detail), "not_utf8")
            # Not JSON either (a log line in the locale's encoding): noise, like any other log line.
            raise self._invalid(name, operation, self.scrub(detail), "not_json")
        if line.startswith(_BOM):
            # RFC 8259 8.1: a parser MAY ignore a byte-order mark; the kit does, and says so once.
            line = line[len(_BOM) :]
            self._once(_BOM_WARNING.format(operation=operation), self._warnings)
        try:
            data = json.loads(line, parse_constant=_NonFinite, parse_float=_number)
        except ValueError as exc:
            raise self._invalid(
                name, operation, f"the line {self.quote(line)} is not JSON ({exc}); {_ADVICE}", "not_json"
            ) from None
        if not isinstance(data, dict):
            raise self._invalid(
                name, operation, f"the line {self.quote(line)} is not a JSON object; {_ADVICE}", "not_object"
            )
        got = whole_seq(data.get("seq"))
        if got is not None and got < seq:
            return Codec.STALE
        if got != seq:
            # A later seq means the program is out of step with the kit; a missing or mistyped one is
            # a readable reply to this request with a wrong field.
            raise self._invalid(
                name,
                operation,
                f"the line {self.quote(line)} answers seq {data.get('seq')!r}, the request was seq {seq}",
                "ahead" if got is not None else "wrong_seq",
            )
        non_finite = _non_finite_at(data)
        if non_finite is not None:
            where, token = non_finite
            raise self._invalid(
                name,
                operation,
                f"the line {self.quote(line)} is not JSON: {where} is {token}; {_NON_FINITE_ADVICE}",
                "non_finite",
            )
        if operation in UNSKIPPABLE and "skipped" in data and "error" not in data:
            detail = f"{operation} cannot be skipped ({data['skipped']!r}); reply with its result or an error"
            raise self._invalid(name, operation, self.scrub(detail), "invalid")
        shapes = [key for key in REPLY_SHAPES if key in data]
        if len(shapes) > 1:
            detail = (
                f"the line {self.quote(line)} carries {' and '.join(shapes)}: a reply is exactly one of "
                '{"seq": n, "result": R}, {"seq": n, "skipped": "reason"} or {"seq": n, "error": {...}}'
            )
            raise self._invalid(name, operation, detail, "invalid")
        try:
            # One reading in every mode, the same as in process: numbers may be any JSON number, text
            # where a number belongs is an error (the protocol models' Real and WholeNumber fields).
            reply = reply_adapter(operation).validate_json(line)
        except ValidationError as exc:
            invalid = self._invalid(
                name,
                operation,
                f"the line {self.quote(line)} does not fit the {operation} reply's shape: "
                f"{self.scrub(_errors(exc))}",
                "invalid",
            )
            invalid.numbers = wrong_number_types(exc.errors(include_url=False))
            raise invalid from None
        notes = self._extras(operation, reply)
        # A result's notes wait for the judge of the scenario that asked; a decline or an error ends the
        # scenario's call, so its notes travel in its own words (never filed under a later scenario).
        said = "".join(f" [{note}; kept, never failed]" for note in notes)
        if isinstance(reply, SkippedReply):
            raise NotApplicable(self.scrub(reply.skipped + said))
        if isinstance(reply, ErrorReply):
            error = reply.error
            return RemoteError(
                self.scrub(error.message + said),
                error.kind,
                self.scrub(error.context) if error.context else None,
            )
        for note in notes:
            self._notes[note] = None
        return reply.result

    def _extras(self, operation: str, reply: Any) -> list[str]:
        """The notes on the fields a reply carried that the protocol does not define (never a fault)."""
        shape = next(key for key in REPLY_SHAPES if hasattr(reply, key))
        places = [(f"beside its {shape}", reply.model_extra)]
        if isinstance(reply, ErrorReply):
            places.append(("in its error", reply.error.model_extra))
        notes = []
        for where, extra in places:
            if extra:
                fields = ", ".join(sorted(extra))
                note = f"{operation} reply carried fields the protocol does not define {where}: {fields}"
                notes.append(self.scrub(note))
        return notes

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
