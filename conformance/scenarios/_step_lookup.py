"""A cache for pytest-bdd's step lookup, for the kit's own suite only.

pytest-bdd finds the definition of each step by asking pytest, for every fixture name in the session,
which definitions a node sees, then testing each step parser: about 100 names times every step of every
scenario. In a kit run that was close to a second of CPU, a quarter of a miniature's run in the
mutation matrix. The answer depends only on the step (its type and text) and on what the node sees; every
node of the kit's suite module sees the same definitions (the step modules are plugins, visible
everywhere), so the answer is computed once per step per module and reused.

Only nodes of the kit's own suite (``conformance/scenarios/_suite``) are cached; any other pytest-bdd test
in the same session goes through pytest-bdd unchanged. When pytest-bdd's internals differ from what this
expects (another version), nothing is patched: runs are slower, never different.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ._suite import SUITE_DIR

__all__ = ["install"]

_PARAMETERS = ["step", "fixturemanager", "node"]


def install() -> bool:
    """Wrap ``pytest_bdd.scenario.find_fixturedefs_for_step`` once; True when the cache is in place."""
    try:
        module = importlib.import_module("pytest_bdd.scenario")
        original = module.find_fixturedefs_for_step
    except (ImportError, AttributeError):
        return False
    if getattr(original, "rqs_cached", False):
        return True
    if list(inspect.signature(original).parameters) != _PARAMETERS:
        return False
    module.find_fixturedefs_for_step = _cached(original)
    return True


_suite_paths: dict[Any, bool] = {}


def _in_suite(path: Any) -> bool:
    if path not in _suite_paths:
        _suite_paths[path] = Path(path).resolve().parent == SUITE_DIR
    return _suite_paths[path]


def _cached(original: Callable[..., Iterable[Any]]) -> Callable[..., Iterable[Any]]:
    # One table, for the fixture manager of the session running now (one per session); a new session
    # starts a new table. Not a WeakKeyDictionary keyed by the manager: the cached fixture definitions
    # refer back to their manager, so no key would ever die, and every session of a process (the
    # mutation matrix runs a hundred in a few workers) stayed alive with its items and reports.
    current: dict[str, Any] = {"manager": None, "table": {}}

    def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
        path = getattr(node, "path", None)
        if path is None or not _in_suite(path):
            return original(step=step, fixturemanager=fixturemanager, node=node)
        if current["manager"] is not fixturemanager:
            current.update(manager=fixturemanager, table={})
        table: dict[tuple[Any, ...], list[Any]] = current["table"]
        key = (path, step.type, step.name)
        if key not in table:
            table[key] = list(original(step=step, fixturemanager=fixturemanager, node=node))
        return iter(table[key])

    find_fixturedefs_for_step.rqs_cached = True  # type: ignore[attr-defined]
    return find_fixturedefs_for_step
