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
    # Two tables. ``found`` holds, per step, the definitions of the session running now (one fixture
    # manager per session; a new session starts a new table). ``named`` outlives sessions: per step,
    # the fixture name and function of each definition that matched. Step functions are module-level
    # and stay the same objects from one session to the next (the mutation matrix runs a hundred in a
    # few processes), so a later session asks pytest only for those names, not for every fixture.
    # Neither table keys on the manager: fixture definitions refer back to it, so a finished session
    # would never be freed.
    current: dict[str, Any] = {"manager": None, "found": {}}
    named: dict[tuple[Any, ...], tuple[tuple[str, Any], ...]] = {}

    def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
        path = getattr(node, "path", None)
        if path is None or not _in_suite(path):
            return original(step=step, fixturemanager=fixturemanager, node=node)
        if current["manager"] is not fixturemanager:
            current.update(manager=fixturemanager, found={})
        found: dict[tuple[Any, ...], list[Any]] = current["found"]
        key = (path, step.type, step.name)
        if key not in found:
            found[key] = _by_name(named.get(key), fixturemanager, node)
            if found[key] is None:  # a step not seen yet, or definitions that changed: ask pytest-bdd
                found[key] = list(original(step=step, fixturemanager=fixturemanager, node=node))
                named[key] = tuple((definition.argname, definition.func) for definition in found[key])
        return iter(found[key])

    find_fixturedefs_for_step.rqs_cached = True  # type: ignore[attr-defined]
    return find_fixturedefs_for_step


def _by_name(names: tuple[tuple[str, Any], ...] | None, fixturemanager: Any, node: Any) -> list[Any] | None:
    """This session's definitions of the (name, function) pairs an earlier session found, or ``None``
    when there were none recorded or one is no longer there as it was."""
    if names is None:
        return None
    definitions = []
    for name, func in names:
        same = [d for d in fixturemanager.getfixturedefs(name, node) or () if d.func is func]
        if len(same) != 1:
            return None
        definitions.append(same[0])
    return definitions
