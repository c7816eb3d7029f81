"""Third parties pip install the kit: the wheel must carry the features and the pinned spec and run
from any directory, without a checkout. And a newcomer with a checkout and only Python: the README's
two quick-start commands, run as written in a fresh copy."""

from __future__ import annotations

import json
import os
import re
import shutil
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
    # The full run is the README test's job (below); this one proves the wheel's suite loads (every
    # feature is collected and bound) and judges, on an engine scenario and two pure ones.
    selection = "legacy_aliases_canonicalize_label_api or dense_quality_from_l2 or mode_dense_still_callable"
    run = subprocess.run(
        [installed / "bin" / "rag-conformance", "run", "--report", "out", "-k", selection],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    report = json.loads((work / "out" / "report.json").read_text())
    assert report["verdict"] == "CONFORMS"
    assert report["summary"]["passed"] == 3, report["summary"]
    assert report["environment"]["milvus"], "the engine scenario ran on Milvus Lite"
    assert (work / "out" / "junit.xml").is_file()
    coverage = subprocess.run(
        [installed / "bin" / "rag-conformance", "coverage"], cwd=work, env=env, capture_output=True, text=True
    )
    assert coverage.returncode == 0, coverage.stdout + coverage.stderr


# What a fresh checkout holds: no environment, caches or earlier reports.
_NOT_IN_A_CHECKOUT = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache", ".mypy_cache",
    ".hypothesis", "node_modules", "rqs-report", "rqs-engines", "build", "dist", "*.db",
)  # fmt: skip


def test_the_readme_quick_start_is_two_commands_that_work_in_a_fresh_copy(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme[
        readme.index("## Quick start") : readme.index("\n## ", readme.index("## Quick start"))
    ]
    commands = [
        line
        for block in re.findall(r"^```console\n(.*?)^```$", quick_start, re.MULTILINE | re.DOTALL)
        for line in block.splitlines()
        if line.strip()
    ]
    assert len(commands) == 2, commands
    checkout = tmp_path / "rag-quality-conformance"
    shutil.copytree(ROOT, checkout, ignore=_NOT_IN_A_CHECKOUT)
    # Only Python on the PATH: not this test's virtual environment. pip finds its packages as
    # configured on this machine (its cache, an index or a wheel directory).
    here = str(Path(sys.executable).parent)
    path = [str(Path(sys._base_executable).parent)] + [
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != here
    ]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS", "RQS_PROFILE")
    }
    env["PATH"] = os.pathsep.join(path)
    first = subprocess.run(
        ["bash", "-c", commands[0]], cwd=checkout, env=env, capture_output=True, text=True, timeout=1800
    )
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-4000:]
    assert "verdict: CONFORMS" in first.stdout
    report = json.loads((checkout / "rqs-report" / "report.json").read_text())
    assert report["verdict"] == "CONFORMS"
    assert report["summary"]["passed"] >= 12
    assert report["summary"]["failed"] == report["summary"]["errored"] == 0
    # The second command runs the whole suite, this test included: here, one test file of it is
    # enough to show that pytest runs from the fresh environment with the kit's plugin.
    env["PYTEST_ADDOPTS"] = "tests/reference/test_labels.py -p no:cacheprovider"
    second = subprocess.run(
        ["bash", "-c", commands[1]], cwd=checkout, env=env, capture_output=True, text=True, timeout=900
    )
    assert second.returncode == 0, second.stdout[-4000:] + second.stderr[-4000:]
    assert re.search(r"\d+ passed", second.stdout), second.stdout[-2000:]
    assert "rag-quality-conformance" in second.stdout  # the plugin, loaded from the fresh install
