"""The one progress bar of ``rag-reference evaluate`` and ``calibrate``, ``rag-conformance upgrade`` and
the benchmarks: tqdm's, on stderr.

One bar per long step (ingest, queries, calibration cases). It is drawn only when stderr is a terminal:
into a pipe or a CI log it is off, as it is with ``--no-progress``.
The library functions take a plain ``progress(done, total)`` callback, so they need no tqdm;
:class:`ProgressStep` is such a callback with a bar of its own. Without tqdm (a bare install, without
the ``evaluation`` extra) every bar is a silent one, so ``rag-reference ingest`` runs all the same.
"""

from __future__ import annotations

import importlib.util
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


class _SilentBar:
    """What a bar offers its callers, drawing nothing: the bar where tqdm is not installed."""

    disable = True

    def __init__(self, *, total: int | None = None, **_options: Any) -> None:
        self.total, self.n = total, 0

    def update(self, count: int = 1) -> None:
        self.n += count

    def set_postfix_str(self, *_args: Any, **_options: Any) -> None:
        pass

    def write(self, text: str, file: Any = None) -> None:
        print(text, file=file or sys.stderr)

    def close(self) -> None:
        pass

    def __enter__(self) -> _SilentBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@cache
def _bar_class() -> Any:
    if importlib.util.find_spec("tqdm") is None:
        return _SilentBar
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
