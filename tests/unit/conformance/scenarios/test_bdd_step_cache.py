"""The step-lookup cache answers exactly what pytest-bdd answers, once per step of the kit's suite."""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.scenarios import _bdd_step_cache

SUITE_FILE = Path(_bdd_step_cache.__file__).resolve().parent / "_suite" / "test_features.py"


@dataclass(frozen=True)
class Step:
    type: str
    name: str


class Node:
    def __init__(self, path: Path) -> None:
        self.path = path


@dataclass(frozen=True)
class Definition:  # a step's fixture definition: its name and the step function behind it
    argname: str
    func: object


def given_a_result() -> None: ...


def when_a_result() -> None: ...


FUNCS = {"given": given_a_result, "when": when_a_result}


class FixtureManager:  # weak-referenceable, like pytest's; a new one per session, as pytest's
    def __init__(self, funcs: dict[str, object] | None = None) -> None:
        self.funcs = FUNCS if funcs is None else funcs
        self.asked: list[str] = []

    def getfixturedefs(self, name: str, node: Node) -> list[Definition]:
        self.asked.append(name)
        kind = name.removeprefix("step-")
        return [Definition(name, self.funcs[kind])] if kind in self.funcs else []


def _counting_original(calls: list[tuple[str, Path]]):
    def find_fixturedefs_for_step(step, fixturemanager, node):
        calls.append((step.name, node.path))
        yield from fixturemanager.getfixturedefs(f"step-{step.type}", node)

    return find_fixturedefs_for_step


def test_suite_nodes_are_answered_once_per_step_and_other_nodes_every_time(tmp_path: Path) -> None:
    calls: list[tuple[str, Path]] = []
    cached = _bdd_step_cache._cached(_counting_original(calls))
    manager = FixtureManager()
    given, when = Step("given", "a result"), Step("when", "a result")
    for _ in range(3):
        assert list(cached(given, manager, Node(SUITE_FILE))) == [Definition("step-given", given_a_result)]
        assert list(cached(when, manager, Node(SUITE_FILE))) == [Definition("step-when", when_a_result)]
    assert calls == [("a result", SUITE_FILE), ("a result", SUITE_FILE)]
    elsewhere = tmp_path / "test_theirs.py"
    for _ in range(2):
        assert list(cached(given, manager, Node(elsewhere))) == [Definition("step-given", given_a_result)]
    assert calls[2:] == [("a result", elsewhere)] * 2


def test_a_new_session_asks_pytest_only_for_the_definitions_found_before() -> None:
    calls: list[tuple[str, Path]] = []
    cached = _bdd_step_cache._cached(_counting_original(calls))
    given = Step("given", "a result")
    list(cached(given, FixtureManager(), Node(SUITE_FILE)))
    later = FixtureManager()
    # The next session's own definition (a new object), found by its name, without pytest-bdd's scan.
    assert list(cached(given, later, Node(SUITE_FILE))) == [Definition("step-given", given_a_result)]
    assert later.asked == ["step-given"]
    assert len(calls) == 1


def test_a_session_whose_definitions_differ_is_answered_by_pytest_bdd() -> None:
    calls: list[tuple[str, Path]] = []
    cached = _bdd_step_cache._cached(_counting_original(calls))
    given = Step("given", "a result")
    list(cached(given, FixtureManager(), Node(SUITE_FILE)))

    def other() -> None: ...

    changed = FixtureManager({"given": other})  # the same name, another step function
    assert list(cached(given, changed, Node(SUITE_FILE))) == [Definition("step-given", other)]
    assert len(calls) == 2
    gone = FixtureManager({})  # the definition is not there any more
    assert list(cached(given, gone, Node(SUITE_FILE))) == []
    assert len(calls) == 3


def test_an_unexpected_pytest_bdd_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("pytest_bdd.scenario")

    def find_fixturedefs_for_step(step, manager, node, extra=None):  # another signature
        return []

    fake.find_fixturedefs_for_step = find_fixturedefs_for_step
    monkeypatch.setitem(sys.modules, "pytest_bdd.scenario", fake)
    assert _bdd_step_cache.install() is False
    assert fake.find_fixturedefs_for_step is find_fixturedefs_for_step


def test_the_installed_pytest_bdd_gets_the_cache() -> None:
    assert _bdd_step_cache.install() is True
    assert importlib.import_module("pytest_bdd.scenario").find_fixturedefs_for_step.rqs_cached


def test_a_finished_session_is_not_kept_alive_by_its_cached_definitions() -> None:
    # pytest's fixture definitions refer back to their session's manager; the cache must not hold a
    # session that has ended (the mutation matrix runs a hundred sessions per process).
    import gc
    import weakref

    def find_fixturedefs_for_step(step, fixturemanager, node):
        # A definition that refers back to its manager, as pytest's do.
        yield Definition("step-given", types.SimpleNamespace(manager=fixturemanager))

    cached = _bdd_step_cache._cached(find_fixturedefs_for_step)
    step = Step("given", "a result")
    first = FixtureManager()
    list(cached(step, first, Node(SUITE_FILE)))
    gone = weakref.ref(first)
    del first
    list(cached(step, FixtureManager(), Node(SUITE_FILE)))  # the next session
    gc.collect()
    assert gone() is None, "the first session's fixture manager is still alive"
