"""``rag-conformance diff`` on two recorded reports (Milvus Lite 3.2.2 -> 2.5.1) and on edited copies."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.commands._cli import main
from conformance.commands._diff import DiffError, diff_reports, format_diff, load_report_data

DATA = Path(__file__).resolve().parents[3] / "data" / "recorded"
LITE3 = DATA / "lite-3.2.2.json"
LITE25 = DATA / "lite-2.5.1.json"
# What the recorded runs showed: the reference cannot create its collection on Lite 2.5.1 (nullable
# fields), and the two Lite 3.x divergences that are expected failures there pass on Lite 2.5.1.
STORE_ERRORS = {
    "dense-distance-does-not-replace-hybrid-label",
    "dense-mode-labels-hits-as-dense",
    "hybrid-mode-labels-hits-as-hybrid",
    "lookup-without-a-category-never-retries",
}


def _ids(changes: tuple[Any, ...]) -> set[str]:
    return {c.id for c in changes}


def test_upgrade_from_lite_3_to_2_5_lists_new_failures_and_new_passes() -> None:
    diff = diff_reports(load_report_data(LITE3), load_report_data(LITE25))
    assert _ids(diff.newly_failing) >= STORE_ERRORS
    assert all(c.old == "passed" and c.new == "errored" for c in diff.newly_failing)
    assert _ids(diff.newly_passing) == {
        "engine-bm25-scores-non-negative",
        "engine-rrf-k-outside-range-rejected",
    }
    assert all(c.old == "xfailed" for c in diff.newly_passing)
    assert not diff.added
    assert not diff.removed
    assert not diff.newly_not_applicable
    assert diff.regressed


def test_the_text_shows_both_fingerprints_side_by_side_and_marks_differences() -> None:
    diff = diff_reports(load_report_data(LITE3), load_report_data(LITE25))
    text = format_diff(diff, old_label="before", new_label="after")
    version_line = next(line for line in text.splitlines() if "milvus.version" in line)
    assert version_line.startswith("*")
    assert "milvus_lite-3.2.2" in version_line
    assert "milvus_lite-2.5.1" in version_line
    kit_line = next(line for line in text.splitlines() if "kit_version" in line)
    assert kit_line.startswith(" ")  # the same on both sides: not marked
    assert f"newly failing ({len(diff.newly_failing)}):" in text
    assert "  engine-bm25-scores-non-negative: xfailed -> passed" in text
    assert "StoreError in prepare" in text  # the start of the new failure's message


def test_a_report_against_itself_changes_nothing() -> None:
    data = load_report_data(LITE3)
    diff = diff_reports(data, data)
    assert not diff.regressed
    assert not any((diff.newly_failing, diff.newly_passing, diff.added, diff.removed, diff.other))


def _edited(tmp_path: Path) -> tuple[Path, Path]:
    old = load_report_data(LITE3)
    new = copy.deepcopy(old)
    scenarios = new["scenarios"]
    removed = scenarios.pop(0)
    scenarios.append({**removed, "id": "brand-new-scenario", "status": "failed", "message": "boom"})
    by_id = {s["id"]: s for s in scenarios}
    by_id["engine-upsert-replaces"]["status"] = "not_applicable"
    by_id["engine-bm25-scores-non-negative"]["status"] = "failed"
    by_id["engine-bm25-scores-non-negative"]["message"] = "expected to fail but passed (stale expectation)"
    paths = tmp_path / "old.json", tmp_path / "new.json"
    for path, data in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(data))
    return paths


def test_added_removed_not_applicable_and_stale_expectations_are_grouped(tmp_path: Path) -> None:
    old_path, new_path = _edited(tmp_path)
    diff = diff_reports(load_report_data(old_path), load_report_data(new_path))
    first = load_report_data(LITE3)["scenarios"][0]["id"]
    assert _ids(diff.removed) == {first}
    assert _ids(diff.added) == {"brand-new-scenario"}
    assert _ids(diff.newly_not_applicable) == {"engine-upsert-replaces"}
    assert _ids(diff.newly_failing) == {"engine-bm25-scores-non-negative"}  # xfailed -> failed
    assert diff.regressed


def test_only_an_added_failing_scenario_still_regresses(tmp_path: Path) -> None:
    data = load_report_data(LITE3)
    new = copy.deepcopy(data)
    new["scenarios"].append({"id": "added-and-failing", "status": "errored", "name": "x"})
    diff = diff_reports(data, new)
    assert not diff.newly_failing
    assert diff.regressed


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(LITE3), str(LITE25)]) == 1
    assert "newly failing" in capsys.readouterr().out
    assert main(["diff", str(LITE25), str(LITE3)]) == 0  # only fixes in that direction
    assert main(["diff", str(DATA), str(LITE3)]) == 2  # a directory without report.json
    assert "cannot read report" in capsys.readouterr().err
    (tmp_path / "x.json").write_text('{"scenarios": [{"id": 1}]}')
    assert main(["diff", str(tmp_path / "x.json"), str(LITE3)]) == 2
    assert "is not a conformance report" in capsys.readouterr().err


def test_an_unreadable_report_is_a_diff_error(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(DiffError, match="cannot read report"):
        load_report_data(tmp_path / "bad.json")
