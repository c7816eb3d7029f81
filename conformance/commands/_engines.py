"""``rag-conformance engines``: the engine-behaviour checks and the whole suite on every engine here.

Each engine gets one run of every scenario (``checks="all"``) against one adapter (the reference by
default), in a child process of its own, so that one engine's crash or hang cannot take the others
down and no pytest state leaks between runs. Each run writes its report to ``<report dir>/<engine>/``.
The result is a table of requirement x engine verdicts; an engine that could not be installed,
started or run keeps its column, saying why. One engine's run is
:func:`conformance.upgrade._suite_runs.run_column` (the upgrade check runs its two sides with it too);
the child process it starts is this module's ``python -m`` entry point.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from ..boundary._atomic import OutputNotWrittenError, write_atomically
from ..boundary._credentials import ENGINE_ADDRESS_ENV
from ..boundary._redact import register_environment_secrets, register_uri_secrets
from ..engines._address import engine_label
from ..engines._lines import MATRIX_LINES
from ..engines._local import LOCAL_ENGINES
from ..upgrade._suite_runs import EngineColumn, engine_slug, run_column

__all__ = [
    "DEFAULT_ENGINES",
    "EngineColumn",
    "expand_engines",
    "format_engine_matrix",
    "matrix_exit_code",
    "run_matrix",
]
_slug = engine_slug  # the name the tests of CI's report dirs import

CURRENT_LITE = "lite"  # Milvus Lite 3.x of the kit's own environment
LOCAL = "local"  # shorthand for the engines the matrix runs by default
ALL = "all"  # shorthand for every engine line of this machine (conformance/engines/_lines.py)
DEFAULT_ENGINES = (LOCAL,)


def expand_engines(engines: Sequence[str]) -> list[str]:
    """``local`` -> the kit's Lite and the default lines; ``all`` -> the kit's Lite and every line
    installable here; other names pass through; duplicates dropped."""
    shorthand = {LOCAL: (CURRENT_LITE, *MATRIX_LINES), ALL: (CURRENT_LITE, *LOCAL_ENGINES)}
    out: list[str] = []
    for engine in engines:
        for name in shorthand.get(engine, (engine,)):
            if name not in out:
                out.append(name)
    return out


def run_matrix(
    engines: Sequence[str] = DEFAULT_ENGINES,
    *,
    report_dir: str | Path = "rqs-engines",
    adapter: str = "reference",
    output: IO[str] | None = None,
    select: str | None = None,
) -> list[EngineColumn]:
    """Run every scenario on each engine; return one :class:`EngineColumn` per engine, in order.

    ``select`` (a pytest ``-k`` expression) runs only the scenarios it matches, on every engine.
    """
    out = output or sys.stdout
    for engine in engines:
        register_uri_secrets(engine)  # every form of credential, hidden whole in every output
    register_environment_secrets()
    root = Path(report_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotWrittenError(root, exc.errno, exc.strerror or str(exc)) from exc
    columns = []
    for engine in expand_engines(engines):
        try:
            column = run_column(engine, root / engine_slug(engine), adapter=adapter, out=out, select=select)
        except KeyboardInterrupt as exc:
            columns.append(getattr(exc, "column", None) or EngineColumn(engine, not_run="interrupted"))
            with contextlib.suppress(OSError):  # the matrix so far: which engines ran, and where it stopped
                write_atomically(root / "matrix.json", json.dumps(_summary(columns), indent=2) + "\n")
            raise
        columns.append(column)
    write_atomically(root / "matrix.json", json.dumps(_summary(columns), indent=2) + "\n")
    return columns


def matrix_exit_code(columns: Sequence[EngineColumn]) -> int:
    """The one rule of every command: 2 when an engine could not be judged (not run, not reached, lost,
    its report NOT JUDGED or empty), whatever the others said; else 1 when a scenario failed or errored
    on one; else 0. An infrastructure failure is never read as the implementation's."""
    if any(c.report is None or c.report.judged_nothing for c in columns):
        return 2
    if any(c.report is not None and (c.report.summary.failed or c.report.summary.errored) for c in columns):
        return 1
    return 0


def _cell(column: EngineColumn, requirement_id: str) -> str:
    if column.report is None:
        return "NOT RUN"
    row = next((r for r in column.report.requirements if r.requirement_id == requirement_id), None)
    if row is None:
        return "-"
    s = row.summary
    counts = (
        (s.failed, "failed"),
        (s.errored, "errored"),
        (s.not_judged, "not judged"),
        (s.xfailed, "xfail"),
    )
    extra = [f"{n} {label}" for n, label in counts]
    extra += [f"{s.not_applicable} n/a"] if s.not_applicable and row.verdict != "NOT APPLICABLE" else []
    counted = [e for e in extra if not e.startswith("0 ")]
    return row.verdict + (f" ({', '.join(counted)})" if counted else "")


def format_engine_matrix(columns: Sequence[EngineColumn]) -> str:
    """Requirement x engine verdicts, then one line per engine that did not run, with the reason."""
    requirements: dict[str, str] = {}
    for column in columns:
        for row in column.report.requirements if column.report else ():
            requirements.setdefault(row.requirement_id, row.requirement_id)
    header = ["requirement", *(engine_label(c.engine) for c in columns)]
    versions = ["(engine version)", *(c.version or "?" for c in columns)]
    rows = [[rid, *(_cell(c, rid) for c in columns)] for rid in requirements]
    totals = ["TOTAL", *(c.report.verdict if c.report else "NOT RUN" for c in columns)]
    table = [header, versions, *rows, totals]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines = [line(header), line(versions), rule, *map(line, rows), rule, line(totals)]
    for column in columns:
        if column.report is None:
            lines.append(f"{engine_label(column.engine)}: not run: {column.not_run}")
        elif column.report_path is not None:
            lines.append(f"{engine_label(column.engine)}: {column.report_path} ({column.seconds:g} s)")
    return "\n".join(lines)


def _summary(columns: Sequence[EngineColumn]) -> list[dict[str, object]]:
    return [
        {
            "engine": engine_label(c.engine),
            "milvus": engine_label(c.milvus) if c.milvus else None,
            "version": c.version,
            "verdict": c.report.verdict if c.report else None,
            "requirements": {r.requirement_id: r.verdict for r in c.report.requirements} if c.report else {},
            "report": str(c.report_path) if c.report_path else None,
            "not_run": c.not_run,
            "seconds": c.seconds,
        }
        for c in columns
    ]


def _child(argv: Sequence[str] | None = None) -> int:
    """One engine's run, in its own process: every scenario, engine checks included."""
    import argparse

    from ._runner import run_conformance

    parser = argparse.ArgumentParser(prog="python -m conformance.commands._engines")
    parser.add_argument("--adapter", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("-k", dest="select", default=None)
    args = parser.parse_args(argv)
    milvus = os.environ.pop(ENGINE_ADDRESS_ENV, "")  # not passed on: the run's own children never see it
    if not milvus:
        parser.error(f"{ENGINE_ADDRESS_ENV} is not set: the engine address comes in the environment")
    outcome = run_conformance(
        args.adapter, milvus=milvus, report_dir=args.report, checks="all", select=args.select
    )
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(_child())
