"""``rag-conformance upgrade --from ENGINE --to ENGINE``: is moving from one Milvus to another safe?

On each engine, for one implementation (the reference, ``--adapter`` or ``--adapter-cmd``):

1. the conformance suite with the engine checks (``rag-conformance engines``' run, one child process
   per engine), compared by scenario id (``rag-conformance diff``'s comparison): run here, on the
   commands' floor;
2. the labelled set through the implementation's ``lookup`` in both modes, with the same vectors and
   settings on both engines, both engines up at once where they can be; that is also the latency sample;
3. the comparison with paired tests over queries, the verdict and the reports.

Steps 2 and 3 are the check's own folder, :mod:`conformance.upgrade`, on the evaluation package.

Exit 0: nothing regresses beyond the tolerances; 1: something does (the report says what); 2: the
check could not judge (an engine could not start, a suite run was NOT JUDGED, bad input, a report
file that could not be written). Writes ``upgrade.md``, ``upgrade.html``, ``upgrade.json`` (with
every query's values, keyed by id), ``latency.csv``, the plots, and ``runs/``: the TREC run of each
engine and mode, and the qrels, for anyone's own tools; all at once, atomically. What it prints is
redacted and its control characters made visible; the last line is the verdict, naming every part
not compared.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .. import upgrade
from ..boundary._atomic import OutputNotWrittenError
from ..boundary._errors import ConformanceError
from ..boundary._redact import redact
from ..boundary._visible import visible_text
from ..engines import engine_label
from ..upgrade import SuiteChanges, UpgradeResult
from ._diff import diff_reports, load_report_data
from ._engines import run_matrix

__all__ = ["run_upgrade", "upgrade_main"]


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


def _suite(
    old: str,
    new: str,
    adapter: str,
    out: Path,
    select: str | None,
    stream: IO[str],
    done: Callable[[], object],
) -> SuiteChanges:
    columns = []
    # Hypothesis keeps a storage folder (about 260 files for the whole suite) under each report
    # directory; the upgrade's folder is for its reports, so the suite's runs keep theirs elsewhere.
    with (
        tempfile.TemporaryDirectory(prefix="rqs-upgrade-hypothesis-") as scratch,
        _environ(HYPOTHESIS_STORAGE_DIRECTORY=scratch),
    ):
        for side, engine in (("old", old), ("new", new)):
            # One run_matrix per side: the same engine twice must run twice, in two report dirs.
            columns += run_matrix(
                [engine], report_dir=out / "suite" / side, adapter=adapter, output=stream, select=select
            )
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


def run_upgrade(
    old: str,
    new: str,
    *,
    adapter: str = "reference",
    suite: bool = True,
    select: str | None = None,
    output: IO[str] | None = None,
    **options: Any,
) -> tuple[UpgradeResult, list[Path]]:
    """:func:`conformance.upgrade.run_upgrade` with the suite run here, unless ``suite`` is false."""

    def run_suite(out: Path, stream: IO[str], done: Callable[[], object]) -> SuiteChanges:
        return _suite(old, new, adapter, out, select, stream, done)

    return upgrade.run_upgrade(
        old, new, adapter=adapter, suite=run_suite if suite else None, output=output, **options
    )


def upgrade_main(args: Any) -> int:
    """The command line's ``upgrade``: print the verdict and what it rests on; return the exit code."""
    adapter = f"cmd:{args.adapter_cmd}" if args.adapter_cmd else args.adapter or "reference"
    if args.beir and args.eval:
        print(
            "rag-conformance upgrade: --eval (the bundled set) and --beir DIR exclude each other",
            file=sys.stderr,
        )
        return 2
    try:
        result, written = run_upgrade(
            args.old,
            args.new,
            adapter=adapter,
            beir=args.beir,
            split=args.split,
            limit=args.limit,
            settings=args.settings,
            out=args.out,
            suite=not args.no_suite,
            select=args.select,
            seed=args.seed,
            progress=not args.no_progress,
            plots=not args.no_plots,
        )
    except ConformanceError as exc:
        print(visible_text(redact(f"rag-conformance upgrade: {exc}"), one_line=True), file=sys.stderr)
        if isinstance(exc, OutputNotWrittenError):
            print("verdict: NOT JUDGED (the report could not be written); exit code 2")
        return 2
    for line in _summary(result, written):
        # Names, ids and messages come from the engines and the implementation: shown, never obeyed.
        print(visible_text(redact(line), one_line=True))
    return result.exit_code


def _n(value: float | None, spec: str) -> str:
    return "-" if value is None or value != value else format(value, spec)


def _summary(result: UpgradeResult, written: list[Path]) -> list[str]:
    """What the terminal shows: regressions, what was not compared, the headline numbers, the files,
    and the one-line verdict, which names every part not compared (a CI log often shows only it)."""
    lines = [f"regression: {line}" for line in result.regressions]
    lines += [f"not compared: {line}" for line in result.not_compared]
    lines += [f"warning: {line}" for line in result.warnings]
    for row in result.metrics:
        if row.metric in ("nDCG@10", "RR"):
            t = row.test
            lines.append(
                f"{row.mode:>6} {row.metric:<8} {_n(t.old_mean, '.3f')} -> {_n(t.new_mean, '.3f')} "
                f"({_n(t.delta, '+.3f')}, 95% CI {_n(t.ci_low, '+.3f')}..{_n(t.ci_high, '+.3f')}, "
                f"q {_n(t.q_value, '.3f')})"
            )
    for lat in result.latency:
        # Each ratio beside the two numbers it divides (with twins: the faster new, the slower old).
        names = ("p50", "p95", "p99") if lat.ratio_p99 is not None else ("p50", "p95")
        shown = [f"{name} {lat.pair_text(name)}" for name in names]
        lines.append(
            f"{lat.mode:>6} latency {', '.join(shown) or '-'}{'' if lat.interleaved else ', not interleaved'}"
        )
    lines.append(f"wrote {', '.join(str(p) for p in written[:3])} and {len(written) - 3} more")
    verdict = (
        f"verdict: {result.verdict} (old {result.old} -> new {result.new}); exit code {result.exit_code}"
    )
    if result.not_compared:
        verdict += f"; not compared: {len(result.not_compared)} ({'; '.join(result.not_compared)})"
    if result.verdict == "SAFE" and result.sensitivity:
        verdict += f"; SAFE {'; '.join(result.sensitivity)}"
    return [*lines, verdict]
