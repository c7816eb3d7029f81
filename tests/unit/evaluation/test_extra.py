"""The statistics stack is an extra: a command that needs it names the one command that installs it."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

import evaluation
from evaluation import _extra

ROOT = Path(__file__).resolve().parents[3]


def test_nothing_is_missing_where_the_test_extra_is_installed() -> None:
    assert evaluation.missing_statistics() == []
    evaluation.require_statistics("rag-conformance upgrade")  # raises nothing


def test_a_missing_module_is_named_with_the_command_that_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def without_scipy(name: str, *args: object) -> object:
        return None if name in ("scipy", "tqdm") else real(name, *args)

    monkeypatch.setattr(_extra.importlib.util, "find_spec", without_scipy)
    with pytest.raises(evaluation.StatisticsUnavailableError) as info:
        evaluation.require_statistics("rag-conformance upgrade")
    message = str(info.value)
    assert message.startswith("rag-conformance upgrade needs the evaluation's statistics stack")
    assert "scipy, tqdm are not installed" in message
    assert "pip install 'rag-quality-conformance[evaluation]'" in message
    assert isinstance(info.value, evaluation.EvaluationError)


def test_the_extra_holds_the_stack_the_bare_kit_does_not_and_test_installs_it_too() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {dist for dist in evaluation.STATISTICS_MODULES.values()}

    def bare(requirements: list[str]) -> set[str]:
        return {r.split(";")[0].split(">")[0].split("<")[0].split("=")[0].strip() for r in requirements}

    assert names <= bare(project["optional-dependencies"]["evaluation"])
    assert names <= bare(project["optional-dependencies"]["test"])
    assert not names & bare(project["dependencies"])


def test_without_tqdm_a_bar_is_silent_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluation import _progress

    real = importlib.util.find_spec
    monkeypatch.setattr(
        _progress.importlib.util, "find_spec", lambda n, *a: None if n == "tqdm" else real(n, *a)
    )
    _progress._bar_class.cache_clear()
    try:
        with evaluation.progress_bar("ingest", 3) as bar:
            bar.update(2)
            bar.set_postfix_str("dense")
            assert (bar.n, bar.total, bar.disable) == (2, 3, True)
    finally:
        _progress._bar_class.cache_clear()
