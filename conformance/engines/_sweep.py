"""The kit's own leftovers on a shared engine: collections of runs that never got to drop them.

Every collection a run creates starts with its prefix, ``rqs_<run id>_`` (:func:`make_prefix`), and the
run drops them at its end, also on failure. Only a run killed outright (SIGKILL, a lost machine) leaves
them behind. :func:`kit_leftovers` finds exactly those names, never another one; ``rag-conformance
clean`` lists and drops them. A collection of another run still in progress looks the same as a
leftover: the engine keeps no creation time the kit could read on every backend, so the listing says
which runs they belong to, and dropping asks for ``--yes`` (or one run's ``--prefix``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["KIT_COLLECTION", "describe_leftovers", "kit_leftovers", "list_names"]

KIT_COLLECTION = re.compile(r"(rqs_[0-9a-f]{8}_)\S+")
"""A collection name a kit run made: the random prefix :func:`~conformance.engines._engine.make_prefix`
gives every run (eight hex digits), then the run's own suffix. A prefix chosen by hand (``run_id``) is
not swept: ``rqs_with_underscore_x`` could as well be a team's own name."""


def kit_leftovers(names: Iterable[str], *, except_prefix: str | None = None) -> dict[str, list[str]]:
    """The kit-made collections among ``names``, by run prefix (``except_prefix``'s left out)."""
    runs: dict[str, list[str]] = {}
    for name in sorted(names):
        match = KIT_COLLECTION.fullmatch(name)
        if match is None or match.group(1) == except_prefix:
            continue
        runs.setdefault(match.group(1), []).append(name)
    return runs


def describe_leftovers(runs: dict[str, list[str]]) -> str:
    """``3 collections of 2 earlier runs (rqs_ab12cd34_, rqs_0011aabb_)``."""
    count = sum(len(names) for names in runs.values())
    return (
        f"{count} collection{'s' * (count != 1)} of {len(runs)} other kit run{'s' * (len(runs) != 1)} "
        f"({', '.join(runs)})"
    )


def list_names(client: Any, timeout: float | None = None) -> list[str]:
    """Every collection name on the engine (one short call)."""
    bound = {} if timeout is None else {"timeout": timeout}
    return [str(name) for name in client.list_collections(**bound)]
