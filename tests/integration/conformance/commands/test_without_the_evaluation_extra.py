"""A kit installed without the ``evaluation`` extra (no SciPy, ir-measures, pytrec-eval-terrier, tqdm,
wordllama): ``rag-conformance run`` runs, and ``upgrade`` names the extra and exits 2 before it starts
anything. The stack is hidden from a child interpreter by an import hook, as if never installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BLOCK = """
import importlib.abc, sys
HIDDEN = {"scipy", "ir_measures", "pytrec_eval", "tqdm", "wordllama"}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Hide())
import importlib.util
_find = importlib.util.find_spec
importlib.util.find_spec = lambda n, *a: None if n.split(".")[0] in HIDDEN else _find(n, *a)
from conformance.commands._cli import main
sys.exit(main(sys.argv[1:]))
"""


def _kit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK, *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_run_needs_none_of_the_statistics_stack(tmp_path: Path) -> None:
    result = _kit("run", "-k", "dense-mode-labels-hits-as-dense", "--report", str(tmp_path))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert (tmp_path / "report.json").is_file()


def test_upgrade_names_the_extra_and_starts_nothing(tmp_path: Path) -> None:
    result = _kit("upgrade", "--from", "lite", "--to", "lite", "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pip install 'rag-quality-conformance[evaluation]'" in result.stderr
    assert "scipy" in result.stderr
    assert not (tmp_path / "out").exists()
