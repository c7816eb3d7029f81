"""Third parties pip install the kit: the wheel must carry the features and the pinned spec and run
from any directory, without a checkout."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("rag_quality_conformance-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with only the wheel installed; its dependencies are borrowed from this environment
    through a path line (which, unlike a site dir, does not activate this checkout's editable install)."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    target = Path(
        subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        .decode()
        .strip()
    )
    (target / "borrowed-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        check=True,
        timeout=300,
    )
    return env_dir


def test_wheel_ships_features_and_spec(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "conformance/_features/spec/rag-retrieval-quality-score.md" in names
    assert any(n.startswith("conformance/_features/") and n.endswith(".feature") for n in names)
    assert "conformance/_suite/pytest.ini" in names
    assert not any(n.startswith(("tests/", "features/")) for n in names), "tests and raw features stay out"


def test_installed_kit_runs_from_an_empty_directory(installed: Path, tmp_path: Path) -> None:
    work = tmp_path / "empty"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    probe = subprocess.run(
        [installed / "bin" / "python", "-c", "import conformance, reference; print(conformance.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(installed) in probe.stdout, f"the wheel's code must run, not the checkout: {probe.stdout}"
    run = subprocess.run(
        [installed / "bin" / "rag-conformance", "run", "--report", "out"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    report = json.loads((work / "out" / "report.json").read_text())
    assert report["verdict"] == "CONFORMS"
    assert report["summary"]["passed"] >= 12
    assert (work / "out" / "junit.xml").is_file()
    coverage = subprocess.run(
        [installed / "bin" / "rag-conformance", "coverage"], cwd=work, env=env, capture_output=True, text=True
    )
    assert coverage.returncode == 0, coverage.stdout + coverage.stderr
