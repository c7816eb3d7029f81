"""One reading of an engine address's credentials, in every form a user types (issue 53.3)."""

from __future__ import annotations

import pytest

from conformance.boundary._credentials import (
    CREDENTIAL_ENV,
    credential_param,
    environment_secrets,
    parse_address,
    secrets_in_text,
)
from conformance.boundary._redact import holds_secret, redact, redact_uri, register_uri_secrets
from conformance.stdio._process import without_credentials


@pytest.mark.parametrize(
    ("text", "bare", "shown", "token", "secrets"),
    [
        (
            "http://alice:pw0rd1@host:19530",
            "http://host:19530",
            "http://***@host:19530",
            "alice:pw0rd1",
            {"pw0rd1", "alice:pw0rd1"},
        ),
        (
            "alice:pw0rd2@host:19530",
            "host:19530",
            "***@host:19530",
            "alice:pw0rd2",
            {"pw0rd2", "alice:pw0rd2"},
        ),
        (
            "http://host:1/db?x=1&token=t0ken3",
            "http://host:1/db?x=1",
            "http://host:1/db?x=1&token=***",
            "t0ken3",
            {"t0ken3"},
        ),
        ("https://host?api_key=k3y4", "https://host", "https://host?api_key=***", "k3y4", {"k3y4"}),
        ("https://host?apikey=k3y5", "https://host", "https://host?apikey=***", "k3y5", {"k3y5"}),
        (
            "http://bob:p%40ss%2F6@host:1",
            "http://host:1",
            "http://***@host:1",
            "bob:p@ss/6",
            {"p%40ss%2F6", "p@ss/6", "bob:p%40ss%2F6", "bob:p@ss/6"},
        ),
        # A raw "@" and "/" in a password: the user info runs to the last "@" before the query.
        (
            "http://u:p@ss/w7@host:1",
            "http://host:1",
            "http://***@host:1",
            "u:p@ss/w7",
            {"p@ss/w7", "u:p@ss/w7"},
        ),
        (
            "http://host?user=bob&password=s3cret8",
            "http://host?user=bob",
            "http://host?user=bob&password=***",
            "bob:s3cret8",
            {"s3cret8"},
        ),
        ("http://127.0.0.1:19530", "http://127.0.0.1:19530", "http://127.0.0.1:19530", None, set()),
        ("lite", "lite", "lite", None, set()),
    ],
)
def test_every_form_is_read_apart(
    text: str, bare: str, shown: str, token: str | None, secrets: set[str]
) -> None:
    address = parse_address(text)
    assert address.bare == bare
    assert address.shown == shown
    assert address.token == token
    assert set(address.secrets) == secrets
    assert address.has_credentials == bool(secrets)


def test_credential_parameters_are_named_by_what_they_hold() -> None:
    for name in (
        "token",
        "TOKEN",
        "access_token",
        "password",
        "pwd",
        "api_key",
        "api-key",
        "apikey",
        "secret",
    ):
        assert credential_param(name), name
    for name in ("db", "timeout", "secure", "host"):
        assert not credential_param(name), name


def test_secrets_are_found_in_a_command_line_whatever_the_form() -> None:
    line = "run --milvus uri:alice:cl1pass@h:1 --other http://x:cl2pass@h ?token=cl3tok token=cl4tok"
    assert {"cl1pass", "cl2pass", "cl3tok", "cl4tok"} <= secrets_in_text(line)
    assert secrets_in_text("nothing here, just words") == set()


def test_the_environment_gives_the_token_and_the_uris_password() -> None:
    found = environment_secrets(
        {"MILVUS_TOKEN": "root:envtok1", "MILVUS_URI": "http://u:envpw2@h", "PATH": "/bin"}
    )
    assert {"root:envtok1", "envpw2", "u:envpw2"} <= found


def test_a_registered_scheme_less_password_is_hidden_in_every_text() -> None:
    register_uri_secrets("uri:alice:n0Scheme9@127.0.0.1:1")
    assert "n0Scheme9" not in redact("invalid address 'uri:alice:n0Scheme9@127.0.0.1:1'")
    assert "n0Scheme9" not in redact('{"milvus": "uri:alice:n0Scheme9@127.0.0.1:1"}')
    assert redact_uri("alice:n0Scheme9@127.0.0.1:1") == "***@127.0.0.1:1"
    assert "uri:***@" in redact("uri:someone:unregistered@h:1")  # the engine form, even unregistered


def test_a_program_under_test_gets_no_milvus_variable_and_no_copy_of_a_secret() -> None:
    register_uri_secrets("http://x:c0pyMe10@h:1")
    register_uri_secrets("http://y:milvus@h:1")  # a short, common password
    base = {name: "x" for name in CREDENTIAL_ENV} | {
        "MILVUS_DB": "analytics",  # no secret, but the endpoint's: it comes with prepare
        "PATH": "/opt/milvus/bin:/usr/bin",  # holds the word, is no copy of the secret: kept
        "MY_TOKEN": "c0pyMe10",
        "DB_URL": "postgres://x:c0pyMe10@db:5432/app",  # an address carrying the kit's secret
        "HTTPS_PROXY": "http://proxyuser:proxypass@proxy:3128",  # not the kit's secret: kept
    }
    kept = without_credentials(base)
    assert kept == {
        "PATH": "/opt/milvus/bin:/usr/bin",
        "HTTPS_PROXY": "http://proxyuser:proxypass@proxy:3128",
    }
    assert holds_secret("c0pyMe10")
    assert not holds_secret("a line that only mentions milvus")
