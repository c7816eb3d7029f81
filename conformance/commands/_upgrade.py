"""``rag-conformance upgrade --from ENGINE --to ENGINE``: is moving from one Milvus to another safe?

On each engine, for one implementation (the reference, ``--adapter`` or ``--adapter-cmd``):

1. the conformance suite with the engine checks (``rag-conformance engines``' run, one child process
   per engine), compared by scenario id (``rag-conformance diff``'s comparison);
2. the labelled set through the implementation's ``lookup`` in both modes, with the same vectors and
   settings on both engines, both engines up at once where they can be (:mod:`._upgrade_eval`); that is
   also the latency sample;
3. the comparison with paired tests over queries (:mod:`._upgrade_compare`, :mod:`._upgrade_stats`).

Exit 0: nothing regresses beyond the tolerances; 1: something does (the report says what); 2: the
check could not judge (an engine could not start, a suite run was NOT JUDGED, bad input).
Writes ``upgrade.md``, ``upgrade.html``, ``upgrade.json``, the plots, and ``runs/``: the TREC run of
each engine and mode, and the qrels, for anyone's own tools.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, Any

from ..boundary._errors import ConformanceError
from ..boundary._redact import redact, register_secret, register_uri_secrets
from ..engines import parse_engine_address
from ._diff import diff_reports, load_report_data
from ._engines import label, run_matrix
from ._upgrade_compare import SuiteChanges, UpgradeResult, compare
from ._upgrade_data import LabelledSet, UpgradeInputError, bundled_set_dir, load_beir
from ._upgrade_eval import MODES, EngineEvaluation, evaluate_engines
from ._upgrade_report import write_reports
from ._upgrade_settings import load_upgrade_settings

__all__ = ["run_upgrade", "upgrade_main"]


def _suite(old: str, new: str, adapter: str, out: Path, select: str | None, stream: IO[str]) -> SuiteChanges:
    columns = []
    for side, engine in (("old", old), ("new", new)):
        # One run_matrix per side: the same engine twice must run twice, in two report dirs.
        columns += run_matrix(
            [engine], report_dir=out / "suite" / side, adapter=adapter, output=stream, select=select
        )
    problems = []
    for column in columns:
        if column.report is None:
            problems.append(f"{label(column.engine)}: not run: {column.not_run}")
        elif column.report.verdict == "NOT JUDGED":
            problems.append(f"{label(column.engine)}: the kit could not judge the run ({column.report_path})")
    if problems:
        return SuiteChanges(compared=False, why_not="NOT JUDGED: " + "; ".join(problems))
    before, after = (c.report_path for c in columns)
    assert before is not None
    assert after is not None
    old_data = load_report_data(before)
    diff = diff_reports(old_data, load_report_data(after))
    return SuiteChanges.from_diff(diff, {s["id"]: s.get("message") for s in old_data["scenarios"]})


def _write_runs(labelled: LabelledSet, evaluations: dict[str, EngineEvaluation], out: Path) -> list[Path]:
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    written = []
    qrels = runs / "qrels.txt"
    qrels.write_text(
        "".join(
            f"{q.id} 0 {key} {grade}\n" for q in labelled.queries for key, grade in sorted(q.relevant.items())
        )
    )
    written.append(qrels)
    for side, evaluation in evaluations.items():
        for mode, outcomes in evaluation.outcomes.items():
            path = runs / f"{side}-{mode}.run"
            lines = [
                f"{o.query_id} Q0 {key} {rank} {len(o.ranking) - rank + 1} {side}-{mode}\n"
                for o in outcomes
                for rank, key in enumerate(o.ranking, 1)
            ]
            path.write_text("".join(lines))
            written.append(path)
    return written


class _Progress:
    """The project's one progress bar (tqdm, on stderr, only on a terminal): queries per mode."""

    def __init__(self, total: int, enabled: bool) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=total,
            desc="upgrade: lookups",
            unit="lookup",
            file=sys.stderr,
            disable=None if enabled else True,
            dynamic_ncols=True,
        )

    def __call__(self, mode: str, count: int) -> None:
        self._bar.set_postfix_str(mode, refresh=False)
        self._bar.update(count)

    def close(self) -> None:
        self._bar.close()


