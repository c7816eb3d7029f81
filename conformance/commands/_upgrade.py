"""``rag-conformance upgrade --from ENGINE --to ENGINE``: is moving from one Milvus to another safe?

On each engine, for one implementation (the reference, ``--adapter`` or ``--adapter-cmd``):

1. the conformance suite with the engine checks (one child process per engine, as ``rag-conformance
   engines`` runs it), compared by scenario id (the reports' comparison, as ``rag-conformance diff``);
2. the labelled set through the implementation's ``lookup`` in both modes, with the same vectors and
   settings on both engines, both engines up at once where they can be; that is also the latency sample;
3. the comparison with paired tests over queries, the verdict and the reports.

All of it is the check's own folder, :mod:`conformance.upgrade` (one call, :func:`~conformance.upgrade.
run_upgrade`), on the evaluation package; with ``--in-place``, first the new engine on the old one's
data (:func:`~conformance.upgrade.check_in_place`). This module holds the command's options and prints
the result; building the parser imports none of the check.

Exit 0: nothing regresses beyond the tolerances; 1: something does (the report says what); 2: the
check could not judge (an engine could not start, a suite run was NOT JUDGED, bad input, a report
file that could not be written). Writes ``upgrade.md``, ``upgrade.html``, ``upgrade.json`` (with
every query's values, keyed by id), ``latency.csv``, the plots, and ``runs/``: the TREC run of each
engine and mode, and the qrels, for anyone's own tools; all at once, atomically. What it prints is
redacted and its control characters made visible; the last line is the verdict, naming every part
not compared.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..boundary._errors import ConformanceError
from ..boundary._redact import redact
from ..boundary._visible import visible_text
from ..engines._address import ENGINE_HELP
from ..options import command_line, seed_value

if TYPE_CHECKING:
    from ..upgrade import InPlaceResult, UpgradeResult

__all__ = ["add_upgrade_parser", "upgrade_main"]


def add_upgrade_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], handler: Callable[[argparse.Namespace], int]
) -> None:
    """Add ``upgrade`` and its options to the CLI's subcommands; ``handler`` runs it."""
    upgrade = sub.add_parser(
        "upgrade",
        help="before a Milvus upgrade: suite, engine checks, retrieval quality and latency, old against new",
        description="Run the suite with the engine checks, the labelled set in both modes and a latency "
        "sample on both engines, and compare them with paired tests over queries (docs/upgrade-check.md).",
        epilog="exit codes: 0 nothing regresses beyond the tolerances; 1 something does (listed), or, "
        "with --in-place, the new engine cannot open the old one's data (CANNOT OPEN) or answers "
        "differently; "
        "2 the check could not judge (an engine could not start, a suite run was NOT JUDGED, bad input, "
        "a report file that could not be written: the earlier report is kept)",
    )
    upgrade.add_argument(
        "--from", dest="old", required=True, metavar="ENGINE", help=f"today's engine: {ENGINE_HELP}"
    )
    upgrade.add_argument(
        "--to", dest="new", required=True, metavar="ENGINE", help="the candidate engine, named as --from"
    )
    target = upgrade.add_mutually_exclusive_group()
    target.add_argument("--adapter", default=None, help="the implementation (default: reference)")
    target.add_argument(
        "--adapter-cmd", default=None, metavar="CMD", type=command_line, help="a stdio program instead"
    )
    upgrade.add_argument("--eval", action="store_true", help="the bundled labelled set (the default)")
    upgrade.add_argument("--beir", default=None, metavar="DIR", help="a labelled set in the BEIR layout")
    upgrade.add_argument("--split", default="test", help="the BEIR qrels split (test)")
    upgrade.add_argument("--limit", type=int, default=None, help="only N queries, in turn from each kind")
    upgrade.add_argument(
        "--settings", default=None, help="TOML with [rag] lookup settings, [upgrade] tolerances"
    )
    upgrade.add_argument("--out", default="rqs-upgrade", help="directory for the reports (rqs-upgrade)")
    upgrade.add_argument("--no-suite", action="store_true", help="compare retrieval only, not the suite")
    upgrade.add_argument("-k", dest="select", default=None, help="only the suite's scenarios matching this")
    upgrade.add_argument(
        "--seed", type=seed_value, default=0, help="seed of the query order and resampling (0)"
    )
    upgrade.add_argument(
        "--in-place",
        action="store_true",
        help="first, the new engine started on the data the old one wrote (a Lite file, a server's data "
        "dir): does it open, are collections, rows and indexes there, is every query's answer unchanged",
    )
    upgrade.add_argument(
        "--in-place-only", action="store_true", help="--in-place, and not the comparison on fresh engines"
    )
    upgrade.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="with --in-place: the old engine's existing data dir to start from (copied first)",
    )
    upgrade.add_argument(
        "--write-in-place",
        action="store_true",
        help="with --data-dir: work on DIR itself, not on a copy (the new engine then writes there)",
    )
    upgrade.add_argument(
        "--open-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --in-place: how long the new engine may take to open the data (default: its startup "
        "budget); not answering by then is CANNOT OPEN",
    )
    upgrade.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    upgrade.add_argument("--no-plots", action="store_true", help="no PNG plots (no matplotlib needed)")
    upgrade.set_defaults(func=handler)


def _in_place(args: Any, adapter: str) -> InPlaceResult:
    """``--in-place``: the new engine on the old engine's data; its lines printed, its JSON written."""
    from .. import upgrade
    from ..boundary._atomic import OutputNotWrittenError, write_atomically

    result = upgrade.check_in_place(
        args.old,
        args.new,
        upgrade.load_labelled_set(args.beir, split=args.split, limit=args.limit),
        upgrade.load_upgrade_settings(args.settings).rag,
        adapter=adapter,
        data_dir=args.data_dir,
        write_in_place=args.write_in_place,
        open_timeout=args.open_timeout,
    )
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotWrittenError(out, exc.errno, exc.strerror or str(exc)) from exc
    write_atomically(out / upgrade.IN_PLACE_FILE, result.model_dump_json(indent=2) + "\n")
    for line in result.lines():
        print(visible_text(redact(line), one_line=True))
    return result


def upgrade_main(args: Any) -> int:
    """The command line's ``upgrade``: print the verdict and what it rests on; return the exit code."""
    adapter = f"cmd:{args.adapter_cmd}" if args.adapter_cmd else args.adapter or "reference"
    from evaluation import StatisticsUnavailableError, require_statistics

    try:
        require_statistics("rag-conformance upgrade")
    except StatisticsUnavailableError as exc:
        print(f"rag-conformance upgrade: {exc}", file=sys.stderr)
        return 2
    if args.beir and args.eval:
        print(
            "rag-conformance upgrade: --eval (the bundled set) and --beir DIR exclude each other",
            file=sys.stderr,
        )
        return 2
    in_place = None
    if args.in_place or args.in_place_only:
        try:
            in_place = _in_place(args, adapter)
        except ConformanceError as exc:
            print(visible_text(redact(f"rag-conformance upgrade: {exc}"), one_line=True), file=sys.stderr)
            return 2
        if args.in_place_only or in_place.verdict == "CANNOT OPEN":
            return in_place.exit_code  # what runs on fresh engines cannot change that the data is lost
    elif args.data_dir or args.write_in_place or args.open_timeout is not None:
        print(
            "rag-conformance upgrade: --data-dir, --write-in-place and --open-timeout go with --in-place",
            file=sys.stderr,
        )
        return 2
    from .. import upgrade
    from ..boundary._atomic import OutputNotWrittenError

    try:
        result, written = upgrade.run_upgrade(
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
    if in_place is not None and in_place.exit_code:
        print(visible_text(redact(in_place.lines()[-1]), one_line=True))  # the last line a CI log shows
        return max(result.exit_code, in_place.exit_code)
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
