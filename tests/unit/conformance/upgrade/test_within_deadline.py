"""The upgrade waits on an implementation's call at most the engine-call deadline: a call that never returns
(its client waits for ever on a frozen engine) is NOT JUDGED naming the engine and the call, and the engine
is given up on."""

from __future__ import annotations

import threading

import pytest

from conformance.boundary._errors import EngineDeadlineError
from conformance.upgrade import _sides


class _Engine:
    def __init__(self) -> None:
        self.abandoned = False

    def abandon(self, why: str = "") -> None:
        self.abandoned = True
        self.why = why


@pytest.fixture(autouse=True)
def _short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sides, "call_deadline", lambda: 0.2)


def test_a_call_that_never_returns_is_a_deadline_error_and_the_engine_is_given_up_on() -> None:
    engine = _Engine()
    never = threading.Event()
    with pytest.raises(EngineDeadlineError, match=r"uri:http://127\.0\.0\.1:9 stopped answering: .* lookup"):
        _sides.within_deadline(never.wait, "lookup", "uri:http://127.0.0.1:9", engine)  # type: ignore[arg-type]
    assert engine.abandoned
    # Given up on: the next call is not even made, and closing on the way out says nothing.
    with pytest.raises(EngineDeadlineError, match="was not asked"):
        _sides.within_deadline(lambda: 1, "lookup", "uri:http://127.0.0.1:9", engine)  # type: ignore[arg-type]
    assert _sides.within_deadline(never.wait, "close", "x", engine, quiet=True) is None  # type: ignore[arg-type]
    never.set()


def test_a_call_in_time_returns_its_value_and_its_error_as_they_are() -> None:
    engine = _Engine()
    assert _sides.within_deadline(lambda: 42, "lookup", "x", engine) == 42  # type: ignore[arg-type]

    def broken() -> None:
        raise ValueError("the implementation's own error")

    with pytest.raises(ValueError, match="own error"):
        _sides.within_deadline(broken, "lookup", "x", engine)  # type: ignore[arg-type]
    assert not engine.abandoned
