"""Lines read in bytes, never whole: what a reader keeps of any line is bounded (issue 53.4)."""

from __future__ import annotations

import io
import threading

import pytest

from conformance.stdio import _streams
from conformance.stdio._streams import ByteBudgetQueue, CutLine, bounded_lines


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


def test_the_queue_waits_for_room_and_close_lets_a_waiting_writer_go() -> None:
    queue = ByteBudgetQueue(10)
    assert queue.put("a", 6)
    assert queue.put("b", 4)  # exactly full
    done: list[bool] = []
    writer = threading.Thread(target=lambda: done.append(queue.put("c", 5)))
    writer.start()
    writer.join(0.2)
    assert writer.is_alive()  # no room: waits
    assert queue.held == 10
    assert queue.get(1.0) == "a"  # room made
    writer.join(5.0)
    assert done == [True]
    assert queue.held == 9
    blocked = threading.Thread(target=lambda: done.append(queue.put("d", 8)))
    blocked.start()
    queue.close()
    blocked.join(5.0)
    assert done == [True, False]  # closed: not queued, and not stuck
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
