"""A progress bar on stderr for the evaluation, without a dependency.

On a terminal the bar is redrawn in place (``\\r``); into a pipe or a file (CI logs) it writes a plain
line at each tenth of the work instead, so a log shows progress without hundreds of lines.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """``label [#####.....] done/total  elapsed``; call it as ``progress(done, total)``."""

    width = 30

    def __init__(self, label: str, *, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._last_tenth = -1
        self._last_draw = 0.0

    def __call__(self, done: int, total: int) -> None:
        total = max(total, 1)
        done = min(max(done, 0), total)
        now = time.monotonic()
        if self.tty:
            if done < total and now - self._last_draw < 0.1:
                return  # a terminal needs a few redraws a second, not one per query
            self._last_draw = now
            self.stream.write("\r" + self._line(done, total, now))
            if done == total:
                self.stream.write("\n")
        else:
            tenth = done * 10 // total
            if tenth == self._last_tenth:
                return
            self._last_tenth = tenth
            self.stream.write(self._line(done, total, now) + "\n")
        self.stream.flush()

    def _line(self, done: int, total: int, now: float) -> str:
        filled = done * self.width // total
        bar = "#" * filled + "." * (self.width - filled)
        return f"{self.label} [{bar}] {done}/{total}  {now - self.started:.1f} s"
