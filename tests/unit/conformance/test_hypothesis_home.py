"""A judging run keeps Hypothesis's storage directory out of the working directory."""

from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

from conformance.options import RunOptions
from conformance.plugin import _keep_hypothesis_out_of_cwd


def _where() -> Path:
    """Where Hypothesis would store its files (a Path, or a lazy object with .path, by version)."""
    found = storage_directory("x")
    return Path(getattr(found, "path", found))


class _Config:
    def __init__(self) -> None:
        self.stash = pytest.Stash()


@pytest.fixture(autouse=True)
def _hypothesis_home_restored(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    yield
    set_hypothesis_home_dir(None)


def test_a_run_with_a_report_keeps_it_beside_the_report(tmp_path: Path) -> None:
    _keep_hypothesis_out_of_cwd(_Config(), RunOptions(report=str(tmp_path / "out")))  # type: ignore[arg-type]
    assert _where() == (tmp_path / "out" / ".hypothesis" / "x").resolve()


def test_a_run_without_a_report_keeps_it_in_the_users_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _keep_hypothesis_out_of_cwd(_Config(), RunOptions(adapter="reference"))  # type: ignore[arg-type]
    assert _where() == (tmp_path / "cache" / "rag-conformance" / "hypothesis" / "x").resolve()


def test_a_pytest_run_that_judges_nothing_is_left_as_hypothesis_chooses(tmp_path: Path) -> None:
    before = _where()
    _keep_hypothesis_out_of_cwd(_Config(), RunOptions())  # type: ignore[arg-type]
    assert _where() == before
