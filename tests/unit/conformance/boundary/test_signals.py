"""SIGINT, SIGTERM and SIGHUP each become an interrupt that carries the signal, while a command runs, and
the handlers are as they were after it."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator

import pytest

from conformance.boundary import _signals
from conformance.boundary._signals import STOP_SIGNALS, Interrupted, interrupting_signals, is_ours, signal_of


@pytest.fixture
def default_handlers() -> Iterator[None]:
    """The handlers a fresh process has (pytest and other tests may have set their own)."""
    saved = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s in STOP_SIGNALS:
        signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
        _signals._RECEIVED.clear()  # the command line would exit at once after a signal it received


@pytest.mark.usefixtures("default_handlers")
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_each_stop_signal_is_an_interrupt_named_as_itself_and_the_handlers_come_back(name: str) -> None:
    signum = getattr(signal, name)
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    with interrupting_signals():
        handler = signal.getsignal(signum)
        assert is_ours(handler)
        with pytest.raises(Interrupted) as raised:
            handler(signum, None)  # type: ignore[operator]
    assert isinstance(raised.value, KeyboardInterrupt)
    assert signal_of(raised.value) == signum
    assert str(raised.value) == name
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before


def test_an_interrupt_without_a_signal_is_sigint_and_one_named_after_a_signal_is_that_signal() -> None:
    assert signal_of(KeyboardInterrupt()) == signal.SIGINT
    assert signal_of(KeyboardInterrupt("SIGTERM")) == signal.SIGTERM


@pytest.mark.usefixtures("default_handlers")
def test_a_signal_someone_else_claimed_stays_theirs() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup
    try:
        with interrupting_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


class _RaisesInItsDestructor:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __del__(self) -> None:
        raise self.exc


def test_an_interrupt_python_swallows_is_kept_and_raised_again_at_the_next_call() -> None:
    from conformance.boundary._asking import ask

    class Normalizer:
        def quality_score(self, request: object) -> float:
            return 0.5

    seen: list[BaseException] = []

    def mine(unraisable: object) -> None:
        seen.append(unraisable.exc_value)  # type: ignore[attr-defined]

    previous, sys.unraisablehook = sys.unraisablehook, mine
    try:
        with _signals.keeping_swallowed_interrupts():
            _RaisesInItsDestructor(ValueError("not an interrupt"))  # dropped at once: its __del__ runs
            _RaisesInItsDestructor(Interrupted(signal.SIGTERM))
            assert [type(e) for e in seen] == [ValueError]  # other unraisables go where they went
            with pytest.raises(Interrupted) as raised:
                ask(Normalizer(), "quality_score", None)  # a safe point: before the call
            assert raised.value.signum == signal.SIGTERM
            assert _signals.take_swallowed() is None  # raised once, then forgotten
        assert sys.unraisablehook is mine  # the hook that was there is back
    finally:
        sys.unraisablehook = previous
        _signals._SWALLOWED.clear()
