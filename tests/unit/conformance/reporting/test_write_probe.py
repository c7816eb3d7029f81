"""The output directory is tried before any work, not only read from its permission bits: root may write
anywhere by the bits, but not into /proc."""

from __future__ import annotations

from pathlib import Path

from conformance.reporting._writing import output_dir_problem


def test_a_directory_nothing_can_be_written_to_is_a_problem_whoever_runs() -> None:
    problem = output_dir_problem("/proc/rqs-report", ["report.json"])
    assert problem is not None
    assert "/proc/rqs-report cannot be written" in problem


def test_a_writable_directory_is_fine_and_the_try_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert output_dir_problem(target, ["report.json"]) is None
    assert not (tmp_path / "a").exists()  # the folders it made to try are gone
    tmp_path.joinpath("kept").mkdir()
    assert output_dir_problem(tmp_path / "kept") is None
    assert list((tmp_path / "kept").iterdir()) == []
