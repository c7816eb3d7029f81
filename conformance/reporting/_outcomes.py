"""Collects the pytest outcomes of the kit's scenarios into a :class:`~conformance.reporting.Report`, and
writes it (``report.json``, ``junit.xml``) when the session ends.

A run the kit could not judge ends NOT JUDGED: before its first scenario (:meth:`OutcomeCollector.not_judged`,
no scenarios), or midway when the engine was lost (:meth:`OutcomeCollector.engine_lost`, the scenarios
judged until then kept). From pytest, either is its usage-error exit code.
"""

from __future__ import annotations

import contextlib
import hashlib
import platform
import signal
import sys
import time
from collections.abc import Generator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .._version import kit_version
from ..boundary._errors import ConformanceError
from ..boundary._tally import Tally, tallying
from ..boundary._visible import visible_text
from ..options import RunOptions
from ..spec._paths import spec_path
from ._classify import classify, with_step
from ._junit import write_junit
from ._redacted import redacted
from ._replay import replay_hint
from ._report import (
    Environment,
    Interruption,
    Report,
    ScenarioResult,
    build_report,
    interrupted_report,
    not_judged_report,
)
from ._scope import (
    COLLECTION_DROPPED_REASON,
    ENGINE_ERRORS_REASON,
    property_lines,
    requirement_number,
    verdict_text,
)
from ._table import format_table
from ._writing import OutputNotWrittenError, write_report_files

__all__ = ["NOTES", "OutcomeCollector", "spec_sha256"]


NOTES = pytest.StashKey[list[str]]()
"""Per test item: what the judge noticed that is reported but never failed (notes, extra reply fields)."""
_WARNINGS_SHOWN = 10
_LOST_ENGINE_ADVICE = "check the engine (its log, memory, disk, the network to it) and run again"
_ENGINE_ERRORS_ADVICE = (
    "the engine, not the implementation, failed them; check its log and load, and run again"
)


def spec_sha256() -> str | None:
    path = spec_path()
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


