"""Keep credentials out of everything the kit writes: one function, :func:`redact`, for every output.

An engine address can carry secrets in every form :mod:`._credentials` reads (user info with or without
a scheme, credential query parameters, percent-encoded or not), and ``MILVUS_TOKEN`` and ``MILVUS_URI``
hold more. Every place that reads an address or the environment registers what it finds
(:func:`register_uri_secrets`, :func:`register_environment_secrets`); :func:`redact` then hides every
registered secret wherever it appears at all, also JSON-escaped, and the URI patterns it knows
wherever a URI appears, so a program that echoes its endpoint in a log line or an error cannot leak it
through the kit's report either. The terminal lines, report.json, junit.xml, the site, replay
commands, error messages and logs all pass through it.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import threading
from collections.abc import Iterator
from typing import TextIO
from urllib.parse import unquote

from ._credentials import SHOWN, environment_secrets, parse_address, secrets_in_text

__all__ = [
    "RedactingStream",
    "holds_secret",
    "redact",
    "redact_uri",
    "redacting_output",
    "register_environment_secrets",
    "register_secret",
    "register_uri_secrets",
    "scrub",
]

# Shorter secrets are not replaced in free text (it would garble ordinary words); the URI's own
# user info and credential parameters are hidden whatever their length.
_MIN_SECRET = 4
# The user info runs to the authority's last "@", as a URI parser reads it: a password holding a raw
# "@" is hidden whole, not shown from its first "@" on.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s'\"<>]*@)")
# The kit's own engine address without a scheme: ``uri:alice:pw@host`` (no URI pattern finds it).
_ENGINE_USERINFO = re.compile(r"(?P<scheme>\buri:)(?!//)(?P<userinfo>[^/?#\s'\"<>]*@)")
_CREDENTIAL_PARAM = re.compile(
    r"(?i)(?P<name>[?&;](?:[a-z0-9_.-]*(?:token|password|passwd|pwd|secret|credential|auth)"
    r"[a-z0-9_.-]*|api[_-]?key|apikey|key)=)[^&#\s'\"<>]*"
)
_secrets: set[str] = set()
_lock = threading.Lock()


def register_secret(secret: str | None) -> None:
    """From now on, :func:`redact` hides ``secret`` wherever it appears (process-wide)."""
    if secret and len(secret) >= _MIN_SECRET:
        with _lock:
            _secrets.add(secret)
            decoded = unquote(secret)  # a percent-encoded password may be shown decoded too
            if decoded != secret and len(decoded) >= _MIN_SECRET:
                _secrets.add(decoded)


def register_uri_secrets(text: str | None) -> None:
    """Register every credential of every address in ``text`` (:func:`secrets_in_text`: user info with
    or without a scheme, credential parameters, as typed and decoded)."""
    for secret in secrets_in_text(text or ""):
        register_secret(secret)


def register_environment_secrets() -> None:
    """Register what ``MILVUS_TOKEN``, ``MILVUS_URI`` and the other Milvus variables hold."""
    for secret in environment_secrets():
        register_secret(secret)


def holds_secret(text: str) -> bool:
    """Whether ``text`` is a registered secret (``MY_TOKEN=$MILVUS_TOKEN``), or holds an address
    whose credentials are registered ones (``DB_URL=http://alice:<the password>@host``).

    Never a mere substring: a short password such as ``milvus`` must not make ``PATH=/opt/milvus/bin``
    one. A proxy's password in ``HTTPS_PROXY`` is not a secret the kit was given: not one either."""
    with _lock:
        secrets = set(_secrets)
    return text in secrets or bool(secrets_in_text(text) & secrets)


def redact(text: str) -> str:
    """``text`` with every registered secret (as it is and JSON-escaped), and every URI's user info
    and credential parameters, replaced by ``***``.

    The registered secrets go first, each whole: cutting a URI apart first would leave part of a
    secret that holds a URI's delimiters (``@``, ``&``, ``#``) outside what the patterns hide."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)  # a longer secret first: it may hold a shorter
    for secret in secrets:
        text = text.replace(secret, SHOWN)
        escaped = json.dumps(secret)[1:-1]
        if escaped != secret:
            text = text.replace(escaped, SHOWN)
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{SHOWN}@", text)
    text = _ENGINE_USERINFO.sub(lambda m: f"{m.group('scheme')}{SHOWN}@", text)
    return _CREDENTIAL_PARAM.sub(lambda m: m.group("name") + SHOWN, text)


def redact_uri(uri: str) -> str:
    """``uri`` as printed: its credentials in every form (:func:`parse_address`) and every registered
    secret hidden."""
    return redact(parse_address(uri).shown)


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` with ``secrets`` registered and :func:`redact` applied (for messages that hold them)."""
    for secret in secrets:
        register_secret(secret)
    return redact(text)


class RedactingStream(io.TextIOBase):
    """A text stream that writes everything through :func:`redact` to ``target``.

    Text is passed on line by line (a secret never straddles two writes of one line) and on ``flush``,
    so progress dots still show as they come.
    """

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            done, _, self._pending = self._pending.rpartition("\n")
            self._target.write(redact(done + "\n"))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._target.write(redact(self._pending))
            self._pending = ""
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the target's, as callers expect
        return getattr(self._target, "encoding", "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._target, "errors", None)

    def writable(self) -> bool:
        return True


@contextlib.contextmanager
def redacting_output() -> Iterator[None]:
    """While inside, everything this process prints to ``sys.stdout`` and ``sys.stderr`` is redacted."""
    register_environment_secrets()  # the Milvus variables, whichever command reads them
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = streams
