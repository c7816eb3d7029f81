"""The ``uri`` backend: an existing Milvus server, reached with ``MILVUS_URI``/``MILVUS_TOKEN``/``MILVUS_DB``.

The token is held as a ``SecretStr`` and never printed; URIs are shown with any credentials redacted.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from ..boundary._credentials import parse_address
from ..boundary._errors import EngineError
from ..boundary._protocol import MilvusEndpoint
from ..boundary._redact import redact_uri, register_secret, scrub
from ._engine import Engine, EngineUnavailableError, open_client
from ._load import stretched
from ._option import engine_option

__all__ = ["ENV_DB", "ENV_TOKEN", "ENV_URI", "MAX_CONNECT_SECONDS", "start_uri"]

ENV_URI = "MILVUS_URI"
ENV_TOKEN = "MILVUS_TOKEN"
ENV_DB = "MILVUS_DB"
# Fail fast on an unreachable server: a typo in a URI should not cost a long startup timeout. On a busy
# machine the budget stretches with the load (_load), so a slow loopback server is not taken for none.
MAX_CONNECT_SECONDS = 10.0
_TRANSPORT_FAILURES = ("Fail connecting", "UNAVAILABLE", "GOAWAY", "too_many_pings")


def _connect(endpoint: MilvusEndpoint, timeout: float) -> Any:
    """A client within ``timeout`` seconds in all: an attempt the transport ends early (a busy server's
    gRPC GOAWAY, "too many pings", measured on Lite 2.5.1 under a load of 4 per core) is tried again
    while the budget lasts, and the last failure is the one reported."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            return open_client(endpoint, timeout=max(1.0, remaining))
        except EngineUnavailableError as exc:
            # Only the transport's failures are worth another try; a refused token says so at once.
            transport = any(word in str(exc) for word in _TRANSPORT_FAILURES)
            if not transport or deadline - time.monotonic() < 2.0 or not _listening(endpoint.uri):
                raise  # nothing listening there is an address to fix, said at once
            time.sleep(0.5)


def _listening(uri: str) -> bool:
    """Whether something accepts a TCP connection at ``uri``'s host and port (a busy server does)."""
    try:
        parts = urlsplit(uri)
        host, port = parts.hostname, parts.port or 19530
        if not host:
            return False
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except (OSError, ValueError):
        return False


def start_uri(*, uri: str | None, prefix: str, startup_timeout: float) -> Engine:
    """Reach the server at ``uri`` (or ``$MILVUS_URI``) and return an :class:`Engine` for it."""
    uri = uri or os.environ.get(ENV_URI, "").strip()
    if not uri:
        raise EngineError(
            f"the uri backend needs a server: set {ENV_URI} (and {ENV_TOKEN}, {ENV_DB} if needed), "
            f"or pass {engine_option()} uri:<uri>, or use {engine_option()} lite for a local milvus-lite "
            "server"
        )
    token = os.environ.get(ENV_TOKEN) or None
    uri, token = _credentials_apart(uri, token)
    endpoint = MilvusEndpoint(
        uri=uri,
        token=SecretStr(token) if token else None,
        db_name=os.environ.get(ENV_DB) or None,
        collection_prefix=prefix,
    )
    started = time.monotonic()
    timeout = min(startup_timeout, stretched(MAX_CONNECT_SECONDS))
    client = _connect(endpoint, timeout)
    try:
        version = str(client.get_server_version(timeout=timeout))
    except Exception as exc:  # connected but the server refuses to answer: auth, db, or not Milvus
        client.close()
        raise EngineUnavailableError(
            scrub(
                f"Milvus at {redact_uri(uri)} accepted the connection but not the first call "
                f"({type(exc).__name__}: {exc}); check {ENV_TOKEN} and {ENV_DB}, and that the URI "
                "points at a Milvus server",
                token,
            )
        ) from None
    return Engine(
        backend="uri",
        endpoint=endpoint,
        version=version,
        client=client,
        timeout=timeout,
        startup_seconds=time.monotonic() - started,
    )


def _credentials_apart(uri: str, token: str | None) -> tuple[str, str | None]:
    """``(uri without credentials, token)``, as :func:`~conformance.boundary._credentials.parse_address`
    reads them: ``user:password@`` (with or without a scheme) or a ``?token=``/``api_key`` parameter
    becomes the token Milvus takes unless ``MILVUS_TOKEN`` gives one, so the credentials travel the one
    way every client and the kit's recording proxy pass on (call metadata), never inside an address."""
    address = parse_address(uri)
    for secret in address.secrets:
        register_secret(secret)
    return address.bare, token or address.token
