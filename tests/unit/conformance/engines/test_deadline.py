"""Every call of the kit's own client is bounded by the engine-call deadline; a late one names the engine and
the call; an engine given up on is not asked again."""

from __future__ import annotations

import time
from typing import Any

import pytest

from conformance.boundary._errors import EngineDeadlineError, EngineError
from conformance.engines import _deadline
from conformance.engines._deadline import CALL_SECONDS_ENV, abandon, bounded_client, call_deadline

URI = "http://alice:Pl4nted@127.0.0.1:19530"


class FakeClient:
    """The few MilvusClient shapes that matter: a method with ``timeout``, one taking it through
    ``**kwargs`` (list_collections), and one that takes none (create_schema)."""

    def __init__(self, *, sleep: float = 0.0, error: Exception | None = None) -> None:
        self.seen: list[tuple[str, Any]] = []
        self._sleep = sleep
        self._error = error

    def has_collection(self, name: str, timeout: float | None = None, **kwargs: Any) -> bool:
        self.seen.append(("has_collection", timeout))
        time.sleep(self._sleep)
        if self._error is not None:
            raise self._error
        return True

    def list_collections(self, **kwargs: Any) -> list[str]:
        self.seen.append(("list_collections", kwargs.get("timeout")))
        return []

    def create_schema(self, **kwargs: Any) -> dict[str, Any]:
        self.seen.append(("create_schema", kwargs))
        return {}


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_deadline, "_abandoned", {})
    monkeypatch.setattr(_deadline, "load_stretch", lambda: 1.0)
    monkeypatch.delenv(CALL_SECONDS_ENV, raising=False)


def test_a_call_without_a_timeout_gets_the_deadline_and_one_with_its_own_keeps_it() -> None:
    fake = FakeClient()
    client = bounded_client(fake, URI)
    client.has_collection("c")
    client.has_collection("c", timeout=2.5)
    client.list_collections()
    client.create_schema(auto_id=False)
    assert fake.seen == [
        ("has_collection", 30.0),
        ("has_collection", 2.5),
        ("list_collections", 30.0),
        ("create_schema", {"auto_id": False}),  # no timeout where the method takes none
    ]


def test_the_deadline_stretches_with_the_load_and_its_base_is_an_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_deadline, "load_stretch", lambda: 2.5)
    assert call_deadline() == 75.0
    monkeypatch.setenv(CALL_SECONDS_ENV, "4")
    assert call_deadline() == 10.0


@pytest.mark.parametrize("value", ["soon", "0", "-3", "inf", "nan"])
def test_a_base_deadline_that_is_not_seconds_is_a_typed_error_saying_what_to_do(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(CALL_SECONDS_ENV, value)
    with pytest.raises(EngineError, match=f"{CALL_SECONDS_ENV}=.* is not a number of seconds above 0; unset"):
        call_deadline()


def test_a_call_that_outlasts_its_deadline_names_the_engine_and_the_call_never_the_password() -> None:
    client = bounded_client(FakeClient(sleep=0.05, error=RuntimeError("DEADLINE_EXCEEDED")), URI)
    with pytest.raises(EngineDeadlineError) as raised:
        client.has_collection("c", timeout=0.05)
    message = str(raised.value)
    assert "has_collection" in message
    assert "127.0.0.1:19530" in message
    assert "deadline of 0 s" in message
    assert "Pl4nted" not in message
    assert raised.value.call == "has_collection"


def test_an_error_the_engine_answers_in_time_is_passed_on_as_it_is() -> None:
    client = bounded_client(FakeClient(error=ValueError("collection not found")), URI)
    with pytest.raises(ValueError, match="collection not found"):
        client.has_collection("c")


def test_an_engine_given_up_on_is_not_asked_again() -> None:
    fake = FakeClient()
    client = bounded_client(fake, URI)
    abandon(URI)
    with pytest.raises(EngineDeadlineError, match=r"given up on .* has_collection was not sent"):
        client.has_collection("c")
    assert fake.seen == []
    assert bounded_client(FakeClient(), "http://127.0.0.1:1").has_collection("c")  # another engine is asked


def test_after_a_late_call_an_engine_that_does_not_answer_a_short_question_either_is_given_up_on() -> None:
    class Silent(FakeClient):
        def list_collections(self, **kwargs: Any) -> list[str]:
            self.seen.append(("list_collections", kwargs.get("timeout")))
            raise TimeoutError("DEADLINE_EXCEEDED")

    fake = Silent(sleep=0.05, error=RuntimeError("DEADLINE_EXCEEDED"))
    client = bounded_client(fake, URI)
    with pytest.raises(EngineDeadlineError):
        client.has_collection("c", timeout=0.05)
    assert fake.seen == [("has_collection", 0.05), ("list_collections", _deadline.PROBE_SECONDS)]
    given_up = r"given up on \(the kit's has_collection got no answer"
    with pytest.raises(EngineDeadlineError, match=given_up) as why:
        client.has_collection("c")  # a replay fails at once: no second deadline, saying why
    assert "nor its collection list within 5 s" in str(why.value)
    assert len(fake.seen) == 2


def test_an_engine_given_up_on_is_asked_afresh_once_its_run_forgives_it() -> None:
    abandon(URI)
    _deadline.forgive(URI)
    assert bounded_client(FakeClient(), URI).has_collection("c")


def test_a_late_short_collection_list_is_not_probed_again() -> None:
    """The probe's own question, asked as briefly (a check after a signal): one wait, not two."""

    class Silent(FakeClient):
        def list_collections(self, **kwargs: Any) -> list[str]:
            self.seen.append(("list_collections", kwargs.get("timeout")))
            time.sleep(0.05)
            raise TimeoutError("DEADLINE_EXCEEDED")

    fake = Silent()
    with pytest.raises(EngineDeadlineError):
        bounded_client(fake, URI).list_collections(timeout=0.05)
    assert fake.seen == [("list_collections", 0.05)]
