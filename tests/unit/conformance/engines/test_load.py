"""The kit's fixed waiting budgets stretch with the machine's load, never shrink, and are bounded."""

from __future__ import annotations

import os

import pytest

from conformance.engines import EngineUnavailableError, _load
from conformance.engines._load import MAX_STRETCH, load_stretch, stretched


@pytest.fixture
def cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_load, "usable_cores", lambda: 2)


@pytest.mark.parametrize(
    ("load", "want"),
    [(0.0, 1.0), (1.9, 1.0), (2.0, 1.0), (5.0, 2.5), (8.0, MAX_STRETCH), (80.0, MAX_STRETCH)],
)
def test_a_budget_stretches_by_the_load_over_the_cores(
    monkeypatch: pytest.MonkeyPatch, cores: None, load: float, want: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (load, 0.0, 0.0))
    assert load_stretch() == pytest.approx(want)
    assert stretched(10.0) == pytest.approx(10.0 * want)


def test_a_system_without_a_load_average_waits_as_an_idle_one(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", no_load)
    assert stretched(10.0) == 10.0


def test_the_uri_connect_budget_is_stretched(monkeypatch: pytest.MonkeyPatch, cores: None) -> None:
    """An unreachable URI on a busy machine waits the stretched budget (the message would name it)."""
    from conformance.engines import _uri

    seen: list[float] = []

    def refuse(endpoint: object, *, timeout: float) -> None:
        seen.append(timeout)
        raise _uri.EngineUnavailableError("refused")

    monkeypatch.setattr(os, "getloadavg", lambda: (6.0, 0.0, 0.0))
    monkeypatch.setattr(_uri, "open_client", refuse)
    with pytest.raises(_uri.EngineUnavailableError):
        _uri.start_uri(uri="http://127.0.0.1:1", prefix="rqs_x_", startup_timeout=120.0)
    assert seen == [pytest.approx(30.0)]


# -- a connect the transport ends early is tried again within the budget -----------------------------


def _endpoint() -> object:
    from conformance.boundary._protocol import MilvusEndpoint

    return MilvusEndpoint(uri="http://127.0.0.1:1", collection_prefix="rqs_t_")


def test_a_connect_a_busy_server_drops_is_tried_again_within_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Measured on Lite 2.5.1 at a load of 4 per core: the first attempt ended by a GOAWAY ("too many
    # pings") long before its budget, and the run was NOT JUDGED on a server that was up.
    from conformance.engines import _uri

    attempts: list[float] = []

    def flaky(endpoint: object, timeout: float) -> str:
        attempts.append(timeout)
        if len(attempts) == 1:
            raise EngineUnavailableError("cannot connect (MilvusException: Fail connecting to server)")
        return "client"

    monkeypatch.setattr(_uri, "open_client", flaky)
    monkeypatch.setattr(_uri, "_listening", lambda uri: True)  # the server is there, only busy
    assert _uri._connect(_endpoint(), 10.0) == "client"  # type: ignore[arg-type]
    assert len(attempts) == 2
    assert attempts[1] < 10.0  # one budget in all, not one per attempt


def test_a_refusal_that_is_not_the_transport_is_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.engines import _uri

    attempts: list[float] = []

    def refused(endpoint: object, timeout: float) -> str:
        attempts.append(timeout)
        raise EngineUnavailableError("cannot connect (MilvusException: auth check failure, check the token)")

    monkeypatch.setattr(_uri, "open_client", refused)
    monkeypatch.setattr(_uri, "_listening", lambda uri: True)
    with pytest.raises(EngineUnavailableError, match="auth check failure"):
        _uri._connect(_endpoint(), 10.0)  # type: ignore[arg-type]
    assert len(attempts) == 1


def test_nothing_listening_is_said_at_once_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.engines import _uri

    attempts: list[float] = []

    def down(endpoint: object, timeout: float) -> str:
        attempts.append(timeout)
        raise EngineUnavailableError("cannot connect (MilvusException: Fail connecting to server)")

    monkeypatch.setattr(_uri, "open_client", down)
    with pytest.raises(EngineUnavailableError, match="Fail connecting"):
        _uri._connect(_endpoint(), 10.0)  # type: ignore[arg-type]  # port 1: nothing listens
    assert len(attempts) == 1
