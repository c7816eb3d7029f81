"""The step-lookup cache answers exactly what pytest-bdd answers, once per step of the kit's suite."""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.scenarios import _step_lookup

SUITE_FILE = Path(_step_lookup.__file__).resolve().parent / "_suite" / "test_features.py"


@dataclass(frozen=True)
class Step:
    type: str
    name: str


class Node:
    def __init__(self, path: Path) -> None:
        self.path = path


class FixtureManager:  # weak-referenceable, like pytest's
    pass


def _counting_original(calls: list[tuple[str, Path]]):
    def find_fixturedefs_for_step(step, fixturemanager, node):
        calls.append((step.name, node.path))
        yield from (f"def-of-{step.type}-{step.name}", "another")

    return find_fixturedefs_for_step


def test_suite_nodes_are_answered_once_per_step_and_other_nodes_every_time(tmp_path: Path) -> None:
    calls: list[tuple[str, Path]] = []
    cached = _step_lookup._cached(_counting_original(calls))
    manager = FixtureManager()
    given, when = Step("given", "a result"), Step("when", "a result")
    for _ in range(3):
        assert list(cached(given, manager, Node(SUITE_FILE))) == ["def-of-given-a result", "another"]
        assert list(cached(when, manager, Node(SUITE_FILE))) == ["def-of-when-a result", "another"]
    assert calls == [("a result", SUITE_FILE), ("a result", SUITE_FILE)]
    elsewhere = tmp_path / "test_theirs.py"
    for _ in range(2):
        assert list(cached(given, manager, Node(elsewhere))) == ["def-of-given-a result", "another"]
    assert calls[2:] == [("a result", elsewhere)] * 2
    # A new session (fixture manager) asks again: fixture definitions belong to their session.
    list(cached(given, FixtureManager(), Node(SUITE_FILE)))
    assert len(calls) == 5


def test_an_unexpected_pytest_bdd_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("pytest_bdd.scenario")

    def find_fixturedefs_for_step(step, manager, node, extra=None):  # another signature
        return []

    fake.find_fixturedefs_for_step = find_fixturedefs_for_step
    monkeypatch.setitem(sys.modules, "pytest_bdd.scenario", fake)
    assert _step_lookup.install() is False
    assert fake.find_fixturedefs_for_step is find_fixturedefs_for_step


def test_the_installed_pytest_bdd_gets_the_cache() -> None:
    assert _step_lookup.install() is True
    assert importlib.import_module("pytest_bdd.scenario").find_fixturedefs_for_step.rqs_cached


def test_a_finished_session_is_not_kept_alive_by_its_cached_definitions() -> None:
    # pytest's fixture definitions refer back to their session's manager; the cache must not hold a
    # session that has ended (the mutation matrix runs a hundred sessions per process).
    import gc
    import weakref

    def find_fixturedefs_for_step(step, fixturemanager, node):
        yield ("definition", fixturemanager)  # refers back to its manager, as pytest's do

    cached = _step_lookup._cached(find_fixturedefs_for_step)
    step = Step("given", "a result")
    first = FixtureManager()
    list(cached(step, first, Node(SUITE_FILE)))
    gone = weakref.ref(first)
    del first
    list(cached(step, FixtureManager(), Node(SUITE_FILE)))  # the next session
    gc.collect()
    assert gone() is None, "the first session's fixture manager is still alive"
