"""The store's errors never show a secret: a password in the URI, shown or not, is redacted."""

from __future__ import annotations

import pytest

from reference import MilvusUnavailableError
from reference.store._errors import redact_uri
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
    ],
)
def test_redact_uri_hides_credentials_with_or_without_scheme(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
