"""An engine lost midway is not a failure of the implementation.

When a scenario that needs Milvus (``@needs:search``, ``@needs:lookup``, or an engine check) fails or
errors, the kit asks the engine one short question through its own client
(:meth:`~conformance.engines.Engine.check_reachable`). If the kit cannot reach it either, the engine is
lost: that scenario is NOT JUDGED, with the reason (which engine, when, during which scenario, what the
kit's own call got); every later scenario that needs Milvus is NOT JUDGED at once, without asking the
implementation; the scenarios that need no engine still run and are judged; and the run ends NOT JUDGED
(``rag-conformance run`` exits 2) with everything judged before the loss in its report. After the loss,
what fails while tearing down (collections that cannot be dropped from an engine that is gone) is a
warning, not an error of the last scenario; an engine lost during a teardown (found by the same short
question) is the run's loss in the same way.

An engine that is up but answers errors is not the implementation's fault either. The kit's own calls
(the oracle's searches) and the implementation's search and lookup calls are asked again once when
Milvus answers one with an error (:mod:`conformance.judging._engine_calls`, the judge), so a flaky
engine does not flip a verdict; when it errs twice in a row, or when the implementation's
``prepare`` fails while the recording proxy saw Milvus answer its calls with errors, the scenario is
NOT JUDGED (engine error) with the engine's words, and a run whose only problems are such scenarios
ends NOT JUDGED (exit 2), never DOES NOT CONFORM.

A collection of the run dropped by someone else (a ``clean --yes --force`` from another shell, a hand)
is told apart the same way, whatever the engine's words for it (they differ between Lite and the
server): when a scenario breaks, the kit lists the engine, and a collection the run made (its oracle's,
or one the implementation created through the proxy and did not drop) that is gone makes the scenario
NOT JUDGED, naming the collection and saying it was dropped from outside the run.

It works at the pytest layer, around each scenario's setup, call and teardown: the steps know nothing of
it, and the oracle and the judge only raise :class:`~conformance.boundary.EngineAnswerError`.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from datetime import UTC, datetime

import pytest

from ..boundary._errors import EngineAnswerError, EngineDeadlineError
from ..engines._engine import PROBE_AFTER_SIGNAL as _PROBE_AFTER_SIGNAL
from ..engines._engine import EngineUnavailableError
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
        self._prepare_errors: dict[int, str] = {}  # a session fixture's error, raised again per scenario
        self._late_in_a_row = 0  # scenarios in a row stopped by an engine call past its deadline

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self._cut_off(item)
        recorder = self._resources.recorder
        mark = recorder.mark() if recorder is not None else 0
        try:
            return (yield)
        except _BROKEN as exc:
            self._blame(item, exc, setup_mark=mark)
            raise

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            result = yield
        except _BROKEN as exc:
            self._blame(item, exc)
            raise
        if needs_engine(item):
            self._late_in_a_row = 0  # the engine answered a whole scenario: the next late call is a first
        return result

    def pytest_keyboard_interrupt(self) -> None:
        """After a signal, the run's teardown drops collections and closes the implementation: on an
        engine that does not answer a short probe, it would wait each call's deadline. So the engine is
        probed once, briefly, and given up on if it does not answer (what the run made stays for
        ``rag-conformance clean``)."""
        if self._resources.engine_unreachable(timeout=_PROBE_AFTER_SIGNAL) is not None:
            why = f"it did not answer a {_PROBE_AFTER_SIGNAL:g} s probe after the signal"
            self._resources.abandon_engine(why)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        except Exception as exc:
            if item.get_closest_marker("rqs_id") is None:
                raise
            if self._outcomes.lost_engine is None:
                problem = self._lost_while_tearing_down(exc)
                if problem is None:
                    raise
                self._outcomes.engine_lost(self._reason(item, f"{problem} (while tearing down)"))
                self._resources.abandon_engine("it was lost")
            for part in _leaves(exc):
                self._outcomes.warn(f"after the engine was lost, tearing down: {one_line(part)}")
            return None

    def _lost_while_tearing_down(self, exc: BaseException) -> str | None:
        """Whether the engine stopped answering while a scenario tore down (the session's teardown, after
        the last scenario, closes the implementation and drops the run's collections): asked once,
        briefly; once the run's engine is closed, a call of the kit's own that got no answer says so."""
        problem = self._resources.engine_unreachable()
        if problem is not None or self._resources.engine_started:
            return problem
        unanswered = (EngineDeadlineError, EngineUnavailableError)
        kit_call = next((e for e in _causes(exc) if isinstance(e, unanswered)), None)
        return None if kit_call is None else f"the kit's own call got no answer: {one_line(kit_call)}"

    def _cut_off(self, item: pytest.Item) -> None:
        """Once the engine is lost, a scenario that needs it is NOT JUDGED before anything is asked."""
        lost = self._outcomes.lost_engine
        if lost is None or not needs_engine(item):
            return
        info = self._resources.info
        if info is not None and not all(info.supports(need) for need in _needs(item)):
            return  # NOT APPLICABLE says more than NOT JUDGED: the capability check says it
        pytest.skip(NOT_JUDGED_PREFIX + lost)

    def _engine_answered(self, exc: BaseException, setup_mark: int | None) -> str | None:
        """What Milvus answered instead of results, if that is why ``exc`` broke the scenario: the kit's
        or the judge's :class:`EngineAnswerError`, or (in a setup: the implementation's ``prepare``)
        error answers the recording proxy saw. A session fixture's error comes again for every later
        scenario, so what it was is kept by the error's identity."""
        answered = next((e for e in _causes(exc) if isinstance(e, EngineAnswerError)), None)
        if answered is not None:
            return str(answered)
        recorder = self._resources.recorder
        if setup_mark is None or recorder is None:
            return None
        if id(exc) not in self._prepare_errors:
            calls = recorder.calls_since(setup_mark)
            errors = [f"{c.method}: {c.engine_error}" for c in calls if c.engine_error]
            if not errors:
                return None
            more = f"; {len(errors) - 1} more" if len(errors) > 1 else ""
            self._prepare_errors[id(exc)] = (
                f"Milvus answered the implementation's calls with errors while it prepared the corpus "
                f"({errors[0]}{more}); the scenario stopped at: {one_line(exc)}"
            )
        return self._prepare_errors[id(exc)]

    def _blame(self, item: pytest.Item, exc: BaseException, setup_mark: int | None = None) -> None:
        """Return if the scenario's failure stands; NOT JUDGED (a skip) if the engine is lost, or up but
        answering errors (see :meth:`_engine_answered`)."""
        if item.get_closest_marker("rqs_id") is None:
            return  # not a kit scenario (a team's own test, in a session the plugin loads in): it stands
        late = next((e for e in _causes(exc) if isinstance(e, EngineDeadlineError)), None)
        unavailable = next((e for e in _causes(exc) if isinstance(e, EngineUnavailableError)), None)
        if not needs_engine(item) and late is None and unavailable is None:
            return  # a scenario that needs no engine, broken by something else than the kit's engine
        if self._outcomes.lost_engine is None:
            problem = self._resources.engine_unreachable()
            if problem is None and late is not None:
                self._late_in_a_row += 1
                if self._late_in_a_row < 2:
                    self._outcomes.engine_erred(str(late))
                    pytest.skip(f"{NOT_JUDGED_PREFIX}{late}")
                problem = f"a second scenario in a row stopped on an engine call past its deadline: {late}"
            if problem is None and unavailable is not None:
                problem = str(unavailable)  # the kit could not start or reach it when a scenario needed it
            if problem is None:
                answered = self._engine_answered(exc, setup_mark)
                dropped = self._vanished(item, exc) if answered is None else None
                if dropped is not None:
                    self._outcomes.collection_dropped(dropped)
                    pytest.skip(f"{NOT_JUDGED_PREFIX}{dropped}")
                if answered is None:
                    return  # the kit still reaches the engine: the failure is the scenario's own
                self._outcomes.engine_erred(answered)
                pytest.skip(f"{NOT_JUDGED_PREFIX}{answered}")
            self._outcomes.engine_lost(self._reason(item, problem, reached=self._resources.engine_started))
            self._resources.abandon_engine("it was lost")  # nothing after this waits on it: teardown is quick
        lost = self._outcomes.lost_engine
        pytest.skip(f"{NOT_JUDGED_PREFIX}{lost}; the scenario stopped at: {one_line(exc)}")

    def _vanished(self, item: pytest.Item, exc: BaseException) -> str | None:
        """When a collection of this run was dropped by someone else (another command's ``clean --yes
        --force``, a hand's ``drop_collection``), what the engine then answered is not the
        implementation's answer: which collection, and where the scenario stopped."""
        gone = self._resources.vanished_collections()
        if not gone:
            return None
        scenario = _marker_arg(item, "rqs_id") or item.nodeid
        many = len(gone) > 1
        return (
            f"collection{'s' * many} {', '.join(repr(n) for n in gone)} of this run "
            f"{'were' if many else 'was'} dropped from outside the run (not by the implementation nor "
            f"the kit: another command's `rag-conformance clean --yes --force`, or a drop_collection by "
            f"hand) before or during scenario {scenario}, so its answer cannot be judged; the scenario "
            f"stopped at: {one_line(exc)}"
        )

    def _reason(self, item: pytest.Item, problem: str, *, reached: bool = True) -> str:
        elapsed = time.monotonic() - self._started
        at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        milvus = self._outcomes.milvus or {}
        engine = ", ".join(str(milvus[k]) for k in ("backend", "version") if milvus.get(k))
        scenario = _marker_arg(item, "rqs_id") or item.nodeid
        if not reached:  # never started or reached: it was not lost, it was never there
            return (
                f"Milvus could not be started or reached when scenario {scenario} first needed it, "
                f"{elapsed:.1f} s into the run ({at}): {problem}"
            )
        return (
            f"Milvus was lost {elapsed:.1f} s into the run ({at}), during scenario {scenario} "
            f"(engine: {engine or 'unknown'}): {problem}"
        )


def _needs(item: pytest.Item) -> list[str]:
    return [str(m.args[0]) for m in item.iter_markers("rqs_needs") if m.args]


def _marker_arg(item: pytest.Item, name: str) -> str | None:
    marker = item.get_closest_marker(name)
    return str(marker.args[0]) if marker and marker.args else None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, the errors it groups (Hypothesis's several failures) and what each was raised from."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The errors inside ``exc``: pytest groups those of several finalizers of one teardown."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc
