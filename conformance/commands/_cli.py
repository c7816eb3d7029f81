"""``rag-conformance``: a thin command line over the library API."""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Sequence
from typing import NoReturn

from ._upgrade import add_upgrade_parser

__all__ = ["main"]


EXIT_CODES = """\
exit codes:
  0  conforms: every applicable scenario passed
  1  does not conform: a scenario failed, or errored on the implementation's reply or crash
  2  could not judge (verdict NOT JUDGED): the adapter could not be loaded, describe or the stdio
     handshake failed, Milvus could not be started or reached (whatever -k selected), Milvus was lost
     midway or stopped answering (a call past its deadline, RQS_ENGINE_CALL_SECONDS x the load: 30 s
     idle), the engine answered the kit's own calls or the implementation's with errors (retried
     once), a report file could not be written (full disk: the earlier one is kept), or the command
     line was wrong (every command: docs/exit-codes.md)
  130, 143, 129  interrupted (verdict INTERRUPTED, not judged): SIGINT (Ctrl-C) gives 130, SIGTERM
     143 (a cancelled CI job), SIGHUP 129 (a closed terminal); report.json and junit.xml keep what
     finished, and when and where it stopped
"""


def _output_dir_problem(path: str | None, option: str, files: Sequence[str] = ()) -> int | None:
    """Exit 2 at once, in one line, when an output directory cannot be written (before any engine)."""
    from ..reporting._writing import output_dir_problem

    problem = output_dir_problem(path, files) if path else None
    if problem is None:
        return None
    print(
        f"rag-conformance: {problem}; pass another {option} (nothing was run). Exit code 2", file=sys.stderr
    )
    return 2


def _run(args: argparse.Namespace) -> int:
    from ..options import RunOptions
    from ..reporting._writing import REPORT_FILES
    from ._runner import run_options

    refused = _output_dir_problem(args.report, "--report", REPORT_FILES)
    if refused is not None:
        return refused
    options = RunOptions.from_namespace(args)
    adapter = options.adapter_address
    outcome = run_options(
        options, select=args.select, pytest_args=args.pytest_args, verbose=args.verbose, tb=args.tb
    )
    code = outcome.exit_code
    if outcome.output_error is not None and code == 2:
        failed = outcome.output_error
        name = errno.errorcode.get(failed.errno or 0, "no errno")
        print(f"verdict: NOT JUDGED [{adapter}]: {failed.path} not written ({name}, above); exit code 2")
    elif outcome.report is None and args.select and outcome.pytest_exit_code == 5:  # pytest: none selected
        print(
            f"rag-conformance: -k {args.select!r} selects no scenario; -k takes a scenario id as the report "
            "and the table show it (dense-quality-from-l2), words of the test's name (legacy_aliases), or "
            f"an expression of them (a or b, not c). Exit code {code}",
            file=sys.stderr,
        )
    elif outcome.report is None:
        print(
            f"rag-conformance: no scenario ran (pytest exit code {outcome.pytest_exit_code}), so nothing "
            f"was judged; see the message above. Exit code {code}",
            file=sys.stderr,
        )
    else:
        report = outcome.report
        why = ""
        if report.interruption is not None:
            why = f": stopped by {report.interruption.signal}, nothing judged"
        elif report.verdict == "NOT JUDGED" and report.summary.not_judged:
            why = f": {report.summary.not_judged} scenarios not judged, why in the NOT JUDGED line above"
        # The last line a user reads says what was judged too: a bare CONFORMS would overstate a partial run.
        verdict = report.described_verdict()
        print(f"verdict: {verdict} [{adapter}]{why}; report in {args.report}; exit code {code}")
    return code


def _clean(args: argparse.Namespace) -> int:
    if args.engine_cache:
        from ._clean_cache import clean_engine_cache

        return clean_engine_cache(yes=args.yes, alone=not (args.milvus or args.prefix or args.force))
    from ._clean import clean

    return clean(args.milvus, yes=args.yes, prefix=args.prefix, force=args.force)


