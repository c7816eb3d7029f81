"""The one progress bar of ``rag-reference evaluate`` and ``calibrate``, ``rag-conformance upgrade`` and
the benchmarks: tqdm's, on stderr.

One bar per long step (ingest, queries, calibration cases). It is drawn only when stderr is a terminal:
into a pipe or a CI log it is off, as it is with ``--no-progress``.
The library functions take a plain ``progress(done, total)`` callback, so they need no tqdm;
:class:`ProgressStep` is such a callback with a bar of its own.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

__all__ = ["ProgressStep", "progress_bar"]


def progress_bar(label: str, total: int | None = None, *, enabled: bool = True, unit: str = "it") -> Any:
    """A tqdm bar on stderr labelled ``label``; a no-op bar when ``enabled`` is false or not on a terminal.

    Use it as a context manager, so the line is finished even when the step fails.
    """
    return _bar_class()(
        desc=label,
        total=total,
        unit=unit,
        file=sys.stderr,
        disable=None if enabled else True,  # None: tqdm turns itself off when stderr is not a TTY
        dynamic_ncols=True,
        leave=True,
    )


@cache
def _bar_class() -> Any:
    from tqdm import tqdm

    class Bar(tqdm):  # type: ignore[misc]  # tqdm ships no type hints
        # No monitor thread: the benchmarks time the very loops these bars count.
        monitor_interval = 0

    return Bar


class ProgressStep:
    """A ``progress(done, total)`` callback that draws one bar for one step of a library call.

    The bar opens at the first call (the library reports 0 before it starts the step) and is finished
    when ``done`` reaches ``total``, so the steps of one call (ingest, then the queries) follow each
    other line by line, each with its own elapsed time. Leaving the ``with`` block finishes a bar that a
    failure interrupted.
    """

    def __init__(self, label: str, *, enabled: bool = True, unit: str = "it") -> None:
        self.label, self.enabled, self.unit = label, enabled, unit
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = progress_bar(self.label, total, enabled=self.enabled, unit=self.unit)
        self._bar.total = total
        self._bar.update(done - self._bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        """Finish the bar, if one is open."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressStep:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
