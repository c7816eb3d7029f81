"""The adapter boundary: what an implementation sees of the kit, and nothing else.

- ``_protocol``: the :class:`~conformance.Implementation` Protocol and the plain pydantic values that
  cross it (requests, replies, capabilities); the stdio wire format is these same models.
- ``_implementation_base``: :class:`~conformance.ImplementationBase`, a base class whose undeclared
  capabilities decline.
- ``_decline``: :class:`~conformance.NotApplicable`, how a question is declined (NOT APPLICABLE), and
  the mode check.
- ``_asking``: ``ask``, the one way the kit calls an implementation (a crash reads as ERRORED).
- ``_errors``: the kit's errors, one root, one subclass per phase.
- ``_redact``: :func:`redact`, the one function every output of the kit passes through, so no
  credential of an engine address (user info, token, password parameters) is ever written.
- ``_credentials``: :func:`parse_address`, the one reading of an engine address's credentials in every
  form a user types (with or without a scheme, query parameters, percent-encoded, the environment).
- ``_describe``: one request in a few words (operation, seq, deciding fields), for messages about a call;
- ``_tally``: what a scenario asked (calls per capability, a property's examples), for the report.
- ``_atomic``: :func:`write_atomically` (and :func:`write_all_atomically` for a set of files), how
  every file the kit writes is written (a temporary file renamed over the old one), and
  :class:`OutputNotWrittenError`, the one error when it cannot be;
- ``_visible``: :func:`visible_text` and :func:`xml_safe_text`, the one rule for text that came from
  an implementation, a labelled set or an engine (control characters shown as escapes, never obeyed).
- ``_signals``: SIGINT, SIGTERM and SIGHUP as an interrupt that carries the signal, for every command
  (128 + the signal, named as itself: docs/exit-codes.md).

The lowest layer but the spec's text: it imports nothing else of the kit. Public names are re-exported
by :mod:`conformance`; the output helpers above are this package's ``__all__`` (standard library only).
"""

from ._atomic import OutputNotWrittenError, write_all_atomically, write_atomically
from ._visible import visible_text, xml_safe_text

__all__ = [
    "OutputNotWrittenError",
    "visible_text",
    "write_all_atomically",
    "write_atomically",
    "xml_safe_text",
]
