"""The layering contracts bite: the project keeps them, and one upward import breaks them.

``lint-imports`` itself runs in CI (``.ci/run``); this shows the contracts are not vacuous.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
    for name in ("conformance", "reference", "benchmarks"):
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


def _sections(output: str) -> dict[str, str]:
    """lint-imports' report of each broken contract, by the contract's name."""
    parts = re.split(r"\n(.+)\n-+\n", "\n" + output.split("Broken contracts", 1)[-1])
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _add_import(root: Path, module: str, imported: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = root / module.replace(".", "/") / "__init__.py"
    path.write_text(path.read_text() + f"\nimport {imported}  # noqa: E402, F401\n")


# The retries the review made on a copy (issue 34): each reached the reference through its adapter and all
# four contracts of the time were still kept.
REACHES = [
    "conformance.judging._oracle",
    "conformance.scenarios.steps.lookup",
    "conformance.corpus._scenario_corpus",
]


def test_a_judge_layer_reaching_the_reference_adapter_breaks_a_contract(copy: Path) -> None:
    for module in REACHES:
        _add_import(copy, module, "conformance.adapters.reference")
    result = _lint(copy)
    assert result.returncode != 0
    broken = _sections(result.stdout)
    section = broken["Only the adapter registry and the commands reach the reference adapter"]
    for module in REACHES:
        assert f"{module} -> conformance.adapters.reference" in section, result.stdout


def _independence_contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return [c for c in config["contracts"] if c.get("allow_indirect_imports") is True]


def test_every_layers_may_import_contract_breaks_on_a_forbidden_import(copy: Path) -> None:
    contracts = _independence_contracts()
    assert len(contracts) >= 3  # judging, corpus, adapters at least: what docs/architecture.md claims
    for contract in contracts:
        (source,) = contract["source_modules"]
        _add_import(copy, source, contract["forbidden_modules"][0])
    result = _lint(copy)
    assert result.returncode != 0
    broken = _sections(result.stdout)
    for contract in contracts:
        (source,) = contract["source_modules"]
        forbidden = contract["forbidden_modules"][0]
        assert f"{source} is not allowed to import {forbidden}" in broken.get(contract["name"], ""), (
            f"{contract['name']} was not broken by {source} importing {forbidden}:\n{result.stdout}"
        )


def test_a_reference_module_importing_one_above_it_breaks_its_layers(copy: Path) -> None:
    _add_import(copy, "reference._models", "reference.store")
    result = _lint(copy)
    assert "reference._models is not allowed to import reference.store" in _sections(result.stdout).get(
        "The reference's layers, top to bottom", ""
    ), result.stdout
