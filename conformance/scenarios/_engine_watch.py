"""An engine lost midway is not a failure of the implementation.

When a scenario that needs Milvus (``@needs:search``, ``@needs:lookup``, or an engine check) fails or
errors, the kit asks the engine one short question through its own client
(:meth:`~conformance.engines.Engine.check_reachable`). If the kit cannot reach it either, the engine is
lost: that scenario is NOT JUDGED, with the reason (which engine, when, during which scenario, what the
kit's own call got); every later scenario that needs Milvus is NOT JUDGED at once, without asking the
implementation; the scenarios that need no engine still run and are judged; and the run ends NOT JUDGED
(``rag-conformance run`` exits 2) with everything judged before the loss in its report. After the loss,
what fails while tearing down (collections that cannot be dropped from an engine that is gone) is a
warning, not an error of the last scenario.

It works at the pytest layer, around each scenario's setup, call and teardown: the steps, the oracle and
the judge know nothing of it.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from datetime import UTC, datetime

import pytest

from ..reporting import NOT_JUDGED_PREFIX
from ..reporting._outcomes import OutcomeCollector
from ._resources import MILVUS_CAPABILITIES, RunResources, one_line

__all__ = ["EngineWatch", "needs_engine"]

# What a scenario raises when it breaks: any error, and pytest.fail's outcome. Never a skip, an
# expected failure or an interrupt: those say something else than "broken".
_BROKEN = (Exception, pytest.fail.Exception)


def needs_engine(item: pytest.Item) -> bool:
    """Whether ``item`` is a kit scenario that needs Milvus: an engine check, or a search or lookup."""
    if item.get_closest_marker("rqs_id") is None:
        return False
    if item.get_closest_marker("rqs_engine_check") is not None:
        return True
    return any(need.partition(":")[0] in MILVUS_CAPABILITIES for need in _needs(item))


class EngineWatch:
    """A pytest plugin object, one per session: tells an engine lost from a failure of the implementation."""

    def __init__(self, resources: RunResources, outcomes: OutcomeCollector) -> None:
        self._resources = resources
        self._outcomes = outcomes
        self._started = time.monotonic()

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self._cut_off(item)
        try:
            return (yield)
        except _BROKEN as exc:
            self._blame(item, exc)
            raise

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        except _BROKEN as exc:
            self._blame(item, exc)
            raise

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        except Exception as exc:
            if self._outcomes.lost_engine is None or item.get_closest_marker("rqs_id") is None:
                raise
            for part in _leaves(exc):
                self._outcomes.warn(f"after the engine was lost, tearing down: {one_line(part)}")
            return None

    def _cut_off(self, item: pytest.Item) -> None:
        """Once the engine is lost, a scenario that needs it is NOT JUDGED before anything is asked."""
        lost = self._outcomes.lost_engine
        if lost is None or not needs_engine(item):
            return
        info = self._resources.info
        if info is not None and not all(info.supports(need) for need in _needs(item)):
            return  # NOT APPLICABLE says more than NOT JUDGED: the capability check says it
        pytest.skip(NOT_JUDGED_PREFIX + lost)

    def _blame(self, item: pytest.Item, exc: BaseException) -> None:
        """Return if the scenario's failure stands; NOT JUDGED (a skip) if the engine is lost."""
        if not needs_engine(item):
            return
        if self._outcomes.lost_engine is None:
            problem = self._resources.engine_unreachable()
            if problem is None:
                return  # the kit still reaches the engine: the failure is the scenario's own
            self._outcomes.engine_lost(self._reason(item, problem))
        lost = self._outcomes.lost_engine
        pytest.skip(f"{NOT_JUDGED_PREFIX}{lost}; the scenario stopped at: {one_line(exc)}")

    def _reason(self, item: pytest.Item, problem: str) -> str:
        elapsed = time.monotonic() - self._started
        at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        milvus = self._outcomes.milvus or {}
        engine = ", ".join(str(milvus[k]) for k in ("backend", "version") if milvus.get(k))
        scenario = _marker_arg(item, "rqs_id") or item.nodeid
        return (
            f"Milvus was lost {elapsed:.1f} s into the run ({at}), during scenario {scenario} "
            f"(engine: {engine or 'unknown'}): {problem}"
        )


def _needs(item: pytest.Item) -> list[str]:
    return [str(m.args[0]) for m in item.iter_markers("rqs_needs") if m.args]


def _marker_arg(item: pytest.Item, name: str) -> str | None:
    marker = item.get_closest_marker(name)
    return str(marker.args[0]) if marker and marker.args else None


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The errors inside ``exc``: pytest groups those of several finalizers of one teardown."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc
