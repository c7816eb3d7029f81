"""docs/exit-codes.md, cell by cell, for the cells that need no engine and no child: the command line's
one rule (2 for infrastructure and bad input, 128 + the signal for SIGINT, SIGTERM and SIGHUP, each named
as itself) for every command. The cells that need a real engine or a real signal are in
tests/integration/conformance/commands/test_frozen_engine.py."""

from __future__ import annotations

import errno
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from conformance.boundary._signals import Interrupted
from conformance.commands import _cli
from conformance.commands._engines import EngineColumn, matrix_exit_code
from conformance.reporting import Report

ROOT = Path(__file__).resolve().parents[4]
PAGE = ROOT / "docs" / "exit-codes.md"

# Each command, the function the command line calls for it, and arguments it parses with.
COMMANDS: dict[str, tuple[str, list[str]]] = {
    "run": ("_run", []),
    "engines": ("_engines", []),
    "upgrade": ("_upgrade", ["--from", "lite", "--to", "lite"]),
    "smoke": ("_smoke", ["--adapter-cmd", "prog"]),
    "selftest": ("_selftest", []),
    "coverage": ("_coverage", []),
    "schema": ("_schema", []),
    "diff": ("_diff", ["old.json", "new.json"]),
    "clean": ("_clean", []),
    "build-image": ("_build_image", []),
    "docs": ("_docs", ["--results", "r.json", "--out", "site"]),
}
SIGNALS = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


def _table_rows() -> dict[str, list[str]]:
    rows = {}
    for line in PAGE.read_text().splitlines():
        found = re.match(r"\| `([a-z-]+)` \|(.*)\|$", line)
        if found:
            rows[found[1]] = [cell.strip() for cell in found[2].split("|")]
    return rows


def test_the_table_lists_every_command_of_the_command_line_with_every_outcome() -> None:
    parser = _cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    rows = _table_rows()
    assert set(rows) == set(commands) == set(COMMANDS)
    assert all(len(cells) == 4 for cells in rows.values())  # 0, 1, 2, 130 / 143 / 129


@pytest.mark.parametrize("name", list(SIGNALS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_signal_is_128_plus_its_number_named_as_itself_for_every_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, name: str
) -> None:
    signum = getattr(signal, name)

    def stopped(_args: Any) -> int:
        raise Interrupted(signum)

    function, args = COMMANDS[command]
    monkeypatch.setattr(_cli, function, stopped)
    assert _cli.main([command, *args]) == SIGNALS[name]
    said = capsys.readouterr().err
    assert f"rag-conformance {command}: interrupted ({name}). Exit code {SIGNALS[name]}" in said


def _column(verdict: str | None, failed: int = 0) -> EngineColumn:
    column = EngineColumn("lite")
    if verdict is None:
        column.not_run = "cannot connect"
        return column
    column.report = Report.model_construct(verdict=verdict, summary=_Summary(failed))
    return column


class _Summary:
    def __init__(self, failed: int) -> None:
        self.failed = failed
        self.errored = 0


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        (["CONFORMS", "CONFORMS"], 0),
        (["CONFORMS", ("DOES NOT CONFORM", 1)], 1),
        ([None], 2),  # every engine unreachable: 2, not 1
        ([("DOES NOT CONFORM", 1), None], 2),  # infrastructure wins: one engine could not be judged
        (["CONFORMS", "NOT JUDGED"], 2),
        (["INTERRUPTED"], 2),
    ],
)
def test_engines_is_2_whenever_an_engine_could_not_be_judged(verdicts: list[Any], code: int) -> None:
    columns = [_column(*v) if isinstance(v, tuple) else _column(v) for v in verdicts]
    assert matrix_exit_code(columns) == code


def test_engines_with_every_engine_unreachable_exits_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from conformance.commands import _engines

    monkeypatch.setattr(_engines, "run_matrix", lambda *a, **k: [_column(None)])
    assert _cli.main(["engines", "--report-dir", str(tmp_path / "m")]) == 2


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("a-directory", "is a directory, not the spec's text file"),
        ("binary.bin", "is not UTF-8 text"),
        ("nul.txt", "holds NUL bytes"),
        ("missing.md", "no such file"),
    ],
)
def test_coverage_with_a_spec_that_is_no_text_file_is_one_line_and_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, says: str
) -> None:
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "binary.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    (tmp_path / "nul.txt").write_bytes(b"Feature: x\x00\n")
    assert _cli.main(["coverage", "--spec", str(tmp_path / spec)]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert err.endswith("Exit code 2\n")
    assert err.count("\n") == 1


def test_schema_into_a_file_or_an_unwritable_place_is_one_line_and_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "schemas"
    a_file.write_text("x")
    assert _cli.main(["schema", "--out", str(a_file)]) == 2
    assert _cli.main(["schema", "--out", "/proc/rqs-not-writable/schemas"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert all(line.endswith("Exit code 2") for line in err)
    assert "is a file" in err[0]
    assert "cannot be written" in err[1]
    assert not a_file.is_dir()


def test_schema_on_a_full_disk_is_one_line_and_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import conformance.stdio as stdio

    def full(out: str) -> list[Path]:
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(out) / "start.json"))

    monkeypatch.setattr(stdio, "write_schemas", full)
    assert _cli.main(["schema", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_schema_prints_and_writes_with_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli.main(["schema"]) == 0
    assert _cli.main(["schema", "--out", str(tmp_path / "s")]) == 0
    assert any((tmp_path / "s").iterdir())


def test_run_with_a_report_directory_nothing_can_be_written_to_is_2_before_any_work(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.commands import _runner

    def must_not_run(*_a: Any, **_k: Any) -> None:
        raise AssertionError("the run started although its report could not be written")

    monkeypatch.setattr(_runner, "run_options", must_not_run)
    assert _cli.main(["run", "--report", "/proc/rqs-report"]) == 2  # root writes anywhere, not in /proc
    err = capsys.readouterr().err
    assert "/proc/rqs-report cannot be written" in err
    assert "nothing was run" in err
    assert err.count("\n") == 1
