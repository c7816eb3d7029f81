"""The one reading of an engine address's credentials, in every form a user types (issue 53).

A Milvus address reaches the kit as ``--milvus uri:<uri>``, ``MILVUS_URI``, an ``engines`` column or an
``upgrade`` side, and may carry a credential in any of these forms:

- user info after a scheme: ``http://alice:pw@host:19530`` (the password may hold a raw ``@`` or ``/``);
- user info without a scheme: ``alice:pw@host:19530`` (no URI parser finds it: ``urlsplit`` reads no
  authority without ``//``);
- a query parameter naming a credential: ``?token=...``, ``&password=...``, ``api_key``, ``apikey``,
  ``secret``, ``auth...``;
- any of them percent-encoded (``p%40ss`` for ``p@ss``);
- and beside the address, ``MILVUS_TOKEN`` (a ``user:password`` or an API key), and ``MILVUS_URI``.

:func:`parse_address` finds them all and says what to connect to without them (``bare``), what to
print (``shown``), the token Milvus takes (``token``), and every form of every secret to hide
(``secrets``: as typed and decoded). Everything that reads, prints, stores or passes on an address goes
through it: the engine vocabulary, the ``uri`` backend, the redaction of every output, the environment
a program under test starts with.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = [
    "CREDENTIAL_ENV",
    "ENGINE_ADDRESS_ENV",
    "SHOWN",
    "Address",
    "credential_param",
    "environment_secrets",
    "parse_address",
    "secrets_in_text",
]

SHOWN = "***"
ENGINE_ADDRESS_ENV = "RQS_MILVUS_ADDRESS"
"""How ``rag-conformance engines`` hands an engine address to the run of each column: in the child's
environment, which only its user can read, never in its argv, which every local user can (``ps``)."""
CREDENTIAL_ENV = (
    "MILVUS_TOKEN",
    "MILVUS_URI",
    "MILVUS_PASSWORD",
    "MILVUS_USER",
    "MILVUS_API_KEY",
    ENGINE_ADDRESS_ENV,
)
"""The variables that hold Milvus credentials (or an address that may): read by the kit, never handed
to a program under test (its endpoint comes over stdin)."""
_ADDRESS_ENV = ("MILVUS_URI", ENGINE_ADDRESS_ENV)

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_CREDENTIAL_NAME = re.compile(
    r"(?i)^(?:[a-z0-9_.-]*(?:token|password|passwd|pwd|secret|credential|auth)[a-z0-9_.-]*"
    r"|api[_-]?key|apikey|key)$"
)
_TOKEN_PARAMS = ("token", "api_key", "apikey", "api-key", "key")  # a value Milvus takes as the token
# Words in free text that may be an address: something with "://", an "@" or a "=" in it.
_WORD = re.compile(r"[^\s'\"<>()\[\],]+")


def credential_param(name: str) -> bool:
    """Whether a query parameter's ``name`` says it holds a credential (``token``, ``api_key``, ...)."""
    return bool(_CREDENTIAL_NAME.match(name))


@dataclass(frozen=True, slots=True)
class Address:
    """An engine address read apart: see :func:`parse_address`."""

    text: str  # as given
    bare: str  # without user info and credential parameters: what a client connects to
    shown: str  # with every credential replaced by ***: what messages print
    user: str | None
    password: str | None
    token: str | None  # what Milvus takes: "user:password", or a token parameter's value
    secrets: frozenset[str]  # every secret, as typed and percent-decoded

    @property
    def has_credentials(self) -> bool:
        return bool(self.secrets)