def _build_image(args: argparse.Namespace) -> int:
    from ..boundary._errors import ConformanceError
    from ..engines._image import build_image

    try:
        built = build_image(args.engine, base=args.base, tag=args.tag)
    except ConformanceError as exc:
        print(f"rag-conformance build-image: {exc}", file=sys.stderr)
        return 2
    print(built.tag)
    return 0


def _coverage(args: argparse.Namespace) -> int:
    from ..boundary._visible import visible_text
    from ._coverage import coverage_main, spec_problem

    problem = spec_problem(args.spec) if args.spec is not None else None
    if problem is not None:
        print(
            visible_text(f"rag-conformance coverage: {problem}; pass the spec's text file. Exit code 2"),
            file=sys.stderr,
        )
        return 2
    return coverage_main(args.spec)


def _schema(args: argparse.Namespace) -> int:
    import json

    from ..stdio import protocol_schemas, write_schemas

    if args.out is None:
        print(json.dumps(protocol_schemas(), indent=2, sort_keys=True))
        return 0
    refused = _output_dir_problem(args.out, "--out")
    if refused is not None:
        return refused
    try:
        written = write_schemas(args.out)
    except OSError as exc:  # a full disk midway, a file where a schema goes: one line, never a traceback
        where = exc.filename or args.out
        print(
            f"rag-conformance schema: NOT WRITTEN: {where}: {exc.strerror or exc}; pass another --out "
            "(or free space). Exit code 2",
            file=sys.stderr,
        )
        return 2
    for path in written:
        print(path)
    return 0


def _smoke(args: argparse.Namespace) -> int:
    from ._smoke import smoke

    return smoke(args.adapter_cmd, timeout=args.adapter_timeout, milvus=args.milvus)


def _selftest(args: argparse.Namespace) -> int:
    from ._selftest import selftest_main

    return selftest_main(
        miniatures=args.miniatures,
        matrix=args.matrix,
        milvus=args.milvus,
        seed=args.seed,
        profile=args.profile,
        jobs=args.jobs,
    )


def _engines(args: argparse.Namespace) -> int:
    from ._engines import DEFAULT_ENGINES, format_engine_matrix, matrix_exit_code, run_matrix

    refused = _output_dir_problem(args.report_dir, "--report-dir")
    if refused is not None:
        return refused
    columns = run_matrix(
        args.engine or DEFAULT_ENGINES, report_dir=args.report_dir, adapter=args.adapter, select=args.select
    )
    print(format_engine_matrix(columns))
    return matrix_exit_code(columns)


def _diff(args: argparse.Namespace) -> int:
    from ..boundary._errors import ConformanceError
    from ..boundary._visible import visible_text
    from ..reporting import UNJUDGED_VERDICTS
    from ._diff import diff_reports, format_diff, load_report_data

    try:
        diff = diff_reports(load_report_data(args.old), load_report_data(args.new))
    except ConformanceError as exc:
        print(f"rag-conformance diff: {exc}", file=sys.stderr)
        return 2
    # The reports' ids and messages are the implementations' words (an older kit kept them raw): shown.
    print(visible_text(format_diff(diff, old_label=args.old, new_label=args.new)))
    if diff.new_verdict in UNJUDGED_VERDICTS:
        # Every scenario looks "removed", which is no regression: but nothing was judged, and a CI
        # gate on this diff must not pass an implementation the kit could not even load.
        print(
            f"rag-conformance diff: {args.new} is {diff.new_verdict}: the kit did not judge that run",
            file=sys.stderr,
        )
        return 2
    return 1 if diff.regressed else 0


def _upgrade(args: argparse.Namespace) -> int:
    refused = _output_dir_problem(args.out, "--out")
    if refused is not None:
        return refused
    from ._upgrade import upgrade_main

    return upgrade_main(args)


def _docs(args: argparse.Namespace) -> int:
    from ..site import docs_main

    refused = _output_dir_problem(args.out, "--out")
    if refused is not None:
        return refused
    return docs_main(args.results, args.out, spec=args.spec)


