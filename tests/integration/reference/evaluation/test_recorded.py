"""The recorded report in docs/evaluation/: its ranking table is what ir_measures computes from its files.

The test runs the very command the report prints, in the report's folder, on the run and qrels files
recorded beside it, and compares every cell of the ranking table.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

RECORDED = Path(__file__).resolve().parents[4] / "docs" / "evaluation"


def _ranking_table(report: str) -> tuple[list[str], dict[str, list[str]]]:
    section = report.split("## Ranking", 1)[1].split("###", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("|")
    ]
    header, body = rows[0], rows[2:]
    return header, {r[0]: r for r in body}


def _command(report: str) -> list[str]:
    found = re.search(r"`(ir_measures [^`]+)`", report)
    assert found, "the report names no ir_measures command"
    return [sys.executable, "-m", *shlex.split(found.group(1))]


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_the_recorded_ranking_table_is_what_ir_measures_computes_from_the_recorded_files(mode: str) -> None:
    report = (RECORDED / "evaluation.md").read_text(encoding="utf-8")
    header, rows = _ranking_table(report)
    assert header[:2] == ["mode", "queries"]
    assert header[2:] == ["R@1", "nDCG@1", "R@5", "nDCG@5", "R@10", "nDCG@10", "RR"]
    command = [part.replace("dense.run", f"{mode}.run") for part in _command(report)]
    done = subprocess.run(
        [*command, "--places", "12"], cwd=RECORDED, capture_output=True, text=True, timeout=120, check=True
    )
    figures = dict(line.split("\t") for line in done.stdout.splitlines())
    assert list(figures) == header[2:]
    assert [f"{float(figures[name]):.3f}" for name in header[2:]] == rows[mode][2:]
    judged = {line.split()[0] for line in (RECORDED / "qrels.txt").read_text().splitlines()}
    assert rows[mode][1] == str(len(judged))  # the table's queries are the qrels' queries
