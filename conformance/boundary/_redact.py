"""Keep credentials out of everything the kit prints: URIs with user info and the token itself."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_uri", "scrub"]


def redact_uri(uri: str) -> str:
    """``uri`` with any ``user:password@`` part and query string replaced by ``***``."""
    try:
        parts = urlsplit(uri)
    except ValueError:  # unparsable: show nothing that could be a secret
        return "***"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    # Query strings are where some providers put API keys; the kit never needs to show them.
    query = "***" if parts.query else ""
    shown = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    # Without "//" the parser finds no netloc ("user:pw@host"); anything before an "@" may be secret.
    return "***@" + shown.rpartition("@")[2] if "@" in shown.replace("***@", "") else shown


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` with every non-empty secret replaced by ``***`` (last line of defence for messages)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
