"""``rag-conformance``: a thin command line over the library API."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _run(args: argparse.Namespace) -> int:
    from ._runner import run_conformance

    if args.adapter_cmd:
        args.adapter = f"cmd:{args.adapter_cmd}"
    outcome = run_conformance(
        args.adapter,
        milvus=args.milvus,
        report_dir=args.report,
        select=args.select,
        pytest_args=args.pytest_args,
        adapter_timeout=args.adapter_timeout,
        validate=args.validate,
    )
    if outcome.report is None:
        print(
            "rag-conformance: the run produced no scenario results (pytest exit code "
            f"{outcome.pytest_exit_code}); see the output above",
            file=sys.stderr,
        )
    else:
        print(f"verdict: {outcome.report.verdict} ({args.adapter}); report in {args.report}")
    return outcome.exit_code


def _coverage(args: argparse.Namespace) -> int:
    from ._coverage import coverage_main

    return coverage_main(args.spec)


def _schema(args: argparse.Namespace) -> int:
    import json

    from .stdio import protocol_schemas, write_schemas

    if args.out is None:
        print(json.dumps(protocol_schemas(), indent=2, sort_keys=True))
        return 0
    for path in write_schemas(args.out):
        print(path)
    return 0


def _smoke(args: argparse.Namespace) -> int:
    from .stdio._smoke import smoke

    return smoke(args.adapter_cmd, timeout=args.adapter_timeout, milvus=args.milvus)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-conformance",
        description="Conformance kit for the rag-retrieval-quality-score spec on Milvus.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run every scenario against an implementation")
    run.add_argument(
        "--adapter", default="reference", help="'reference' (default), an entry-point name or 'module:attr'"
    )
    run.add_argument("--milvus", default="lite", help="lite (default) | uri:<uri> | container[:image]")
    run.add_argument("--report", default="rqs-report", help="directory for report.json and junit.xml")
    run.add_argument(
        "-k", dest="select", default=None, help="only scenarios matching this pytest -k expression"
    )
    run.add_argument("pytest_args", nargs="*", help="extra pytest arguments, after --")
    run.add_argument(
        "--adapter-cmd",
        default=None,
        metavar="CMD",
        help="judge a program in any language speaking the stdio protocol, e.g. 'node impl.js'",
    )
    run.add_argument(
        "--adapter-timeout", type=float, default=30.0, help="seconds per call to a stdio program (30)"
    )
    run.add_argument("--validate", action="store_true", help="check every stdio message both ways, strictly")
    run.set_defaults(func=_run)

    schema = sub.add_parser("schema", help="JSON Schema of the stdio protocol, generated from the models")
    schema.add_argument("--out", default=None, help="write one file per message kind into this directory")
    schema.set_defaults(func=_schema)

    smoke = sub.add_parser(
        "smoke", help="check that a stdio program speaks the protocol: handshake and one call per capability"
    )
    smoke.add_argument("--adapter-cmd", required=True, metavar="CMD", help="the program, e.g. 'node impl.js'")
    smoke.add_argument("--adapter-timeout", type=float, default=30.0, help="seconds per call (30)")
    smoke.add_argument(
        "--milvus", default="lite", help="engine for search/lookup: lite (default) | uri:<uri>"
    )
    smoke.set_defaults(func=_smoke)

    coverage = sub.add_parser("coverage", help="check that every spec scenario has a Gherkin scenario")
    coverage.add_argument("--spec", default=None, help="another version of the spec to check against")
    coverage.set_defaults(func=_coverage)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("rag-conformance: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