def run_upgrade(
    old: str,
    new: str,
    *,
    adapter: str = "reference",
    beir: str | None = None,
    split: str = "test",
    limit: int | None = None,
    settings: str | None = None,
    out: str | Path = "rqs-upgrade",
    suite: bool = True,
    select: str | None = None,
    seed: int = 0,
    progress: bool = True,
    plots: bool = True,
    output: IO[str] | None = None,
) -> tuple[UpgradeResult, list[Path]]:
    """Run the whole check; return the result and the files written. Bad input raises before any engine."""
    stream = output or sys.stderr
    root = Path(out)
    for address in (old, new):
        register_uri_secrets(address)  # the password of a uri: engine is hidden in every page we write
        parse_engine_address(address)  # a name no command takes is bad input: stop before any engine
    register_secret(os.environ.get("MILVUS_TOKEN"))
    if limit is not None and limit < 1:
        raise UpgradeInputError(f"--limit is {limit}; give at least 1 query, or leave it out for all")
    config = load_upgrade_settings(settings)
    directory = Path(beir) if beir else bundled_set_dir()
    labelled = load_beir(directory, split=split, name=beir or "bundled set").limited(limit)
    old_label, new_label = label(old), label(new)
    if suite:
        changes = _suite(old, new, adapter, root, select, stream)
    else:
        changes = SuiteChanges(compared=False, why_not="skipped (--no-suite)")
    bar = _Progress(len(labelled.queries) * len(MODES) * 2, progress)
    try:
        first, second, interleaved = evaluate_engines(
            adapter, old, new, labelled, config.rag, seed=seed, progress=bar, output=stream
        )
    except ConformanceError as exc:
        # Either engine may be the one that failed; the message names it. Nothing was evaluated.
        first, second, interleaved = EngineEvaluation(old, failed=str(exc)), EngineEvaluation(new), False
        first.not_run = dict.fromkeys(MODES, "the evaluation could not run")
        second.not_run = dict(first.not_run)
    finally:
        bar.close()
    result = compare(
        labelled,
        first,
        second,
        changes,
        config,
        adapter=adapter,
        interleaved=interleaved,
        old_label=old_label,
        new_label=new_label,
        seed=seed,
    )
    written = _write_runs(labelled, {"old": first, "new": second}, root)
    written = write_reports(result, root, plots=plots) + written
    return result, written


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
        print(redact(f"rag-conformance upgrade: {exc}"), file=sys.stderr)
        return 2
    for line in result.regressions:
        print(redact(f"regression: {line}"))
    for line in result.not_compared:
        print(redact(f"not compared: {line}"))
    for row in result.metrics:
        if row.metric in ("nDCG@10", "RR"):
            t = row.test
            print(
                f"{row.mode:>6} {row.metric:<8} {t.old_mean:.3f} -> {t.new_mean:.3f} "
                f"({t.delta:+.3f}, 95% CI {t.ci_low:+.3f}..{t.ci_high:+.3f}, q {t.q_value:.3f})"
            )
    for lat in result.latency:
        print(
            f"{lat.mode:>6} latency p50 {lat.old_p50 * 1000:.1f} -> {lat.new_p50 * 1000:.1f} ms "
            f"({lat.ratio_p50:.2f}x{'' if lat.interleaved else ', not interleaved'})"
        )
    print(f"wrote {', '.join(str(p) for p in written[:3])} and {len(written) - 3} more")
    print(f"verdict: {result.verdict} ({result.old} -> {result.new}); exit code {result.exit_code}")
    return result.exit_code