class _Parser(argparse.ArgumentParser):
    """A wrong command line is one line (what is wrong, where the options are listed) and exit 2,
    before anything runs; not argparse's usage block, which a CI log shows as several."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the options). Exit code 2\n")


def build_parser() -> argparse.ArgumentParser:
    from ..engines._address import ENGINE_HELP  # the one engine vocabulary; starts nothing
    from ..engines._lines import MATRIX_LINES
    from ..options import (  # pydantic, no pytest plugin: cheap
        PROFILES,
        add_cli_options,
        command_line,
        count_at_least_one,
        seconds_above_zero,
        seed_value,
    )

    parser = _Parser(
        prog="rag-conformance",
        description="Conformance kit for the rag-retrieval-quality-score spec on Milvus.",
        epilog=f"{EXIT_CODES}(for run; the other commands say in their --help what they return)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run",
        help="run every scenario against an implementation",
        description="Judge an implementation: every applicable scenario of the spec, a table per "
        "requirement, report.json and junit.xml. Quiet by default: -v or --tb add tracebacks.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # The run's options are RunOptions' fields (their flags and help written there); pytest's own follow.
    add_cli_options(run, engines=ENGINE_HELP)
    run.add_argument(
        "-k",
        dest="select",
        default=None,
        help="only the scenarios matching this pytest -k expression: scenario ids as the report shows them "
        "(-k dense-quality-from-l2) or words of their test names (-k legacy_aliases)",
    )
    run.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    run.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="pytest's verbose output with tracebacks (--tb short unless --tb says otherwise)",
    )
    run.add_argument(
        "--tb",
        default=None,
        choices=("auto", "long", "short", "line", "native", "no"),
        help="traceback style, as pytest's --tb (default: no tracebacks; short with -v)",
    )
    run.set_defaults(func=_run)

    schema = sub.add_parser("schema", help="JSON Schema of the stdio protocol, generated from the models")
    schema.add_argument("--out", default=None, help="write one file per message kind into this directory")
    schema.set_defaults(func=_schema)

    smoke = sub.add_parser(
        "smoke", help="check that a stdio program speaks the protocol: handshake and one call per capability"
    )
    smoke.add_argument(
        "--adapter-cmd",
        required=True,
        metavar="CMD",
        type=command_line,
        help="the program, e.g. 'node impl.js' (split as a shell line is, run without a shell)",
    )
    smoke.add_argument(
        "--adapter-timeout", type=seconds_above_zero, default=30.0, help="seconds per call (30)"
    )
    smoke.add_argument(
        "--milvus", default="lite", help=f"engine for search/lookup (default lite): {ENGINE_HELP}"
    )
    smoke.set_defaults(func=_smoke)

    coverage = sub.add_parser("coverage", help="check that every spec scenario has a Gherkin scenario")
    coverage.add_argument("--spec", default=None, help="another version of the spec to check against")
    coverage.set_defaults(func=_coverage)

    selftest = sub.add_parser(
        "selftest", help="run the kit against its miniatures and check the mutation matrix (from a checkout)"
    )
    selftest.add_argument(
        "--miniatures",
        default="tests.miniatures",
        help="package of miniatures (default: tests.miniatures; importable from a source checkout's root)",
    )
    selftest.add_argument("--matrix", default=None, help="matrix file (default: matrix.toml in that package)")
    selftest.add_argument(
        "--milvus", default="lite", help=f"one engine for all runs (default lite): {ENGINE_HELP}"
    )
    selftest.add_argument(
        "--seed", type=seed_value, default=None, help="Hypothesis seed of every run (default: random)"
    )
    selftest.add_argument(
        "--profile",
        default="selftest",
        choices=PROFILES,
        help="property examples: selftest (default; ci's count, no shrinking), ci, thorough",
    )
    selftest.add_argument(
        "--jobs",
        type=count_at_least_one,
        default=None,
        help="miniatures run in parallel processes (1 or more; default: one per usable core, at most 8)",
    )
    selftest.set_defaults(func=_selftest)

    engines = sub.add_parser(
        "engines",
        help="run the engine checks and every scenario on each Milvus engine available here",
        description="Run the engine checks and every scenario on each engine, one child run each; "
        "matrix.json and one report per engine. Exit 0 every engine conforms, 1 a scenario failed or "
        "errored on one, 2 an engine could not be judged (not started, not reached, lost, NOT JUDGED), "
        "128 + the signal when stopped (docs/exit-codes.md).",
    )
    engines.add_argument(
        "--engine",
        action="append",
        default=None,
        help=f"local (the default: lite and {', '.join(MATRIX_LINES)}) | all (lite and every line below) | "
        f"{ENGINE_HELP}; repeatable",
    )
    engines.add_argument("--report-dir", default="rqs-engines", help="one report dir per engine in here")
    engines.add_argument("--adapter", default="reference", help="the implementation run on every engine")
    engines.add_argument("-k", dest="select", default=None, help="only the scenarios matching this, on each")
    engines.set_defaults(func=_engines)

    clean = sub.add_parser(
        "clean",
        help="remove the containers of kit runs that are gone; with --milvus, list instead the "
        "collections killed runs left on an engine (rqs_<run id>_... only), --yes drops them",
    )
    clean.add_argument(
        "--milvus",
        default=None,
        help="list the kit's collections on this engine instead (a uri: or a lite:<dir> one holds them): "
        f"{ENGINE_HELP}",
    )
    clean.add_argument(
        "--yes", action="store_true", help="drop them, except those of a run still going (its lease)"
    )
    clean.add_argument(
        "--force", action="store_true", help="with --yes: drop a live run's too (it ends NOT JUDGED)"
    )
    clean.add_argument(
        "--prefix", default=None, help="only the collections of this run prefix (rqs_<run id>_)"
    )
    clean.add_argument(
        "--engine-cache",
        action="store_true",
        help="instead, list the engines the kit downloaded ($RQS_ENGINE_CACHE) and the Docker images "
        "build-image made; --yes removes them (nothing the kit did not make)",
    )
    clean.set_defaults(func=_clean)

    image = sub.add_parser(
        "build-image",
        help="build a real Milvus server image here, from the project's files (no registry needed)",
        description="Build the image `--milvus container:<image>` runs: Milvus 2.3.5 standalone (the "
        "PyPI package milvus) on a Debian root file system made with debootstrap, behind "
        "testcontainers' MilvusContainer contract. Cached: rebuilt only when its inputs change. Prints "
        "the image's name. Exit 0 built or up to date, 2 it could not be built (why, and what to do).",
    )
    image.add_argument("--engine", default="milvus-2.3.5", choices=("milvus-2.3.5",), help="the server")
    image.add_argument(
        "--base", default=None, help="build on this image (python3 and python3-venv) instead of debootstrap"
    )
    image.add_argument("--tag", default=None, help="the image's name (default rag-conformance/milvus:2.3.5)")
    image.set_defaults(func=_build_image)

    diff = sub.add_parser("diff", help="compare two reports by scenario id; exit 1 if something newly fails")
    diff.add_argument("old", help="the earlier report.json (or its directory)")
    diff.add_argument("new", help="the later report.json (or its directory)")
    diff.set_defaults(func=_diff)

    add_upgrade_parser(sub, _upgrade)

    docs = sub.add_parser(
        "docs", help="write a static site (HTML, Markdown, badges): spec text, scenarios, results per report"
    )
    docs.add_argument(
        "--results",
        action="append",
        required=True,
        metavar="REPORT",
        help="a report.json (or its directory); repeat for one column per implementation or engine",
    )
    docs.add_argument("--out", required=True, help="directory to write the site into")
    docs.add_argument("--spec", default=None, help="spec text to show (default: the pinned spec)")
    docs.set_defaults(func=_docs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        hint = ""
        if any(arg.startswith("--rqs-") for arg in unknown):
            hint = (
                "; the kit's pytest options have their own names here (--rqs-seed is --seed, "
                "--rqs-profile is --profile), and other pytest options go after --"
            )
        parser.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")  # exits 2
    # Every line this process prints passes through the one redaction: no engine credential reaches
    # the terminal or a CI log, whichever part of the kit (or of pytest, or pymilvus) printed it.
    from ..engines._option import speaking_as_cli
    from ._exits import run_command

    # An engine's message names --milvus while the command runs, not pytest's --rqs-milvus.
    with speaking_as_cli():
        return run_command(args.command, lambda: int(args.func(args)))


if __name__ == "__main__":
    raise SystemExit(main())
