"""A passive pytest plugin that times a ``rag-conformance run`` from the inside, phase by phase.

Loaded into the run with ``-p benchmarks.children.conftiming``; it writes its figures as JSON to the file
named by ``RQS_BENCH_TIMINGS`` at the end. It measures, it changes nothing. Method:

- every fixture's setup is timed EXCLUSIVE of fixtures it sets up inside itself (a stack), so the
  engine start inside the adapter's setup is counted once, as engine start;
- each test item is timed whole (setup, call, teardown); the infrastructure fixtures set up inside it
  (engine, proxy, adapter, corpus) and the session teardown after the last item are subtracted, and
  what remains is that scenario's own time, a property scenario's (ids ``prop-*``) or another's;
- wall-clock stamps (``time.time``) mark the first item's start and the session's end, so the parent
  can attribute interpreter start-up, imports and collection before, and the report and exit after.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Generator
from typing import Any

import pytest

ENV = "RQS_BENCH_TIMINGS"
ENGINE = ("rqs_engine",)
CORPUS = ("rqs_scenario_corpus", "rqs_oracle", "rqs_corpus")
ADAPTER = ("_rqs_loaded", "rqs_recorder", "rqs_adapter_endpoint")

_fixtures: dict[str, float] = defaultdict(float)
_stack: list[float] = []  # time spent in nested fixture setups, per open setup
_phases: dict[str, float] = defaultdict(float)
_infra_in_item = 0.0
_stamps: dict[str, float] = {"plugin_loaded": time.time()}
_engine: dict[str, Any] = {}
_counts: dict[str, int] = defaultdict(int)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[None, Any, None]:
    """Exclusive setup time per fixture name; the engine's own start-up figure when it appears."""
    global _infra_in_item
    start = time.perf_counter()
    _stack.append(0.0)
    outcome = yield
    elapsed = time.perf_counter() - start
    exclusive = elapsed - _stack.pop()
    if _stack:
        _stack[-1] += elapsed
    name = fixturedef.argname
    _fixtures[name] += exclusive
    if name in ENGINE + CORPUS + ADAPTER:
        _infra_in_item += exclusive
        phase = "milvus_start" if name in ENGINE else "corpus_ingest" if name in CORPUS else "adapter_proxy"
        _phases[phase] += exclusive
    if name == "rqs_engine":
        engine = outcome.get_result() if outcome.exception is None else None
        if engine is not None:
            _engine.update(startup_seconds=engine.startup_seconds, pid=engine.pid, backend=engine.backend)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    """The last item's teardown finalises the session fixtures: engine stop, proxy, adapter close."""
    global _infra_in_item
    start = time.perf_counter()
    yield
    if nextitem is None:
        elapsed = time.perf_counter() - start
        _phases["session_teardown"] += elapsed
        _infra_in_item += elapsed


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    """Whole-item time minus the infrastructure set up (or torn down) inside it."""
    global _infra_in_item
    _stamps.setdefault("first_item", time.time())
    _infra_in_item = 0.0
    start = time.perf_counter()
    yield
    own = time.perf_counter() - start - _infra_in_item
    _stamps["last_item_end"] = time.time()
    marker = item.get_closest_marker("rqs_id")
    kind = "properties" if marker and str(marker.args[0]).startswith("prop-") else "scenarios"
    _phases[kind] += own
    _counts[kind] += 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Mark the end of the items; the report is written after this."""
    _stamps["session_finish"] = time.time()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Write the figures for the parent (nothing when not asked to)."""
    path = os.environ.get(ENV)
    if not path:
        return
    _stamps["unconfigure"] = time.time()
    figures = {
        "phases_s": {k: round(v, 4) for k, v in _phases.items()},
        "fixtures_s": {
            k: round(v, 4) for k, v in sorted(_fixtures.items(), key=lambda kv: -kv[1]) if v > 0.01
        },
        "items": dict(_counts),
        "engine": _engine,
        "stamps": _stamps,
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(figures, handle, indent=1)
