"""The store's errors never show a secret: a password in the URI, shown or not, is redacted."""

from __future__ import annotations

import pytest

from reference import MilvusUnavailableError
from reference.store._errors import redact_uri, scrub, uri_secrets
from reference.store._store import MilvusKnowledgeStore

DIM = 8


def test_password_in_uri_is_redacted() -> None:
    with pytest.raises(MilvusUnavailableError) as info:
        MilvusKnowledgeStore.connect("http://root:hunter2@127.0.0.1:1", collection="c", dim=DIM, timeout=5)
    assert "hunter2" not in str(info.value)
    assert "127.0.0.1:1" in str(info.value)


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("http://root:pw@db:19530", "http://***@db:19530"),
        ("root:pw@db:19530", "***@db:19530"),
        ("https://db:443", "https://db:443"),
        ("./local.db", "./local.db"),
        ("http://db:19530?token=abc", "http://db:19530?token=***"),
        (
            "http://db:19530/?db_name=x&TOKEN=root:pw&timeout=3",
            "http://db:19530/?db_name=x&TOKEN=***&timeout=3",
        ),
        ("http://u:p@db?password=pw#frag", "http://***@db?password=***#frag"),
    ],
)
def test_redact_uri_hides_credentials_with_or_without_scheme(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown


def test_the_secrets_of_a_uri_are_every_spelling_of_its_password_and_token() -> None:
    secrets = uri_secrets("http://root:p%40ss@db:19530/?token=t%26k&db=x", "env-token")
    assert set(secrets) == {"p%40ss", "p@ss", "t%26k", "t&k", "env-token"}
    assert list(secrets) == sorted(secrets, key=len, reverse=True)  # a longer secret goes first
    said = "refused root:p@ss with token t&k (env-token)"
    assert scrub(said, secrets) == "refused root:*** with token *** (***)"
    assert uri_secrets("./local.db") == ()


def test_a_token_in_the_uri_is_never_shown_when_unreachable() -> None:
    with pytest.raises(MilvusUnavailableError) as info:
        MilvusKnowledgeStore.connect("http://127.0.0.1:1/?token=Sup3rT0k", collection="c", dim=DIM, timeout=5)
    assert "Sup3rT0k" not in str(info.value)
    assert "token=***" in str(info.value)
