"""SIGINT, SIGTERM and SIGHUP each become an interrupt that carries the signal, while a command runs, and
the handlers are as they were after it."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
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
        _signals._UNDELIVERED.clear()


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
        _signals._UNDELIVERED.clear()


@pytest.mark.usefixtures("default_handlers")
def test_an_interrupt_a_library_caught_is_raised_again_at_the_next_call_until_delivered() -> None:
    # Whatever swallowed it (here: an `except BaseException` turning it into another error), a signal
    # received and not delivered to the command stops it at the next safe point; once delivered, never twice.
    from conformance.boundary._asking import ask

    class Normalizer:
        def quality_score(self, request: object) -> float:
            return 0.5

    with interrupting_signals():
        with contextlib.suppress(BaseException):  # a library's catch-all swallows the interrupt
            signal.raise_signal(signal.SIGHUP)
        with pytest.raises(Interrupted) as raised:
            ask(Normalizer(), "quality_score", None)
        assert raised.value.signum == signal.SIGHUP
        assert ask(Normalizer(), "quality_score", None) == 0.5  # raised once
        _signals.note_received(signal.SIGTERM)
        _signals.delivered()  # pytest stopped the session with it
        assert ask(Normalizer(), "quality_score", None) == 0.5


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX threads' signals")
@pytest.mark.usefixtures("default_handlers")
def test_a_stop_signal_another_thread_gets_still_ends_a_wait_for_a_thread_at_once() -> None:
    # The upgrade waits for each implementation call on a thread (its deadline); the kernel may hand a
    # Ctrl-C to any thread that does not block it, and then the join is not interrupted.
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=True)
    deadline = 30.0

    def signal_another_thread() -> None:
        time.sleep(0.2)  # the main thread is in its join by then, or the signal comes before: either ends it
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)

    with interrupting_signals():
        worker.start()
        started = time.monotonic()
        threading.Thread(target=signal_another_thread).start()
        with pytest.raises(Interrupted) as stopped:
            _signals.join_in_slices(worker, deadline)
        waited = time.monotonic() - started
    release.set()
    assert stopped.value.signum == signal.SIGTERM
    assert waited < deadline / 2, f"the join went on {waited:.1f} s of its {deadline:g} s"


def test_a_thread_the_kit_starts_leaves_the_stop_signals_to_the_main_thread() -> None:
    blocked: list[set[int]] = []

    def thread() -> None:
        _signals.for_the_main_thread()
        blocked.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))

    runner = threading.Thread(target=thread)
    runner.start()
    runner.join()
    assert set(STOP_SIGNALS) <= blocked[0]
    assert not set(STOP_SIGNALS) & set(signal.pthread_sigmask(signal.SIG_BLOCK, []))  # not this thread's
