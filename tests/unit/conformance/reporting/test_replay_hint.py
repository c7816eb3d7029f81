"""The replay command a broken property prints uses only options `rag-conformance run --help` lists."""

from __future__ import annotations

import shlex
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.commands._cli import build_parser
from conformance.options import RunOptions
from conformance.reporting import Environment, ScenarioResult, build_report
from conformance.reporting._outcomes import OutcomeCollector

BROKEN = ScenarioResult(
    id="for-any-label-score-rank",
    requirement="single-normalizer",
    requirement_id="single-normalizer",
    name="property",
    status="failed",
)
ENV = Environment(kit_version="0", spec_sha256=None, python="3.11", platform="linux")


def _hint(keyword: str | None = None, **options: Any) -> str:
    config = SimpleNamespace(
        stash={}, getoption=lambda name, default=None: keyword if name == "keyword" else default
    )
    collector = OutcomeCollector(config, RunOptions(seed=7, **options))  # type: ignore[arg-type]
    collector.report = build_report([BROKEN], ENV)
    collector._properties.add(BROKEN.id)
    hint = collector._replay_hint()
    assert hint is not None
    return hint.removeprefix("replay the property scenarios: ").partition(" (in pytest: ")[0]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # The runner hands pytest a stdio program as --rqs-adapter cmd:...; the CLI spells it --adapter-cmd.
        ({"adapter": "cmd:java -jar impl.jar"}, ["--adapter-cmd", "java -jar impl.jar"]),
        ({"adapter_cmd": "node impl.js", "adapter_timeout": 5.0}, ["--adapter-timeout", "5.0"]),
        ({"adapter_cmd": "node impl.js", "strict_stdout": True}, ["--strict-stdout"]),
        ({"adapter": "pkg.mod:Impl", "keyword": "dense-quality-from-l2"}, ["-k", "dense-quality-from-l2"]),
        ({"milvus": "uri:http://u:Secr3tpw@host:19530"}, ["--milvus"]),
    ],
)
def test_the_replay_command_parses_as_rag_conformance_run(
    options: dict[str, Any], expected: list[str]
) -> None:
    program, *args = shlex.split(_hint(**options))
    assert program == "rag-conformance"
    parsed = build_parser().parse_args(args)  # exits on an option run --help does not list
    assert parsed.command == "run"
    assert parsed.seed == 7
    assert all(word in args for word in expected), args
    assert not any(a.startswith("--adapter") and "cmd:" in a for a in args)
    assert "cmd:" not in (parsed.adapter or "")
    assert "Secr3tpw" not in " ".join(args)  # the replay line is printed: it never carries a password
