"""``rag-conformance engines`` hands each column's engine address to its run in the environment, never
in argv, which every local user's ``ps`` shows (issue 53.3). No process is started: the call is caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.boundary._credentials import ENGINE_ADDRESS_ENV
from conformance.boundary._errors import ConformanceError
from conformance.commands import _engines
from conformance.upgrade import _suite_runs

ADDRESS = "uri:http://alice:S8cretHotel@127.0.0.1:19530?token=S9cretIndia"


def test_the_address_travels_in_the_childs_environment_not_its_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    class Child:
        def __init__(self, command: list[str], **options: Any) -> None:
            seen.update(command=command, env=options.get("env"))

        def wait(self, timeout: float | None = None) -> int:
            return 2  # no report written: the column says why

    monkeypatch.setattr(_suite_runs.subprocess, "Popen", Child)
    column = _engines.EngineColumn(ADDRESS, milvus=ADDRESS)
    with pytest.raises(ConformanceError, match="no report"):
        _suite_runs._run_suite(column, tmp_path / "col", "reference")
    argv = " ".join(seen["command"])
    assert "S8cretHotel" not in argv
    assert "S9cretIndia" not in argv
    assert "--milvus" not in seen["command"]
    assert seen["env"][ENGINE_ADDRESS_ENV] == ADDRESS


def test_the_child_reads_the_address_from_its_environment_and_keeps_it_from_its_own_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: dict[str, Any] = {}

    class Outcome:
        exit_code = 0

    def run_conformance(adapter: str, **options: Any) -> Outcome:
        asked.update(options, adapter=adapter, still_set=ENGINE_ADDRESS_ENV in _engines.os.environ)
        return Outcome()

    monkeypatch.setattr("conformance.commands._runner.run_conformance", run_conformance)
    monkeypatch.setenv(ENGINE_ADDRESS_ENV, ADDRESS)
    assert _engines._child(["--adapter", "reference", "--report", str(tmp_path)]) == 0
    assert asked["milvus"] == ADDRESS
    assert asked["still_set"] is False  # popped: the run's own children never inherit it


def test_the_child_without_the_variable_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENGINE_ADDRESS_ENV, raising=False)
    with pytest.raises(SystemExit):
        _engines._child(["--adapter", "reference", "--report", str(tmp_path)])
