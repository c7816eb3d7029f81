"""Keep credentials out of everything the kit writes: one function, :func:`redact`, for every output.

An engine address can carry secrets in three places: the URI's user info (``http://user:pw@host``),
query parameters that name a credential (``?token=...``, ``&password=...``), and the token the kit reads
from ``MILVUS_TOKEN``. :func:`redact` hides the first two wherever a URI appears in a text, and every
secret the run has registered (:func:`register_secret`: the token, the URI's password) wherever it
appears at all, also JSON-escaped, so a program that echoes its endpoint in a log line or an error
cannot leak it through the kit's report either. The terminal lines, report.json, junit.xml, the site,
replay commands, error messages and logs all pass through it.
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
from urllib.parse import unquote, urlsplit

__all__ = [
    "RedactingStream",
    "redact",
    "redact_uri",
    "redacting_output",
    "register_secret",
    "register_uri_secrets",
    "scrub",
]

SHOWN = "***"
# Shorter secrets are not replaced in free text (it would garble ordinary words); the URI's own
# user info and credential parameters are hidden whatever their length.
_MIN_SECRET = 4
# The user info runs to the authority's last "@", as a URI parser reads it: a password holding a raw
# "@" is hidden whole, not shown from its first "@" on.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s'\"<>]*@)")
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


def register_uri_secrets(text: str) -> None:
    """Register the password and the credential parameters of every URI in ``text``."""
    for match in re.finditer(r"[A-Za-z][A-Za-z0-9+.-]*://\S+", text):
        try:
            parts = urlsplit(match.group(0))
        except ValueError:
            continue
        register_secret(parts.password)
        for param in _CREDENTIAL_PARAM.finditer("?" + parts.query):
            register_secret(param.group(0)[len(param.group("name")) :])


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
    return _CREDENTIAL_PARAM.sub(lambda m: m.group("name") + SHOWN, text)


def redact_uri(uri: str) -> str:
    """``uri`` with its user info and credential parameters hidden; an unparsable one entirely."""
    try:
        urlsplit(uri)
    except ValueError:  # unparsable: show nothing that could be a secret
        return SHOWN
    shown = redact(uri)
    # Without "//" the parser finds no user info ("user:pw@host"); anything before an "@" may be secret.
    if "://" not in shown and "@" in shown:
        return f"{SHOWN}@" + shown.rpartition("@")[2]
    return shown


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
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = streams
