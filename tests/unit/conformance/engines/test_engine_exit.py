"""Leaving an engine's ``with`` block on a signal or an error: bounded, and never hiding why."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.boundary._protocol import MilvusEndpoint
from conformance.engines import Engine
from conformance.engines._engine import PROBE_AFTER_SIGNAL

URI = "http://127.0.0.1:9"


class Silent:
    """A client whose engine answers nothing: every call fails as past its deadline."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def list_collections(self, **kwargs: Any) -> list[str]:
        self.asked.append(kwargs.get("timeout"))
        raise TimeoutError("DEADLINE_EXCEEDED")

    def close(self) -> None:
        pass


def _engine(client: Silent) -> Engine:
    endpoint = MilvusEndpoint(uri=URI, collection_prefix="rqs_exit_test_")
    return Engine(backend="uri", endpoint=endpoint, version="v-test", client=client)  # type: ignore[arg-type]


def test_a_signal_probes_once_briefly_and_leaves_a_silent_engine_without_waiting_on_its_cleanup() -> None:
    client = Silent()
    with pytest.raises(KeyboardInterrupt), _engine(client):
        raise KeyboardInterrupt
    assert client.asked == [PROBE_AFTER_SIGNAL]  # the probe; no cleanup call waits a deadline after it


def test_a_cleanup_that_fails_on_the_way_out_of_an_error_is_a_note_on_it_not_a_new_error() -> None:
    with pytest.raises(ValueError, match="the real reason") as info, _engine(Silent()):
        raise ValueError("the real reason")
    assert any("cleanup could not list collections" in note for note in info.value.__notes__)


def test_without_an_error_a_failed_cleanup_is_the_error() -> None:
    with pytest.raises(Exception, match="cleanup could not list collections"), _engine(Silent()):
        pass
