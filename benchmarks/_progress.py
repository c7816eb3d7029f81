"""A one-line progress bar on stderr, with no dependency.

On a terminal the line is redrawn in place; into a file or a pipe (a ``nohup`` run) it prints a line at
most every ``log_interval`` seconds, so the log shows progress without thousands of lines.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress", "say"]


def say(message: str, *, stream: TextIO | None = None) -> None:
    """One status line on stderr (stdout stays free for the final summary)."""
    print(message, file=stream or sys.stderr, flush=True)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    """``label  done/total  pct  elapsed, ~left`` for one long step; use as a context manager."""

    def __init__(
        self, label: str, total: int, *, stream: TextIO | None = None, log_interval: float = 10.0
    ) -> None:
        self.label = label
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.log_interval = log_interval
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._drawn: int | None = None  # ``done`` at the last draw: never print the same line twice

    def __enter__(self) -> Progress:
        self._draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw(force=True)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, count: int = 1) -> None:
        """Count ``count`` more units done and redraw if it is time to."""
        self.done = min(self.total, self.done + count)
        self._draw(force=self.done == self.total)

    def _draw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        # Redraws cost a syscall; a terminal needs a few per second, a log file far fewer.
        interval = 0.2 if self.tty else self.log_interval
        if self._drawn == self.done or (not force and now - self._last_draw < interval):
            return
        self._drawn = self.done
        self._last_draw = now
        elapsed = now - self.started
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        width = 24
        filled = int(width * self.done / self.total)
        line = (
            f"{self.label:<28} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"{100 * self.done / self.total:3.0f}%  {_clock(elapsed)} elapsed"
            + (f", ~{_clock(left)} left" if self.done and self.done < self.total else "")
        )
        if self.tty:
            self.stream.write("\r" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
