"""What one scenario asked: its calls per capability and, for a property, the examples that ran.

A property scenario is one pytest item around a Hypothesis run of many examples, so pytest (and
Hypothesis's own ``--hypothesis-show-statistics``, which sees only Hypothesis-decorated tests) would
say it ran once. The kit counts instead: :func:`ask` counts every call it makes of the implementation,
the property runner counts every example it runs, into the tally of the scenario running now (a
context variable the reporting plugin opens around each item). Outside a tally nothing is counted.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["CAPABILITY_OF", "Tally", "count_call", "count_example", "tallying"]

CAPABILITY_OF = {
    "canonicalize_label": "labels",
    "quality_score": "quality",
    "post_process": "post_process",
    "prepare": "prepare",
    "search": "search",
    "lookup": "lookup",
}
"""The capability each Protocol operation serves (``prepare`` serves search and lookup: its own)."""


@dataclass
class Tally:
    """Calls of the implementation per capability, and the property examples run (0: not a property)."""

    calls: Counter[str] = field(default_factory=Counter)
    examples: int = 0


_CURRENT: ContextVar[Tally | None] = ContextVar("rqs_tally", default=None)


@contextlib.contextmanager
def tallying(tally: Tally) -> Iterator[Tally]:
    """Count into ``tally`` until the block ends."""
    token = _CURRENT.set(tally)
    try:
        yield tally
    finally:
        _CURRENT.reset(token)


def count_call(operation: str) -> None:
    tally = _CURRENT.get()
    if tally is not None:
        tally.calls[CAPABILITY_OF.get(operation, operation)] += 1


def count_example() -> None:
    tally = _CURRENT.get()
    if tally is not None:
        tally.examples += 1
