"""An engine's message names the option of the tool that prints it (issue 55 item 5): ``--milvus`` to a
user of ``rag-conformance``, ``--rqs-milvus`` to a user of pytest."""

from __future__ import annotations

import pytest

from conformance.engines import EngineError, _option, start_engine
from conformance.engines._container import _what_to_do


@pytest.fixture
def as_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_option, "_current", ["--rqs-milvus"])


def _uri_message(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("MILVUS_URI", raising=False)
    with pytest.raises(EngineError) as info:
        start_engine("uri")  # no server named: refused before anything starts
    return str(info.value)


@pytest.mark.usefixtures("as_pytest")
def test_pytest_hears_pytests_option_names(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "--rqs-milvus uri:<uri>" in _uri_message(monkeypatch)
    assert "--rqs-milvus lite" in _what_to_do("milvusdb/milvus:v2.5.16")


@pytest.mark.usefixtures("as_pytest")
def test_the_command_line_hears_its_own_while_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    with _option.speaking_as_cli():
        message = _uri_message(monkeypatch)
        assert "--milvus uri:<uri>" in message
        assert "--milvus lite" in message
        assert "--rqs-milvus" not in message
        assert "--rqs-milvus" not in _what_to_do("milvusdb/milvus:v2.5.16")
    assert "--rqs-milvus uri:<uri>" in _uri_message(monkeypatch)  # pytest's names again after it


def test_a_missing_docker_daemon_is_told_how_to_start_one() -> None:
    assert "dockerd" in _option.DOCKER_DAEMON_HINT
    assert "policy-rc.d" in _option.DOCKER_DAEMON_HINT
