"""The benchmarks' import-linter contracts bite, and their documented exceptions are the only ones.

``lint-imports`` runs in CI; these show that a forbidden import breaks each benchmarks contract, on a copy
of the repository's packages, and that the benchmarks reach into the reference only where
``pyproject.toml`` says why.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LINT = Path(sys.executable).with_name("lint-imports")
BENCHMARKS = ROOT / "benchmarks"


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        check=False,
    )


def _add_import(root: Path, module: str, imported: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = root / module.replace(".", "/") / "__init__.py"
    path.write_text(path.read_text() + f"\nimport {imported}  # noqa: E402, F401\n")


@pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (the test extra has it)")
def test_a_forbidden_import_breaks_each_benchmarks_contract(tmp_path: Path) -> None:
    for name in ("conformance", "reference", "benchmarks"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    _add_import(tmp_path, "benchmarks.instruments.stats", "benchmarks.figures.postprocess")
    _add_import(tmp_path, "benchmarks.children.tiny_stdio", "conformance")
    _add_import(tmp_path, "benchmarks.figures.stdio", "reference._lookup")
    _add_import(tmp_path, "conformance.spec._paths", "benchmarks")
    result = _lint(tmp_path)
    assert result.returncode != 0
    out = result.stdout
    assert "benchmarks.instruments is not allowed to import benchmarks.figures" in out, out
    assert "benchmarks.children is not allowed to import conformance" in out, out
    assert "benchmarks.figures.stdio -> reference._lookup" in out, out
    assert "conformance is not allowed to import benchmarks" in out, out
    for name in (
        "The benchmarks' kinds, top to bottom",
        "The benchmarks use the reference's public names",
        "The kit and the reference never import the benchmarks",
    ):
        assert f"{name} BROKEN" in out, out


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def test_the_benchmarks_reach_into_the_reference_only_where_documented() -> None:
    private = {
        _module(path)
        for path in BENCHMARKS.rglob("*.py")
        if any(
            part.startswith("_")
            for m in _imports(path)
            if m.startswith("reference.")
            for part in m.split(".")
        )
    }
    assert private == {
        "benchmarks.figures.old_reference",
        "benchmarks.figures.old_reference.hits",
        "benchmarks.figures.old_reference.lookup",
        "benchmarks.figures.old_reference.postprocess",
        "benchmarks.figures.old_reference.quality",
        "benchmarks.figures.retrieval.run",
        "benchmarks.figures.retrieval.stages",
        "benchmarks.subjects.legacy",
    }


def test_the_benchmarks_never_import_the_tests() -> None:
    importing = sorted(
        _module(path)
        for path in BENCHMARKS.rglob("*.py")
        if any(m == "tests" or m.startswith("tests.") for m in _imports(path))
    )
    assert importing == []
