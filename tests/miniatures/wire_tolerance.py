"""Conforming programs over stdio that take the liberties the protocol page allows (issue 51.3).

Each is the reference, spoken over the stdio protocol by :mod:`tests.miniatures._tolerant_program`, with
the wire liberties ``docs/stdio-protocol.md`` accepts: the kit must pass it everywhere, with notes and
warnings at most, never a refusal. The selftest loads them like any miniature (``module:Name``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.stdio import StdioAdapter

__all__ = ["WireLiberties"]

_PROGRAM = Path(__file__).with_name("_tolerant_program.py")
# Preparing the corpus over stdio, with the reference's own client, under a loaded machine.
_TIMEOUT = 120.0


class _Tolerant(StdioAdapter):
    LIBERTIES: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__([sys.executable, str(_PROGRAM), *self.LIBERTIES], timeout=_TIMEOUT)


class WireLiberties(_Tolerant):
    """Every liberty at once (one selftest run costs 25 to 45 s on two loaded cores; the codec's unit
    tests, tests/unit/conformance/stdio/test_wire_tolerance.py, pin each one apart): fields the protocol
    does not define beside and inside ``result`` and in the start reply, a BOM before the first reply,
    replies ended with ``\\r\\n``, whole numbers without a fraction, ``seq`` and integer fields as
    ``3.0``, keys in another order, a capability named twice and mode-qualified ones beside plain ones,
    a start reply that does not say its language, log lines on stdout before every reply after the
    handshake (one of them in Latin-1), one on stderr per request, and the previous reply again before
    every reply (a lower ``seq``).

    Allowed by the stdio page: "Fields the protocol does not define, in result or beside it, are kept and
    reported as notes, never failed"; "a ``\\r\\n`` ending is accepted"; "Any JSON number is read as
    a number"; integer fields hold "3 or 3.0"; "a name given twice counts once", "mode-qualified ones
    allowed"; "A reply whose seq is lower than the request's ... the kit skips it silently"; "A non-JSON
    line in another encoding (a log line) is noise"; "Noise on stdout after the handshake ... is skipped
    while the kit waits for the reply, and listed once per distinct line in the report's warnings"; a
    program that does not say its language
    "is shown as language unknown ... with a note"; RFC 8259 8.1 (a parser may ignore a BOM).
    """

    LIBERTIES = ("bom", "crlf", "extras", "numbers", "capabilities", "unnamed-language", "noise", "stale")
