"""A property's explicit examples, run in the kit's own loop before Hypothesis draws its own.

Every run asks about a thousand fixed inputs first (the spec's cases, hostile values by type). Through
Hypothesis's ``@example`` each one cost a rendering of its arguments and a reseeding of the global
random generators, passing or not: about a sixth of a run's own CPU (24 miniatures of the mutation
matrix: 64.8 CPU seconds through ``@example``, 53.3 here, the same verdicts). Here an example is
rendered only when it fails, and failures are reported as Hypothesis reports failing explicit examples:
one per distinct origin (the exception's type and the line that raised it, and so on down its context),
the one with the shortest rendering, with how many others failed the same way; several origins make a
group.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

__all__ = ["run_explicit"]

# What fails an example (Hypothesis's choice, so an example's verdict is the same either way). Anything
# else (a Ctrl-C, pytest's skip, the kit's NotApplicable) stops the loop at once.
_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit, GeneratorExit, pytest.fail.Exception)

_Origin = tuple[object, ...]


def run_explicit(prop: Callable[..., None], examples: Sequence[Mapping[str, Any]], seed: int) -> None:
    """Call ``prop`` with each example in order; raise the failures as described above, or return."""
    failed: list[tuple[str, BaseException]] = []
    with _seeded_random(seed):
        for values in examples:
            try:
                prop(**values)
            except _FAILURES as exc:
                failed.append((_call(values), exc))
    if not failed:
        return
    kept: dict[_Origin, list[tuple[str, BaseException]]] = {}
    for shown, exc in failed:
        kept.setdefault(_origin(exc), []).append((shown, exc))
    errors = []
    for same in kept.values():
        shown, exc = min(same, key=lambda pair: (len(pair[0]), pair[0]))
        if len(same) > 1:
            others = len(same) - 1
            exc.add_note(f"(note: {others} other explicit example{'s' * (others > 1)} also failed this way)")
        exc.add_note(f"Failing explicit example: {shown}")
        errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    raise BaseExceptionGroup(f"{len(errors)} distinct failures in explicit examples.", errors)


def _call(values: Mapping[str, Any]) -> str:
    """The example as Hypothesis shows a falsifying one: a call of the property, ``prop``."""
    return "prop(\n" + "".join(f"    {name}={value!r},\n" for name, value in values.items()) + ")"


def _origin(exc: BaseException, seen: tuple[BaseException, ...] = ()) -> _Origin:
    """Where ``exc`` comes from: its type, the line that raised it, and the origins of its context and,
    for a group, of what it groups."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = (tb.tb_frame.f_code.co_filename, tb.tb_lineno) if tb is not None else None
    seen = (*seen, exc)
    context = exc.__context__
    inner = exc.exceptions if isinstance(exc, BaseExceptionGroup) else ()
    return (
        type(exc),
        where,
        _origin(context, seen) if context is not None and context not in seen else (),
        tuple(_origin(e, seen) for e in inner if e not in seen),
    )


@contextmanager
def _seeded_random(seed: int) -> Iterator[None]:
    """The global generators seeded for the loop and restored after, as Hypothesis does around each
    example: an implementation drawing from them answers the same in every run with this seed."""
    state, np_state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        random.setstate(state)
        np.random.set_state(np_state)
