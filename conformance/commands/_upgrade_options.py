"""The ``upgrade`` subcommand's options, apart from the CLI's other subcommands (``_cli`` had grown past
450 lines). Building the parser stays cheap: the check itself is imported only when it runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..engines._address import ENGINE_HELP
from ..reporting._options import command_line, seed_value

__all__ = ["add_upgrade_parser"]


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
    upgrade.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    upgrade.add_argument("--no-plots", action="store_true", help="no PNG plots (no matplotlib needed)")
    upgrade.set_defaults(func=handler)
