"""A stdio program that answers as the reference does, taking every liberty ``docs/stdio-protocol.md``
allows on the wire: run as a script by :mod:`tests.miniatures.wire_tolerance`, never imported by a run.

Liberties, each named on the command line:

- ``bom``: a UTF-8 byte-order mark before the first reply (RFC 8259 lets a parser ignore it);
- ``crlf``: replies end with ``\\r\\n``;
- ``extras``: fields the protocol does not define beside ``result`` (``elapsedMs``) and inside it
  (``diagnostics`` in a post-process or lookup reply, ``vendor`` in the start reply);
- ``numbers``: whole numbers written without a fraction (``1`` for a qualityScore of 1.0), integer fields
  and ``seq`` written as ``3.0``, keys in another order than the page shows;
- ``capabilities``: a capability named twice, and a mode-qualified one beside the plain one;
- ``unnamed-language``: a start reply without ``language`` (shown as unknown, with a note);
- ``noise``: a log line on stdout before every reply after the handshake (skipped, warned), one of them
  in Latin-1 (not UTF-8: noise all the same), and a log line on stderr for every request;
- ``stale``: before every reply after the handshake, the previous reply again (a lower ``seq``: the kit
  skips it silently).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

_INTEGER_FIELDS = ("chunkIndex", "originalRank")


def _whole_as_float(value: Any) -> Any:
    """Integer fields as ``3.0``, recursively (the page: "``3`` or ``3.0``")."""
    if isinstance(value, dict):
        return {
            key: float(item) if key in _INTEGER_FIELDS and isinstance(item, int) else _whole_as_float(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_whole_as_float(item) for item in value]
    return value


def _floats_as_ints(value: Any) -> Any:
    """Whole floats as JSON integers (``1`` for ``1.0``): any JSON number is a number."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_floats_as_ints(item) for item in value]
    return value


def _answer(implementation: Any, message: Any, liberties: set[str]) -> Any:
    kind = message.type
    if kind == "start":
        info = implementation.describe().model_dump(mode="json", by_alias=True)
        if "unnamed-language" not in liberties:
            info["language"] = "python"
        if "capabilities" in liberties:
            declared = sorted(info["capabilities"])
            info["capabilities"] = [*declared, declared[0], "search:dense", "lookup:hybrid"]
        if "extras" in liberties:
            info["vendor"] = {"team": "wire-liberties", "build": 7}
        return info
    if kind == "stop":
        implementation.close()
        return None
    if kind == "canonicalize_label":
        return implementation.canonicalize_label(message.label)
    if kind == "prepare":
        implementation.prepare(message.endpoint, message.corpus)
        return None
    result = getattr(implementation, kind)(message.request)
    if hasattr(result, "model_dump"):
        result = result.model_dump(mode="json", by_alias=True)
        if "extras" in liberties and "blocks" in result:
            result["diagnostics"] = {"blocks": len(result["blocks"])}
    return result


def main(liberties: set[str]) -> None:
    from conformance.adapters.reference import ReferenceAdapter
    from conformance.stdio._messages import kit_messages

    implementation = ReferenceAdapter()
    reader = kit_messages()
    out = sys.stdout.buffer
    first, previous = True, b""
    for raw in sys.stdin.buffer:
        started = time.monotonic()
        message = reader.validate_json(raw)
        if "noise" in liberties:
            print(f"[tolerant] {message.type} seq {message.seq}", file=sys.stderr, flush=True)
        result = _answer(implementation, message, liberties)
        reply: dict[str, Any] = {"seq": message.seq, "result": result}
        if "numbers" in liberties:
            reply = {"result": _whole_as_float(_floats_as_ints(result)), "seq": float(message.seq)}
        if "extras" in liberties:
            reply["elapsedMs"] = round((time.monotonic() - started) * 1000, 3)
        line = json.dumps(reply, ensure_ascii=False).encode("utf-8")
        line += b"\r\n" if "crlf" in liberties else b"\n"
        if "noise" in liberties and not first:
            out.write(b"[tolerant] answering " + message.type.encode() + b"\n")
            out.write("[tolerant] r\u00e9ponse pr\u00eate\n".encode("latin-1"))
        if "stale" in liberties:
            out.write(previous)  # the reply before this one, again: a lower seq
        out.write((b"\xef\xbb\xbf" if "bom" in liberties and first else b"") + line)
        out.flush()
        previous = line
        first = False
        if message.type == "stop":
            return


if __name__ == "__main__":
    main(set(sys.argv[1:]))
