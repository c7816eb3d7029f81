"""The layering contracts bite: the project keeps them, and one upward import breaks them.

``lint-imports`` itself runs in CI (``.ci/run``); this shows the contracts are not vacuous.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(
    not LINT.exists(), reason="import-linter is not installed (the test extra has it)"
)


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        check=False,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for name in ("conformance", "reference"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_project_keeps_its_layers(copy: Path) -> None:
    result = _lint(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_judges_layers(copy: Path) -> None:
    protocol = copy / "conformance" / "boundary" / "_protocol.py"
    protocol.write_text(protocol.read_text() + "\nfrom ..judging import _judge  # noqa: E402, F401\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "conformance.boundary is not allowed to import conformance.judging" in result.stdout


def test_the_reference_importing_the_kit_breaks_a_door(copy: Path) -> None:
    models = copy / "reference" / "_models.py"
    models.write_text(models.read_text() + "\nimport conformance  # noqa: E402, F401\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "The reference never imports the kit BROKEN" in result.stdout
