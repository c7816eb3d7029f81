"""The command that replays a run's broken property scenarios, printed under the terminal's table."""

from __future__ import annotations

import shlex
from collections.abc import Collection

from ..boundary._redact import redact
from ..options import RunOptions
from ._report import Report

__all__ = ["replay_hint"]


def replay_hint(
    report: Report, properties: Collection[str], options: RunOptions, keyword: str | None
) -> str | None:
    """How to replay the report's broken property scenarios (ids in ``properties``), as a command that
    works when copied; None when none broke. ``keyword`` is the run's ``-k``."""
    broken = [r for r in report.scenarios if r.id in properties and r.status in ("failed", "errored")]
    if not broken:
        return None
    # Only options `rag-conformance run --help` lists: a stdio program is --adapter-cmd there, however
    # it reached pytest (--rqs-adapter-cmd, or the runner's --rqs-adapter cmd:...).
    address = options.adapter_address
    replay = options.model_copy(
        update={
            "adapter": None if address.startswith("cmd:") or address == "reference" else address,
            "adapter_cmd": address.removeprefix("cmd:") if address.startswith("cmd:") else None,
            "report": None,
            "expectations": (),
            "profile": options.profile or "ci",
        }
    )
    command = ["rag-conformance", "run", *_cli_args(replay.pytest_args())]
    if keyword:
        command += ["-k", keyword]
    if "--seed" not in command:
        command += ["--seed", str(options.seed)]
    if "--profile" not in command:
        command += ["--profile", replay.profile or "ci"]
    return redact(
        f"replay the property scenarios: {shlex.join(command)} "
        f"(in pytest: --rqs-seed {options.seed} --rqs-profile {replay.profile})"
    )


def _cli_args(pytest_args: list[str]) -> list[str]:
    """``rag-conformance run``'s spelling of pytest's ``--rqs-*`` arguments."""
    return [arg.replace("--rqs-", "--", 1) if arg.startswith("--rqs-") else arg for arg in pytest_args]