class OutcomeCollector:
    """A pytest plugin object: one per session, kept in the config stash."""

    key = pytest.StashKey["OutcomeCollector"]()

    def __init__(self, config: pytest.Config, options: RunOptions) -> None:
        self.config = config
        self.options = options
        self.report_dir = Path(options.report) if options.report else None
        self.results: dict[str, ScenarioResult] = {}
        self.adapter: Any = None
        self.milvus: dict[str, Any] | None = None
        self.report: Report | None = None
        self.reason: str | None = None
        self.lost_engine: str | None = None
        self.engine_errors: list[str] = []  # why each scenario the engine's errors left NOT JUDGED
        self.dropped_collections: list[str] = []  # why each scenario a dropped collection left NOT JUDGED
        self.warnings: list[str] = []
        self.advice: list[str] = []
        self._failed_steps: dict[str, str] = {}
        self.unselected_spec: list[str] = []  # @spec hashes of the transcriptions -k left out
        self._properties: set[str] = set()
        self.interruption: Interruption | None = None
        self._started = time.monotonic()
        self._running: pytest.Item | None = None
        self._finished = False
        self._tallies: dict[str, Tally] = {}  # per item: its calls, and a property's examples
        self.output_error: OutputNotWrittenError | None = None  # report.json / junit.xml not written
        config.stash[self.key] = self

    def not_judged(self, reason: str) -> None:
        """The run cannot judge the implementation (adapter or engine unusable): NOT JUDGED, ``reason``."""
        self.reason = reason

    def engine_lost(self, reason: str) -> None:
        """The engine was lost midway (``reason``: which, when, where): the run ends NOT JUDGED.

        Only the first loss counts: every scenario after it is cut off with the same reason.
        """
        if self.lost_engine is None:
            self.lost_engine = reason

    def engine_erred(self, what: str) -> None:
        """A scenario is NOT JUDGED because Milvus answered errors (``what``: the engine's words)."""
        self.engine_errors.append(what)

    def collection_dropped(self, what: str) -> None:
        """A scenario is NOT JUDGED because a collection of the run was dropped from outside it."""
        self.dropped_collections.append(what)

    def warn(self, text: str) -> None:
        """A warning for the report (e.g. a stdio program's stdout noise); each text is kept once."""
        if text not in self.warnings:
            self.warnings.append(text)

    def handshake_notes(self) -> list[str]:
        """What the run notes about the implementation's own description (never a failure)."""
        if self.adapter is None:
            return []
        notes = []
        extra = sorted(self.adapter.model_extra or {})
        if extra:
            notes.append(
                "the start reply (describe) carried fields the protocol does not define: "
                f"{', '.join(extra)}; kept in environment.adapter.extra"
            )
        if self.adapter.language is None:
            notes.append('the start reply does not say its language: shown as unknown; add "language"')
        return notes

    def advise(self, text: str) -> None:
        """Advice for the report: a choice the spec allows that defeats its purpose (never a failure)."""
        if text not in self.advice:
            self.advice.append(text)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        # The spec's scenarios a run leaves out (-k) are still the spec's: counted, as not judged.
        for item in items:
            spec_hash = _marker_arg(item, "rqs_spec")
            if spec_hash and item.get_closest_marker("rqs_engine_check") is None:
                self.unselected_spec.append(spec_hash)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, object]:
        self._running = item  # left set when an interrupt ends the protocol: it says where the run stopped
        # Every call the item makes of the implementation (setup's session fixtures included: the
        # first item needing the corpus sends prepare) and every example a property runs.
        with tallying(self._tallies.setdefault(item.nodeid, Tally())):
            result = yield
        self._running = None
        return result

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """SIGINT, or SIGTERM turned into an interrupt: the run ends INTERRUPTED, saying when and where."""
        exc = excinfo.value
        signum = getattr(exc, "signum", None) or (signal.SIGTERM if str(exc) == "SIGTERM" else signal.SIGINT)
        running = self._running
        self.interruption = Interruption(
            signal=signal.Signals(signum).name,
            exit_code=128 + int(signum),
            at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            seconds_into_run=round(time.monotonic() - self._started, 1),
            during=None if running is None else (_marker_arg(running, "rqs_id") or running.nodeid),
        )

    def _counts(self, nodeid: str) -> dict[str, Any]:
        tally = self._tallies.get(nodeid) or Tally()
        return {"calls": dict(sorted(tally.calls.items())), "examples": tally.examples or 1}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
        outcome = yield
        scenario_id = _marker_arg(item, "rqs_id")
        if scenario_id is None:
            return
        report: pytest.TestReport = outcome.get_result()
        status, message = classify(report, call)
        _show_controls(report)
        broken: tuple[str, ...] = ()
        rules: tuple[str, ...] = ()
        if status == "failed" and call.excinfo is not None:
            # A reply the model rejected names the requirements it broke; any other failed assertion is
            # the scenario's own check, so it breaks the scenario's requirement.
            violations = getattr(call.excinfo.value, "violations", ())
            broken = tuple(dict.fromkeys(v.requirement for v in violations))
            rules = tuple(dict.fromkeys(v.rule.id for v in violations))
            broken = broken or (_marker_arg(item, "rqs_req") or "unassigned",)
        notes = tuple(item.stash.get(NOTES, ()))
        failed_step = self._failed_steps.pop(item.nodeid, None)
        if message and failed_step and status in ("failed", "errored"):
            message = with_step(message, failed_step, rules)
        previous = self.results.get(item.nodeid)
        duration = report.duration + (previous.duration_s if previous else 0.0)
        if previous is not None and (status is None or previous.status in ("failed", "errored")):
            # A later phase only matters when it breaks an item that had not broken yet.
            update = {
                "duration_s": round(duration, 6),
                "notes": tuple(dict.fromkeys((*previous.notes, *notes))),
                **self._counts(item.nodeid),
            }
            self.results[item.nodeid] = previous.model_copy(update=update)
            return
        if status is None:
            return
        feature, scenario = _names(item)
        if item.get_closest_marker("rqs_property") is not None:
            self._properties.add(scenario_id)
        requirement_id = _marker_arg(item, "rqs_req") or "unassigned"
        self.results[item.nodeid] = ScenarioResult(
            id=scenario_id,
            requirement=feature.strip() or "(no feature)",
            requirement_id=requirement_id,
            requirement_number=requirement_number(requirement_id),
            name=scenario.strip() or item.name,
            status=status,
            message=message,
            derived=item.get_closest_marker("rqs_derived") is not None,
            engine_check=item.get_closest_marker("rqs_engine_check") is not None,
            spec_hash=_marker_arg(item, "rqs_spec"),
            duration_s=round(duration, 6),
            broken_requirements=broken,
            rules=rules,
            notes=notes,
            # Sorted: pytest-bdd keeps a scenario's tags in a set, so their order follows the hash seed.
            needs=tuple(sorted({str(m.args[0]) for m in item.iter_markers("rqs_needs") if m.args})),
            **self._counts(item.nodeid),
        )

    def pytest_bdd_step_error(self, request: pytest.FixtureRequest, step: Any) -> None:
        # Say which Gherkin step broke: "Then A appears before B" locates a failure at a glance.
        self._failed_steps[request.node.nodeid] = f"step '{step.keyword} {step.name}'".replace("  ", " ")

    def environment(self) -> Environment:
        adapter = None
        if self.adapter is not None:
            fields = {"name", "version", "language", "homepage"}
            adapter = self.adapter.model_dump(mode="json", include=fields)
            adapter["capabilities"] = sorted(str(c) for c in self.adapter.capabilities)
            if self.adapter.model_extra:  # kept, as every reply's undefined fields are
                adapter["extra"] = dict(self.adapter.model_extra)
        return Environment(
            kit_version=kit_version(),
            spec_sha256=spec_sha256(),
            adapter=adapter,
            milvus=self.milvus,
            hypothesis_seed=self.options.seed,
            options=self.options.model_dump(mode="json", exclude_defaults=True),
            python=platform.python_version(),
            platform=f"{sys.platform}-{platform.machine()}",
        )

    # trylast: in a run that could not judge, the one-error JUnit file replaces pytest's empty one.
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.finish(session)

    def finish(self, session: pytest.Session) -> None:
        """Build the report and write it (once: an interrupted teardown may call this early)."""
        if self._finished:
            return
        self._finished = True
        if self.interruption is not None and (self.results or self.options.judging):
            judged = self._judged_report() if self.results else None
            self.report = interrupted_report(judged, self.interruption, self.environment())
            self.report = self.report.model_copy(update={"warnings": tuple(self.warnings)})
        elif self.reason is not None:
            self.report = not_judged_report(self.reason, self.environment(), warnings=self.warnings)
            self.report = redacted(self.report.model_copy(update={"notes": tuple(self.handshake_notes())}))
            xmlpath = getattr(self.config.option, "xmlpath", None)
            if xmlpath:  # pytest's own --junitxml file would be an empty suite: one error says why
                Path(xmlpath).parent.mkdir(parents=True, exist_ok=True)
                with contextlib.suppress(OutputNotWrittenError):  # pytest said it could not write it
                    write_junit(self.report, xmlpath)
        elif self.results:
            report = self._judged_report()
            reason = None
            n = report.summary.not_judged
            many = n != 1
            if n and self.lost_engine is not None:
                reason = (
                    f"{self.lost_engine}; {n} scenario{'s' * many} that need{'s' * (not many)} "
                    f"Milvus could not be judged: {_LOST_ENGINE_ADVICE}"
                )
            elif n and self.dropped_collections:
                reason = (
                    f"{COLLECTION_DROPPED_REASON}, so {n} scenario{'s' * many} could not be judged (the "
                    f"first: {self.dropped_collections[0]}): run again when no other command cleans "
                    "this engine (`rag-conformance clean --yes` leaves a live run's collections alone; "
                    "--force does not)"
                )
            elif n and self.engine_errors:
                reason = (
                    f"{ENGINE_ERRORS_REASON}, twice in a row for the same question, in {n} "
                    f"scenario{'s' * many}, which could not be judged (the first: {self.engine_errors[0]}): "
                    f"{_ENGINE_ERRORS_ADVICE}"
                )
            self.report = report.model_copy(
                update={
                    "warnings": tuple(self.warnings),
                    "advice": tuple(self.advice),
                    "notes": tuple(self.handshake_notes()),
                    "reason": reason,
                }
            )
            # The verdict's words name the cause of what was not judged, which the reason says.
            self.report = self.report.model_copy(update={"verdict_text": verdict_text(self.report)})
            if self.report.verdict == "NOT JUDGED" and session.exitstatus != pytest.ExitCode.INTERRUPTED:
                # The same exit code as a run that could not judge from the start: never pytest's 0 or
                # 1, which would say the implementation passed or failed.
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
        else:
            return
        self.report = redacted(self.report)
        if self.report_dir is not None:
            try:
                write_report_files(self.report, self.report_dir)
            except OutputNotWrittenError as exc:
                # Nowhere to put the verdict is no verdict: NOT JUDGED (pytest's usage error, the CLI's
                # 2), said in one line; the earlier report.json and junit.xml are left as they were.
                self.output_error = exc
                if session.exitstatus != pytest.ExitCode.INTERRUPTED:
                    session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _judged_report(self) -> Report:
        return build_report(
            self.results.values(),
            self.environment(),
            requirement_order=_requirement_order(),
            unselected_spec=self.unselected_spec,
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        if self.report.scenarios:  # none: the run stopped before them, and pytest printed why
            terminalreporter.section("rag-retrieval-quality-score conformance")
            for line in format_table(self.report).splitlines():
                terminalreporter.write_line(line)
            for line in self._property_counts():
                terminalreporter.write_line(line)
            hint = self._replay_hint()
            if hint:
                terminalreporter.write_line(hint)
            if (
                self.config.get_verbosity() > -2 and self.interruption is None
            ):  # say what pytest's line counts
                terminalreporter.write_line(
                    f"(the table counts {self.report.summary.total} scenarios; pytest's line below counts "
                    f"its {len(self.results)} test items: each outline example is one)"
                )
        elif self.report.interruption is not None:
            terminalreporter.write_line(f"INTERRUPTED: {self.report.reason}", yellow=True)
        for text in self.report.notes:
            terminalreporter.write_line(f"note: {text}")
        for text in self.report.advice:
            terminalreporter.write_line(f"advice: {text}", cyan=True)
        for text in self.report.warnings[:_WARNINGS_SHOWN]:
            terminalreporter.write_line(f"warning: {text}", yellow=True)
        if len(self.report.warnings) > _WARNINGS_SHOWN:
            more = len(self.report.warnings) - _WARNINGS_SHOWN
            terminalreporter.write_line(f"warning: {more} more in report.json", yellow=True)
        if self.output_error is not None:  # last, under the table: that verdict could not be kept
            terminalreporter.write_line(f"NOT JUDGED: {self.output_error}", red=True)
        elif self.report_dir is not None:
            terminalreporter.write_line(f"report: {self.report_dir / 'report.json'}")

    def _property_counts(self) -> list[str]:
        assert self.report is not None
        stats = bool(self.config.getoption("hypothesis_show_statistics", default=False))
        return property_lines(self.report.scenarios, self._properties, statistics_asked=stats)

    def _replay_hint(self) -> str | None:
        assert self.report is not None
        keyword = self.config.getoption("keyword", default=None)
        return replay_hint(self.report, self._properties, self.options, keyword)


def _show_controls(report: pytest.TestReport) -> None:
    """What pytest prints of a broken scenario (-v, --tb: the traceback, captured stderr) holds the
    implementation's words: a control character in them is shown as its escape, never obeyed."""
    if report.failed and report.longrepr is not None and not isinstance(report.longrepr, tuple):
        text = str(report.longrepr)
        shown = visible_text(text)
        if shown != text:  # untouched otherwise: pytest keeps its own formatting
            report.longrepr = shown
    report.sections = [(title, visible_text(content)) for title, content in report.sections]


def _requirement_order() -> list[str]:
    """Requirement titles in the pinned spec's order, so the table reads like the spec."""
    from ..spec._pinned import read_spec

    try:
        return [r.title for r in read_spec(spec_path()).requirements]
    except (OSError, ConformanceError):
        return []


def _names(item: pytest.Item) -> tuple[str, str]:
    """(Feature name, Scenario name) of a pytest-bdd item, the way pytest-bdd itself finds them."""
    obj = getattr(item, "obj", None)
    try:
        from pytest_bdd.scenario import scenario_wrapper_template_registry

        template = scenario_wrapper_template_registry.get(obj)  # type: ignore[arg-type]
    except (ImportError, TypeError):
        template = None
    if template is not None:
        return template.feature.name, template.name
    feature, _, scenario = (getattr(obj, "__doc__", None) or ": ").partition(": ")
    return feature, scenario


def _marker_arg(item: pytest.Item, name: str) -> str | None:
    marker = item.get_closest_marker(name)
    return str(marker.args[0]) if marker and marker.args else None
