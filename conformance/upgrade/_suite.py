"""The conformance suite's part of ``rag-conformance upgrade``: run on both engines, compared by id.

:func:`run_suites` runs the suite with the engine checks on each engine (one child process each,
:func:`~._suite_runs.run_column`, as ``rag-conformance engines`` does) and compares the two reports
with the reports' own comparison (:func:`conformance.reporting._diff.diff_reports`, the library half
of ``rag-conformance diff``); what the gate reads of that is :class:`SuiteChanges`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict

from ..engines import engine_label
from ..reporting._diff import diff_reports, load_report_data
from ._suite_runs import run_column

__all__ = ["SuiteChanges", "run_suites"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class SuiteChanges(_Value):
    """The suite's changes by scenario id, or why the suites were not compared."""

    compared: bool
    why_not: str | None = None
    old_verdict: str | None = None
    new_verdict: str | None = None
    newly_failing: list[dict[str, Any]] = []
    newly_passing: list[dict[str, Any]] = []
    newly_not_applicable: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []

    @classmethod
    def from_diff(cls, diff: Any, old_messages: dict[str, str | None]) -> SuiteChanges:
        """The diff's groups; each row with both engines' messages (why it failed, or was not applicable)."""

        def rows(changes: Sequence[Any]) -> list[dict[str, Any]]:
            return [
                {
                    "id": c.id,
                    "old": c.old,
                    "new": c.new,
                    "message": c.message,
                    "old_message": old_messages.get(c.id),
                }
                for c in changes
            ]

        return cls(
            compared=True,
            old_verdict=diff.old_verdict,
            new_verdict=diff.new_verdict,
            newly_failing=rows(diff.newly_failing)
            + rows([c for c in diff.added if c.new in ("failed", "errored")]),
            newly_passing=rows(diff.newly_passing),
            newly_not_applicable=rows(diff.newly_not_applicable),
            other=rows(diff.other) + rows(diff.removed),
        )


@contextmanager
def _environ(**values: str) -> Iterator[None]:
    """``os.environ`` with ``values`` for the child processes started inside, as it was after."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_suites(
    old: str,
    new: str,
    *,
    adapter: str,
    out: Path,
    select: str | None,
    stream: IO[str],
    done: Callable[[], object],
) -> SuiteChanges:
    """The suite on ``old`` then ``new`` (reports in ``out/suite/old`` and ``out/suite/new``), compared.

    ``done`` is called once per engine whose run has finished. A run without a report, or NOT JUDGED,
    leaves the suites not compared, saying why.
    """
    columns = []
    # Hypothesis keeps a storage folder (about 260 files for the whole suite) under each report
    # directory; the upgrade's folder is for its reports, so the suite's runs keep theirs elsewhere.
    with (
        tempfile.TemporaryDirectory(prefix="rqs-upgrade-hypothesis-") as scratch,
        _environ(HYPOTHESIS_STORAGE_DIRECTORY=scratch),
    ):
        for side, engine in (("old", old), ("new", new)):
            directory = out / "suite" / side  # the same engine twice runs twice, in two dirs
            columns.append(run_column(engine, directory, adapter=adapter, out=stream, select=select))
            done()
    problems = []
    for column in columns:
        if column.report is None:
            problems.append(f"{engine_label(column.engine)}: not run: {column.not_run}")
        elif column.report.verdict == "NOT JUDGED":
            problems.append(
                f"{engine_label(column.engine)}: the kit could not judge the run ({column.report_path})"
            )
    if problems:
        return SuiteChanges(compared=False, why_not="NOT JUDGED: " + "; ".join(problems))
    before, after = (c.report_path for c in columns)
    assert before is not None
    assert after is not None
    old_data = load_report_data(before)
    diff = diff_reports(old_data, load_report_data(after))
    return SuiteChanges.from_diff(diff, {s["id"]: s.get("message") for s in old_data["scenarios"]})