def parse_address(text: str) -> Address:
    """Read ``text`` (a URI, with or without a scheme) into its parts and its credentials.

    The user info runs to the last ``@`` before the query: a password with a raw ``@`` or ``/`` is read
    whole. Without a scheme, ``alice:pw@host`` is user info all the same (a host never holds ``@``).
    Credential parameters (:func:`credential_param`) are taken out of the query; ``token``, ``api_key``
    (and ``apikey``, ``key``) become the token when the user info gives none, ``user`` with
    ``password`` parameters a ``user:password`` token.
    """
    given = text
    text = text.strip()
    match = _SCHEME.match(text)
    scheme = match.group(0) if match else ""
    rest = text[len(scheme) :]
    before_query, mark, query = _split_query(rest)
    userinfo = None
    if "@" in before_query:
        userinfo, _, before_query = before_query.rpartition("@")
    params = _params(query) if mark == "?" else []
    kept = [(name, value) for name, value in params if not credential_param(name)]
    taken = {name.lower(): unquote(value) for name, value in params if credential_param(name)}
    secrets: set[str] = set()
    user = password = token = None
    if userinfo is not None:
        secrets |= {userinfo, unquote(userinfo)}
        raw_user, colon, raw_password = userinfo.partition(":")
        user = unquote(raw_user)
        if colon:
            password = unquote(raw_password)
            secrets |= {raw_password, password}
        token = unquote(userinfo)
    for name, value in params:
        if credential_param(name):
            secrets |= {value, unquote(value)}
    if token is None:
        token = next((taken[name] for name in _TOKEN_PARAMS if taken.get(name)), None)
    if token is None and taken.get("password"):
        named = dict((name.lower(), unquote(value)) for name, value in kept)
        token = f"{named.get('user') or named.get('username') or ''}:{taken['password']}"
    tail_query = "&".join(f"{name}={value}" for name, value in kept)
    fragment = f"#{query}" if mark == "#" else ("#" + query.partition("#")[2] if "#" in query else "")
    bare = scheme + before_query + (f"?{tail_query}" if tail_query else "") + fragment
    shown_query = "&".join(f"{name}={SHOWN if credential_param(name) else value}" for name, value in params)
    shown = (
        scheme
        + (f"{SHOWN}@" if userinfo is not None else "")
        + before_query
        + (f"?{shown_query}" if mark == "?" and shown_query else "")
        + fragment
    )
    return Address(
        text=given,
        bare=bare,
        shown=shown,
        user=user,
        password=password,
        token=token or None,
        secrets=frozenset(secret for secret in secrets if secret),
    )


def _split_query(rest: str) -> tuple[str, str, str]:
    """``(before, mark, after)`` at the first ``?`` or ``#``: the user info never reaches past it."""
    at = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=-1)
    if at < 0:
        return rest, "", ""
    return rest[:at], rest[at], rest[at + 1 :]


def _params(query: str) -> list[tuple[str, str]]:
    query = query.partition("#")[0]
    out = []
    for part in re.split(r"[&;]", query):
        if part:
            name, _, value = part.partition("=")
            out.append((name, value))
    return out


def secrets_in_text(text: str) -> set[str]:
    """The secrets of every address in ``text`` (a command line, an engine list, ``uri:alice:pw@h``):
    each word holding ``://``, ``@`` or ``=`` is read as an address, a leading ``uri:`` dropped."""
    found: set[str] = set()
    for word in _WORD.findall(text or ""):
        if "://" not in word and "@" not in word and "=" not in word:
            continue
        if word.startswith("uri:"):
            word = word[len("uri:") :]
        elif "=" in word and "?" not in word and "://" not in word and "@" not in word:
            word = "?" + word  # a bare "token=..." (a --milvus-token=... style word)
        found |= parse_address(word).secrets
    return found


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """The secrets the Milvus variables of ``environ`` (default: this process's) hold: the token as it
    is, and every credential in an address they give."""
    environ = os.environ if environ is None else environ
    found: set[str] = set()
    for name in CREDENTIAL_ENV:
        value = (environ.get(name) or "").strip()
        if not value:
            continue
        if name in _ADDRESS_ENV:
            found |= secrets_in_text(value)
        else:
            found |= {value, unquote(value)}
    return found
