"""Lines read in bytes, never whole: what a reader keeps of any line is bounded (issue 53.4)."""

from __future__ import annotations

import io
import signal
import threading
import time

import pytest

from conformance.stdio import _streams
from conformance.stdio._streams import ByteBudgetQueue, CutLine, Overflowed, bounded_lines

REPLY_TIMEOUT = 30.0  # the kit's default wait for a stdio reply


class _Counting(io.RawIOBase):
    """A stream of ``size`` bytes of ``x`` then ``\\n``, made as it is read: nothing is held whole."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.ended = False
        self.largest = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        self.largest = max(self.largest, n)
        if n:
            buffer[:n] = b"x" * n
            self.left -= n
            return n
        if not self.ended:
            self.ended = True
            buffer[:1] = b"\n"
            return 1
        return 0


def _lines(data: bytes, keep: int) -> list[bytes | CutLine]:
    return list(bounded_lines(io.BufferedReader(io.BytesIO(data)), keep))


def test_lines_come_without_their_endings_lf_or_crlf() -> None:
    assert _lines(b"a\nbb\r\n\nccc", 8) == [b"a", b"bb", b"", b"ccc"]


def test_a_line_longer_than_kept_is_cut_with_its_whole_size() -> None:
    assert _lines(b"123456789\r\nok\n", 8) == [CutLine(b"12345678", 9), b"ok"]
    assert _lines(b"12345678\r\n", 8) == [b"12345678"]  # exactly the bound, crlf ended: whole


@pytest.mark.parametrize("chunk", [1, 2, 3, 5])
def test_endings_split_across_reads_are_found(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(_streams, "CHUNK", chunk)
    data = b"abc\r\n" + b"x" * 11 + b"\r\n" + b"yy\n"
    assert _lines(data, 8) == [b"abc", CutLine(b"x" * 8, 11), b"yy"]


def test_a_200_mb_line_is_read_without_ever_holding_it() -> None:
    stream = _Counting(200 * 1024 * 1024)
    lines = list(bounded_lines(io.BufferedReader(stream, buffer_size=_streams.CHUNK), 4096))
    assert lines == [CutLine(b"x" * 4096, 200 * 1024 * 1024)]
    assert stream.largest <= 2 * _streams.CHUNK  # never asked for more than a chunk or so at once


def test_the_queue_never_waits_it_drops_past_its_budget_and_marks_the_place_once() -> None:
    queue = ByteBudgetQueue(10)
    assert queue.put("a", 6)
    assert queue.put("b", 4)  # exactly full
    assert queue.put("c", 5)  # dropped: no room, and the writer is not kept waiting
    assert queue.put("d", 1)  # dropped too: one mark stands for every line lost
    assert queue.held == 10
    assert [queue.get(1.0) for _ in range(3)] == ["a", "b", Overflowed(10)]
    assert queue.put("e", 5)  # room again, and a later loss would be marked again
    assert queue.get(1.0) == "e"
    queue.close()
    assert not queue.put("f", 1)  # closed: nobody reads on
    assert queue.held == 0


def test_one_item_fits_an_empty_queue_whatever_its_weight_and_the_end_mark_stays() -> None:
    queue = ByteBudgetQueue(10)
    assert queue.put("big", 100)
    end = object()
    queue.put_last(end)
    assert queue.get(1.0) == "big"
    assert queue.get(1.0) is end
    queue.push_back(end)
    assert queue.get(1.0) is end
    with pytest.raises(TimeoutError):
        queue.get(0.01)


class _StopError(Exception):
    pass


def _stop(_signum: int, _frame: object) -> None:
    raise _StopError


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX threads' signals")
def test_a_signal_the_kernel_hands_to_another_thread_still_ends_the_wait_for_a_reply() -> None:
    # The kernel gives a process's signal to any of its threads that does not block it; when that is a
    # reader blocked on its pipe, the reply wait on the main thread is not interrupted, and the handler
    # (raising, as the kit's stop handler does) runs only once the wait returns: a Ctrl-C would wait out
    # the 30 s reply timeout. Here the signal is sent to another thread on purpose.
    queue = ByteBudgetQueue(10)
    previous = signal.signal(signal.SIGUSR1, _stop)

    def signal_this_thread_once_the_wait_began() -> None:
        while not queue._cond._waiters:  # type: ignore[attr-defined]  # CPython's Condition keeps its waiters
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)

    other = threading.Thread(target=signal_this_thread_once_the_wait_began)
    try:
        started = time.monotonic()
        other.start()
        with pytest.raises(_StopError):
            queue.get(REPLY_TIMEOUT)
        waited = time.monotonic() - started
    finally:
        other.join()
        signal.signal(signal.SIGUSR1, previous)
    assert waited < REPLY_TIMEOUT / 2, f"the wait went on {waited:.1f} s of its {REPLY_TIMEOUT:g} s"
