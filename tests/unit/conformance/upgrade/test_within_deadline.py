"""The upgrade waits on an implementation's call at most the engine-call deadline: a call that never returns
(its client waits for ever on a frozen engine) is NOT JUDGED naming the engine and the call, and the engine
is given up on."""

from __future__ import annotations

import threading

import pytest

from conformance.boundary._errors import EngineDeadlineError
from conformance.engines import EngineUnavailableError
from conformance.upgrade import _sides


class _Engine:
    def __init__(self, *, answers: bool = True) -> None:
        self.abandoned = False
        self.answers = answers

    def abandon(self, why: str = "") -> None:
        self.abandoned = True
        self.why = why

    def check_reachable(self) -> None:
        if not self.answers:
            raise EngineUnavailableError("Milvus at http://127.0.0.1:9 did not answer the kit's own client")


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


def test_a_close_that_fails_because_the_engine_froze_is_left_behind_on_the_way_out() -> None:
    # The reference store's own 10 s deadline came before the kit's (3 s stretched to 12 on a loaded
    # machine): its close raised EngineTimeoutError out of the upgrade's unwinding, a traceback and exit 1
    # where the frozen engine's NOT JUDGED (exit 2) was due.
    def times_out() -> None:
        raise TimeoutError("Milvus did not answer within 10 s when asked to check the collection")

    frozen = _Engine(answers=False)
    assert _sides.within_deadline(times_out, "close", "x", frozen, quiet=True) is None  # type: ignore[arg-type]
    assert frozen.abandoned
    # An engine that still answers: the close itself failed, and says so.
    with pytest.raises(TimeoutError):
        _sides.within_deadline(times_out, "close", "x", _Engine(), quiet=True)  # type: ignore[arg-type]
