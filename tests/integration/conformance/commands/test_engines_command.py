"""``rag-conformance engines`` logic on the default engine only (the other engines install from PyPI
and are run by hand, see the README): one report per engine, the table, and columns that say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.commands._cli import main
from conformance.commands._engines import expand_engines, format_engine_matrix, run_matrix
from conformance.engines import engine_label


def test_local_expands_to_the_three_engines_here() -> None:
    assert expand_engines(["local", "lite", "uri:http://x:1"]) == [
        "lite",
        "lite-2.5.1",
        "milvus-2.3.5",
        "uri:http://x:1",
    ]


def test_all_expands_to_every_engine_line_once() -> None:
    expanded = expand_engines(["all", "lite-2.4.12"])
    assert expanded[0] == "lite"
    assert {"lite-2.4.12", "lite-3.2.2", "milvus-2.2.16", "milvus-2.3.5"} <= set(expanded)
    assert len(expanded) == len(set(expanded))


def test_credentials_never_reach_the_table() -> None:
    assert "secret" not in engine_label("uri:http://user:secret@host:19530")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    out = tmp_path_factory.mktemp("matrix")
    columns = run_matrix(["lite", "nonsense-engine", "uri:http://127.0.0.1:9"], report_dir=out)
    return out, columns


def test_the_default_engine_gets_a_report_and_a_column(matrix: tuple[Path, list]) -> None:
    out, columns = matrix
    lite = columns[0]
    assert lite.report is not None, lite.not_run
    assert (out / "lite" / "report.json").is_file()
    assert lite.version.startswith("milvus_lite-")
    ids = {s.id for s in lite.report.scenarios}
    assert "engine-bm25-best-match-first" in ids  # engine checks run too
    assert any(not s.engine_check for s in lite.report.scenarios)  # and the implementation's


def test_engines_that_cannot_run_keep_their_column_with_the_reason(matrix: tuple[Path, list]) -> None:
    out, columns = matrix
    _, bogus, unreachable = columns
    assert bogus.report is None
    assert "unknown backend 'nonsense-engine'" in bogus.not_run
    assert unreachable.report is None
    assert "127.0.0.1:9" in unreachable.not_run
    text = format_engine_matrix(columns)
    header = text.splitlines()[0]
    assert all(name in header for name in ("lite", "nonsense-engine", "uri:http://127.0.0.1:9"))
    assert "engine-behaviour" in text
    assert "nonsense-engine: not run: " in text
    summary = json.loads((out / "matrix.json").read_text())
    assert [c["engine"] for c in summary] == ["lite", "nonsense-engine", "uri:http://127.0.0.1:9"]
    assert summary[1]["not_run"]


def test_cli_prints_the_table_and_fails_when_an_engine_did_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An engine that did not run judged nothing: 2 (docs/exit-codes.md), never the 1 of a verdict.
    assert main(["engines", "--engine", "nonsense-engine", "--report-dir", str(tmp_path)]) == 2
    out = capsys.readouterr().out
    assert "NOT RUN" in out
    assert "nonsense-engine: not run: " in out
