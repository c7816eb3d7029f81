"""Reading a child's pipes in bytes, never in lines: what the kit keeps of a flood is bounded.

A child can write a line of any length (a stack trace folded onto one line, a 200 MB log record) and any
number of lines. ``readline()`` without a limit holds a whole line in memory however long it is, and a
queue of lines grows as long as the child writes: a program writing 3 x 200 MB stderr lines took the kit
to 1.9 GB (issue 53). Here a line is read in chunks of :data:`CHUNK` bytes, only its first ``keep``
bytes are kept and the rest is counted, and the queue of stdout lines holds at most a budget of bytes:
past it, lines are dropped and one :class:`Overflowed` mark takes their place, so the kit knows it lost
lines (and restarts the program, which is out of step). The reader never waits: a child is never left
blocked on a full pipe while the kit writes a large request to it. So a flood costs the kit at most
about ``budget + keep + CHUNK`` bytes per stream.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from ..boundary._signals import SIGNAL_SLICE_SECONDS

__all__ = ["CHUNK", "ByteBudgetQueue", "CutLine", "Overflowed", "bounded_lines"]

CHUNK = 64 * 1024
"""Bytes read at a time from a pipe: the most a line costs beyond what is kept of it."""


@dataclass(frozen=True, slots=True)
class CutLine:
    """A line longer than the reader keeps: its first bytes, and how long it was in all (its ending
    excluded)."""

    head: bytes
    size: int

    def describe(self) -> str:
        """``a line of 209,715,200 bytes (the kit keeps 8,388,608 of a line): b'...'``"""
        return f"a line of {self.size:,} bytes, begun {self.head[:80]!r}"


@dataclass(frozen=True, slots=True)
class Overflowed:
    """Where lines were dropped: more than ``budget`` bytes of them were waiting to be read."""

    budget: int

    def describe(self) -> str:
        return f"more than {self.budget:,} bytes of lines were waiting to be read; later lines were dropped"


def bounded_lines(stream: IO[bytes], keep: int) -> Iterator[bytes | CutLine]:
    """The lines of ``stream`` without their ending (``\\n`` or ``\\r\\n``), each as bytes when it is
    at most ``keep`` bytes long, else as a :class:`CutLine` holding its first ``keep`` bytes; never more
    than ``keep + CHUNK`` bytes of one line in memory. Ends at end of stream."""
    while True:
        head = bytearray()
        size, ended, before, last = 0, False, b"", b""  # before: the byte before the ending "\n"
        while not ended:
            piece = stream.readline(CHUNK)
            if not piece:
                break
            before = last if len(piece) == 1 else piece[-2:-1]  # a "\r\n" may be split in two reads
            last = piece[-1:]
            size += len(piece)
            room = keep + 2 - len(head)  # room for the line and its "\r\n"
            if room > 0:
                head += piece[:room]
            ended = piece.endswith(b"\n")
        if size == 0:
            return
        ending = (2 if before == b"\r" else 1) if ended else 0
        body = size - ending
        if body <= keep:
            yield bytes(head[:body])
        else:
            yield CutLine(bytes(head[:keep]), body)


class ByteBudgetQueue:
    """A FIFO of items that each weigh some bytes, holding at most ``budget`` bytes (one item always
    fits into an empty queue). ``put`` never waits: an item that does not fit is dropped, and one
    :class:`Overflowed` mark is queued in the place of all the items dropped until it is read."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._items: deque[tuple[object, int]] = deque()
        self._held = 0
        self._overflowed = False  # a mark is queued and not yet read
        self._closed = False
        self._cond = threading.Condition()

    @property
    def held(self) -> int:
        """Bytes held now."""
        with self._cond:
            return self._held

    def put(self, item: object, weight: int) -> bool:
        """Queue ``item`` (or drop it for a mark, when it does not fit); False once the queue is closed."""
        with self._cond:
            if self._closed:
                return False
            if self._items and self._held + weight > self._budget:
                if not self._overflowed:
                    self._overflowed = True
                    self._items.append((Overflowed(self._budget), 0))
            else:
                self._items.append((item, weight))
                self._held += weight
            self._cond.notify_all()
            return True

    def put_last(self, item: object) -> None:
        """Queue ``item`` whatever the budget (the end-of-stream mark: it weighs nothing)."""
        with self._cond:
            self._items.append((item, 0))
            self._cond.notify_all()

    def get(self, timeout: float) -> object:
        """The oldest item; ``TimeoutError`` when none comes within ``timeout`` seconds."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while not self._items:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                # In slices: a stop signal handed to another thread does not wake this wait (see
                # SIGNAL_SLICE_SECONDS); its handler raises here once the slice ends.
                self._cond.wait(min(left, SIGNAL_SLICE_SECONDS))
            item, weight = self._items.popleft()
            self._held -= weight
            if isinstance(item, Overflowed):
                self._overflowed = False
            return item

    def push_back(self, item: object) -> None:
        """Put ``item`` back at the head (weighing nothing): the end-of-stream mark stays readable."""
        with self._cond:
            self._items.appendleft((item, 0))
            self._cond.notify_all()

    def close(self) -> None:
        """Drop what is held: the child is gone, nobody reads on."""
        with self._cond:
            self._closed = True
            self._items = deque(item for item in self._items if item[1] == 0)
            self._held = 0
            self._cond.notify_all()
